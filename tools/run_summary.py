"""Summarize finished recipe runs into one JSON file (used by `make multi30k`).

    python -m tools.run_summary RUN_DIR [RUN_DIR ...] --checkpoint CKPT --hypotheses HYP --reference REF
        [--ensemble ENSEMBLE_HYP] [--recipe DECODE_RECIPE] -o OUTPUT.json

CKPT and HYP are paths inside each RUN_DIR. DECODE_RECIPE: the recipe given to `nmt translate
--decode-from`, if the hypotheses were made so. With one run the file names the test scores
(cased and lowercased BLEU with their sacrebleu signatures, chrF, the length ratio), the checkpoint
translated with, the decoding settings, how long training ran and on what, and the dev BLEU
curve. With several runs and --ensemble it scores the ensemble's translation the same way, lists
the runs as members with the mean and range of their BLEU, and adds sacrebleu's paired bootstrap
of the ensemble against each member.
"""

from __future__ import annotations

import argparse
import os
import platform
from datetime import datetime, timezone
from pathlib import Path

import torch

from nmt.checkpoint import count_parameters, load_checkpoint
from nmt.config import DecodeConfig, load_recipe, recipe_from_dict
from nmt.score import compare_systems, score_file
from nmt.train.metrics import read_metrics
from tools.results import write_json


def summarize(run_dir: Path, checkpoint: Path, hypotheses: Path, reference: Path,
              decode: DecodeConfig | None = None) -> dict:
    """`decode`: the settings the hypotheses were translated with, if not the checkpoint's."""
    last = load_checkpoint(run_dir / "checkpoints" / "last.pt")
    recipe = recipe_from_dict(last["recipe"])  # as trained, overrides included
    used = load_checkpoint(checkpoint)
    progress = last["progress"]
    log = read_metrics(run_dir / "metrics.jsonl")
    speeds = [r["tgt_tokens_per_s"] for r in log if r["kind"] == "train"]
    return {
        "direction": f"{recipe.data.src_lang}-{recipe.data.tgt_lang}",
        "test_set": recipe.data.test,
        **score_test_set(hypotheses, reference),
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


def score_test_set(hypotheses: Path, reference: Path) -> dict:
    """Cased BLEU (sacreBLEU's default), lowercased BLEU (to set beside papers that report it),
    chrF2 and the output/reference length ratio."""
    scores = {s["name"]: s for s in score_file(hypotheses, [reference], ["bleu", "chrf"])}
    lowercased = score_file(hypotheses, [reference], ["bleu"], lowercase=True)[0]
    return {
        "bleu": scores["BLEU"]["score"],
        "bleu_signature": scores["BLEU"]["signature"],
        "bleu_verbose": scores["BLEU"]["verbose_score"],
        "length_ratio": scores["BLEU"]["length_ratio"],
        "bleu_lowercased": lowercased["score"],
        "bleu_lowercased_signature": lowercased["signature"],
        "chrf": scores["chrF2"]["score"],
        "chrf_signature": scores["chrF2"]["signature"],
    }


def summarize_ensemble(members: list[dict], ensemble_hypotheses: Path, member_hypotheses: list[Path],
                       reference: Path, decode: DecodeConfig | None = None) -> dict:
    """`members`: each run's `summarize`; the ensemble decoded with `decode` (or the first
    member's settings). Paired bootstrap takes each member in turn as the baseline."""
    bleus = [m["bleu"] for m in members]
    paired = []
    for member, hypotheses in zip(members, member_hypotheses):
        rows = compare_systems([hypotheses, ensemble_hypotheses], [reference], ["bleu"])
        paired.append({"baseline": member["checkpoint"], "baseline_bleu": rows[0]["BLEU"]["score"],
                       "ensemble_bleu": rows[1]["BLEU"]["score"], "p_value": rows[1]["BLEU"]["p_value"],
                       "signature": rows[1]["BLEU"]["signature"]})
    first = members[0]
    return {
        "direction": first["direction"],
        "test_set": first["test_set"],
        "system": f"ensemble of {len(members)} (mean of next-token probabilities)",
        **score_test_set(ensemble_hypotheses, reference),
        "decode": decode.model_dump(mode="json") if decode else first["decode"],
        "members_bleu_mean": round(sum(bleus) / len(bleus), 2),
        "members_bleu_range": [min(bleus), max(bleus)],
        "paired_bootstrap": paired,
        "members": members,
        "machine": first["machine"],
        "date": first["date"],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.run_summary", description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    parser.add_argument("--checkpoint", type=Path, required=True, help="checkpoint path inside each run")
    parser.add_argument("--hypotheses", type=Path, required=True, help="test translation inside each run")
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--ensemble", type=Path, help="the runs' ensemble translation")
    parser.add_argument("--recipe", type=Path, help="the recipe the translations were decoded with")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    if len(args.runs) > 1 and args.ensemble is None:
        parser.error("several runs are summarized together with their ensemble: add --ensemble")
    decode = load_recipe(args.recipe).decode if args.recipe else None
    members = [summarize(run, run / args.checkpoint, run / args.hypotheses, args.reference, decode)
               for run in args.runs]
    if args.ensemble is None:
        summary = members[0]
    else:
        summary = summarize_ensemble(members, args.ensemble, [run / args.hypotheses for run in args.runs],
                                     args.reference, decode)
    write_json(args.output, summary)
    print(f"wrote {args.output}: BLEU {summary['bleu']:.2f} ({summary['bleu_signature']}), "
          f"lowercased {summary['bleu_lowercased']:.2f}, length ratio {summary['length_ratio']:.3f}")
    if args.ensemble is not None:
        for pair in summary["paired_bootstrap"]:
            print(f"  ensemble {pair['ensemble_bleu']:.2f} against {pair['baseline']} {pair['baseline_bleu']:.2f}: "
                  f"p = {pair['p_value']:.4f} (paired bootstrap)")


if __name__ == "__main__":
    main()
