"""Full fine-tuning against LoRA against a frozen encoder, at the same minutes, on Multi30k's sports
pairs (the domain of finetune_domain.py).

    python -m experiments.finetuning.adaptation [--base-minutes 10] [--tune-minutes 3]

A base model is trained on the Multi30k en→de pairs without a sport in their English (the demo's
settings as finetune_domain.py sets them; reused when it is there), then fine-tuned on the
1,501-pair sports tuning half for the same minutes in three ways, each at the same peak rate:

    full             every weight trains
    lora             train.lora_rank 8 on the attention projections (alpha 16), the rest frozen
    frozen_encoder   train.freeze [encoder]: the decoder and the shared embedding train

Each model translates the 500 held-out sports pairs and test_2016_flickr (beam 4). Beside BLEU
and chrF, each run records its updates, trainable parameters, target tokens per second (the mean
of its logged windows) and peak resident memory of the training process (`/usr/bin/time`).
Results: experiments/finetuning/results/adaptation_sports.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from experiments.finetuning.finetune_domain import RECIPE, ROOT, SHORT, WORK, scores, split_corpus, training, train_run
from experiments.shared.runs import nmt_command, run_facts, sets
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
MODES = {"full": [], "lora": ["train.lora_rank=8", "train.lora_alpha=16"], "frozen_encoder": ["train.freeze=[encoder]"]}


def timed_train(settings: list[str], memory_file: Path) -> None:
    """tokenizer and prepare, then `nmt train` under /usr/bin/time, its peak resident memory to `memory_file`."""
    nmt_bin = nmt_command()
    for verb in ("tokenizer", "prepare"):
        subprocess.run([nmt_bin, verb, RECIPE, *sets(settings)], cwd=ROOT, check=True)
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(memory_file), nmt_bin, "train", RECIPE, *sets(settings),
                    "--no-progress"], cwd=ROOT, check=True)


def trainable(mode_settings: list[str]) -> dict:
    """Trainable and all parameters of the SHORT model under a mode, counted as nmt train sets it up."""
    from nmt.config import load_recipe
    from nmt.model.transformer import Transformer
    from nmt.train.freezing import adapt_with_lora, freeze

    recipe = load_recipe(ROOT / RECIPE, overrides=[*SHORT, *mode_settings])
    model = Transformer(recipe.model, recipe.tokenizer.vocab_size, recipe.tokenizer.vocab_size)
    cfg = recipe.train
    frozen, everything = (adapt_with_lora(model, cfg) if cfg.lora_rank else
                          freeze(model, cfg.freeze) if cfg.freeze else (0, sum(p.numel() for p in model.parameters())))
    return {"trainable_parameters": everything - frozen, "parameters": everything}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-minutes", type=float, default=10)
    parser.add_argument("--tune-minutes", type=float, default=3)
    parser.add_argument("--tune-lr", type=float, default=0.0005, help="the peak rate of every mode")
    args = parser.parse_args()
    report = {"split": split_corpus(), "base_minutes": args.base_minutes, "tune_minutes": args.tune_minutes,
              "tune_lr": args.tune_lr}
    base_ckpt = WORK / "base" / "checkpoints" / "last.pt"
    train_run([f"output_dir={WORK}/base", f"data.train={WORK}/general", f"train.max_minutes={args.base_minutes}", *SHORT])
    report["base"] = training(base_ckpt) | {"scores": scores(base_ckpt, "base")}
    report["modes"] = {}
    for mode, mode_settings in MODES.items():
        name = f"adapt_{mode}"
        settings = [f"output_dir={WORK}/{name}", f"data.train={WORK}/sports_tune", f"train.max_minutes={args.tune_minutes}",
                    *SHORT, f"train.lr={args.tune_lr}", "train.warmup_steps=50", "train.valid_every=100",
                    "train.valid_bleu_sentences=0", f"train.init_from={base_ckpt}", *mode_settings]
        memory = WORK / f"{name}.maxrss_kb"
        timed_train(settings, memory)
        ckpt = WORK / name / "checkpoints" / "last.pt"
        report["modes"][mode] = {"settings": mode_settings, **trainable(mode_settings), **training(ckpt),
                                 **run_facts(WORK / name),
                                 "peak_resident_memory_mb": round(int(memory.read_text().split()[-1]) / 1024),
                                 "scores": scores(ckpt, name)}
        print(json.dumps({mode: report["modes"][mode]}, indent=1), flush=True)
    write_json(RESULTS / "adaptation_sports.json", report)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
