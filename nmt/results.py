"""Summarize a finished recipe run into one JSON file (used by `make multi30k`).

    python -m nmt.results RUN_DIR CHECKPOINT HYPOTHESES REFERENCE OUTPUT.json [DECODE_RECIPE]

DECODE_RECIPE: the recipe given to `nmt translate --decode-from`, if the hypotheses were made so.

The file names the test scores with their sacrebleu signatures, the checkpoint translated with,
the decoding settings, how long training ran and on what, and the dev BLEU curve.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path

import torch

from nmt.config import DecodeConfig, load_recipe, recipe_from_dict
from nmt.score import score_file
from nmt.train.checkpoint import load_checkpoint
from nmt.train.metrics import read_metrics


def count_parameters(state: dict[str, torch.Tensor]) -> int:
    """Distinct parameters: tied embeddings appear under several names but count once."""
    seen, total = set(), 0
    for tensor in state.values():
        if tensor.is_floating_point() and tensor.data_ptr() not in seen:
            seen.add(tensor.data_ptr())
            total += tensor.numel()
    return total


def summarize(run_dir: Path, checkpoint: Path, hypotheses: Path, reference: Path,
              decode: DecodeConfig | None = None) -> dict:
    """`decode`: the settings the hypotheses were translated with, if not the checkpoint's."""
    last = load_checkpoint(run_dir / "checkpoints" / "last.pt")
    recipe = recipe_from_dict(last["recipe"])  # as trained, overrides included
    used = load_checkpoint(checkpoint)
    progress = last["progress"]
    log = read_metrics(run_dir / "metrics.jsonl")
    speeds = [r["tgt_tokens_per_s"] for r in log if r["kind"] == "train"]
    scores = {s["name"]: s for s in score_file(hypotheses, [reference], ["bleu", "chrf"])}
    return {
        "direction": f"{recipe.data.src_lang}-{recipe.data.tgt_lang}",
        "test_set": recipe.data.test,
        "bleu": scores["BLEU"]["score"],
        "bleu_signature": scores["BLEU"]["signature"],
        "bleu_verbose": scores["BLEU"]["verbose_score"],
        "length_ratio": scores["BLEU"]["length_ratio"],
        "chrf": scores["chrF2"]["score"],
        "chrf_signature": scores["chrF2"]["signature"],
        "checkpoint": str(checkpoint),
        "averaged_from": used.get("averaged_from"),
        "decode": (decode or recipe.decode).model_dump(mode="json"),
        "parameters": count_parameters(used["model"]),
        "training": {
            "updates": progress["step"],
            "completed_epochs": progress["epoch"],
            "minutes": round(progress.get("elapsed_seconds", 0.0) / 60, 1),
            "mean_tgt_tokens_per_s": round(sum(speeds) / len(speeds), 1) if speeds else None,
            "threads": recipe.train.threads or torch.get_num_threads(),
            "device": recipe.train.device,
        },
        "dev_bleu_greedy": [{"step": r["step"], "bleu": r["bleu"]} for r in log if r["kind"] == "valid" and "bleu" in r],
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                    "torch": torch.__version__},
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "recipe": recipe.model_dump(mode="json"),
    }


if __name__ == "__main__":
    run_dir, checkpoint, hypotheses, reference, output = map(Path, sys.argv[1:6])
    decode = load_recipe(Path(sys.argv[6])).decode if len(sys.argv) > 6 else None
    summary = summarize(run_dir, checkpoint, hypotheses, reference, decode)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"wrote {output}: BLEU {summary['bleu']:.2f} ({summary['bleu_signature']})")
