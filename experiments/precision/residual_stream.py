"""Does a post-LN model trained in bf16 learn as well with its residual stream in bf16
(nmt.model.layer_norm) as with the fp32 stream that torch's LayerNorm under autocast gives? The
demo's Multi30k settings, post-LN (the WMT recipes', the paper's) at a peak rate of 1e-3, in bf16
on this CPU, both ways, from the same seeds, for the same updates. (The Multi30k recipe's own
pre-LN trains bit for bit the same either way: tests/model/test_layer_norm.py.)

    python -m experiments.precision.residual_stream [--updates 2000] [--seeds 1,2]

Both runs are `nmt train` on the demo's prepared data (runs/demo: `make demo` prepares it) with
`train.precision=bf16`; the fp32-stream run has the layers' LayerNorm replaced by torch's own for
the whole process (`--norm torch` below), which is how nmt trained before. The demo's overrides,
a fixed number of updates, the rate cooled down over the last 30 %. Recorded for each: dev loss
(nll per token) and greedy BLEU on 300 val sentences at the last update, updates per second and
the mean logged target tokens per second; then the last checkpoint translates the 1,000 sentences
of test_2016_flickr with the recipe's decode settings (beam 4, on the CPU in fp32, the same code
either way) and sacreBLEU scores them. Results: experiments/precision/results/residual_stream.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from experiments.packing.packed_vs_plain import DEMO, RECIPE
from experiments.shared.runs import ROOT, last_validation, on_the_demos_data, sets, test_set_scores
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
POST_LN = ["model.norm=post", "train.lr=0.001"]  # post-LN wants a lower peak rate than the recipe's pre-LN 4e-3


def test_bleu(out: Path) -> list[dict]:
    """sacreBLEU of the run's last checkpoint on the test set, translated as the recipe decodes."""
    return test_set_scores(out / "checkpoints" / "last.pt", out / "test.de.hyp", RECIPE)


def train_run(name: str, norm: str, updates: int, seed: int) -> dict:
    out = on_the_demos_data(ROOT / "runs" / "precision" / name)
    settings = [f"output_dir={out}", *DEMO, f"train.max_steps={updates}", f"train.valid_every={updates}",
                f"train.seed={seed}", "train.precision=bf16", *POST_LN]
    subprocess.run([sys.executable, "-m", "experiments.precision.residual_stream", "--norm", norm, "--",
                    "train", RECIPE, *sets(settings), "--no-progress"], cwd=ROOT, check=True)
    summary = last_validation(out)
    return {"residual_stream": "bf16" if norm == "nmt" else "fp32", "seed": seed, **summary, "test": test_bleu(out)}


def nmt_with(norm: str, args: list[str]) -> None:
    """`nmt ARGS` in this process, with torch's LayerNorm in the layers where `norm` is torch."""
    from bench.gpu import layer_norms_of
    from nmt.cli import app

    with layer_norms_of({"fp32_residual": norm == "torch"}):
        app(args)


def main() -> None:
    if "--norm" in sys.argv:  # a run of the study: --norm nmt|torch -- NMT ARGS
        nmt_with(sys.argv[sys.argv.index("--norm") + 1], sys.argv[sys.argv.index("--") + 1:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=2000)
    parser.add_argument("--seeds", default="1,2")
    args = parser.parse_args()
    result = {"updates": args.updates, "precision": "bf16", "settings": POST_LN, "runs": []}
    for seed in (int(s) for s in args.seeds.split(",")):
        for stream, norm in (("fp32", "torch"), ("bf16", "nmt")):
            result["runs"].append(train_run(f"{stream}_stream_seed{seed}", norm, args.updates, seed))
            print(json.dumps(result["runs"][-1]), flush=True)
    write_json(RESULTS / "residual_stream.json", result)


if __name__ == "__main__":
    main()
