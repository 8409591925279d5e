"""Does a model trained on packed rows (train.pack_width) learn what one trained a pair per row
learns? The demo's Multi30k settings trained for the same number of updates both ways, from the
same seeds, on this CPU.

    python -m experiments.packing.packed_vs_plain [--updates 2000] [--width 128] [--seeds 1,2]

Both runs read the demo's prepared data (runs/demo: `make demo` prepares it) through their own
output folders, with the demo's overrides (the Makefile's DEMO_SET), a fixed number of updates
and no time limit, the rate cooled down over the last 30 % of the updates as the demo's minutes
would. Plain batches are cut from neighbouring lengths (1,024 padded tokens); packed ones are
1,024 // width rows of `width` tokens filled with pairs in a random order. Recorded for each: the
dev loss (nll per token) and greedy BLEU on 300 val sentences at the last update, updates,
updates per second and the mean of the logged target tokens per second. Results: experiments/packing/results/packed_vs_plain.json.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from experiments.shared.runs import ROOT, last_validation, nmt, on_the_demos_data, sets
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
RECIPE = "recipes/multi30k_en_de.yaml"
DEMO = ["model.dropout=0.1", "tokenizer.vocab_size=8000", "train.max_tokens=1024", "train.warmup_steps=400",
        "train.cooldown=0.3", "train.valid_bleu_sentences=300", "train.max_minutes=0", "train.log_every=100"]


def train_run(name: str, updates: int, extra: list[str]) -> dict:
    out = on_the_demos_data(ROOT / "runs" / "packing" / name)
    settings = [f"output_dir={out}", *DEMO, f"train.max_steps={updates}", f"train.valid_every={updates}", *extra]
    nmt("train", RECIPE, *sets(settings), "--no-progress")
    return {"settings": extra, **last_validation(out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=2000)
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--seeds", default="1,2")
    args = parser.parse_args()
    result = {"updates": args.updates, "runs": []}
    for seed in (int(s) for s in args.seeds.split(",")):
        for name, extra in (("plain", []), ("packed", [f"train.pack_width={args.width}"])):
            result["runs"].append({"name": name, "seed": seed, **train_run(name, args.updates, [f"train.seed={seed}", *extra])})
    print(json.dumps(result, indent=1))
    write_json(RESULTS / "packed_vs_plain.json", result)


if __name__ == "__main__":
    main()
