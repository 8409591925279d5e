"""Does a model trained in bf16 learn as well with attention by matmuls (train.attention: matmul,
nmt.model.matmul_attention), whose scores are rounded to bf16 before the softmax, as with the fused
kernels (sdpa), which keep them in fp32? The demo's Multi30k settings in bf16 on this CPU, both
ways, from the same seeds, for the same updates. (Which is faster is a GPU's question:
bench/gpu_day/attention_probe.py and the GPU day's base_matmul_attention run.)

    python -m experiments.precision.attention_by_matmul [--updates 2000] [--seeds 1]

Both runs are `nmt train` on the demo's prepared data (runs/demo: `make demo` prepares it) with
`train.precision=bf16`, the one with `train.attention=matmul`; the demo's overrides, a fixed
number of updates, the rate cooled down over the last 30 %. Recorded for each: dev loss (nll per
token) and greedy BLEU on 300 val sentences at the last update, updates per second and the mean
logged target tokens per second; then the last checkpoint translates the 1,000 sentences of
test_2016_flickr with the recipe's decode settings (beam 4, in fp32 with the fused kernels, the
same code either way) and sacreBLEU scores them. Results:
experiments/precision/results/attention_by_matmul.json.
"""

from __future__ import annotations

import argparse
import json

from experiments.packing.packed_vs_plain import DEMO, RECIPE
from experiments.precision.residual_stream import RESULTS, test_bleu
from experiments.shared.runs import ROOT, last_validation, nmt, on_the_demos_data, sets
from tools.results import write_json


def train_run(attention: str, updates: int, seed: int) -> dict:
    out = on_the_demos_data(ROOT / "runs" / "precision" / f"attention_{attention}_seed{seed}")
    settings = [f"output_dir={out}", *DEMO, f"train.max_steps={updates}", f"train.valid_every={updates}",
                f"train.seed={seed}", "train.precision=bf16", f"train.attention={attention}"]
    nmt("train", RECIPE, *sets(settings), "--no-progress")
    return {"attention": attention, "seed": seed, **last_validation(out), "test": test_bleu(out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=2000)
    parser.add_argument("--seeds", default="1")
    args = parser.parse_args()
    result = {"updates": args.updates, "precision": "bf16", "runs": []}
    for seed in (int(s) for s in args.seeds.split(",")):
        for attention in ("sdpa", "matmul"):
            result["runs"].append(train_run(attention, args.updates, seed))
            print(json.dumps(result["runs"][-1]), flush=True)
    write_json(RESULTS / "attention_by_matmul.json", result)


if __name__ == "__main__":
    main()
