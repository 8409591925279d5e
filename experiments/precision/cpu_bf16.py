"""bf16 training on a CPU with bf16 arithmetic (AVX512-BF16 or AMX): what it gains in speed and
what it costs in BLEU, against fp32, at the demo's width and at twice it, for the same minutes.

    python -m experiments.precision.cpu_bf16 [--minutes 10] [--widths 128,256] [--trained]

For each width, two `nmt train` runs side by side on the demo's prepared data (runs/demo: `make
demo` prepares it), one CPU thread each, the same seed and the same time budget (the rate cooled
to 0 over its last 30 %), one with `train.precision=fp32` and one with `train.precision=bf16`:
the demo's settings (4+4 layers of 128, d_ff 256, 1,024-token batches) and, at 256, the 3+3 layers
of 256 with d_ff 1,024 that the Multi30k recipe was chosen against. bf16 gets more updates in the
same minutes where it multiplies faster. Recorded per run: updates, updates/s, mean logged target
tokens/s, the last validation's dev loss and greedy BLEU (300 val sentences), and the last
checkpoint's test_2016_flickr BLEU with the recipe's decode settings (beam 4, fp32 on 2 threads,
the same code for both). Results: experiments/precision/results/cpu_bf16.json (other seeds:
cpu_bf16_seedN.json), with the host's
CPU features (a CPU without bf16 arithmetic runs bf16 far slower: the study says nothing there).
`--trained`: the runs already trained under runs/cpu_bf16 are scored again, not trained.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from experiments.packing.packed_vs_plain import DEMO, RECIPE
from experiments.shared.runs import ROOT, last_validation, test_set_scores, train_side_by_side
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
SHAPES = {128: [], 256: ["model.d_model=256", "model.d_ff=1024", "model.encoder_layers=3", "model.decoder_layers=3"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--widths", default="128,256")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--trained", action="store_true", help="score the runs already trained")
    args = parser.parse_args()
    capabilities = torch.cpu.get_capabilities()
    result = {"minutes": args.minutes, "seed": args.seed, "settings": DEMO,
              "cpu": {key: capabilities.get(key) for key in ("cpu_name", "avx512_bf16", "amx_bf16")}, "runs": []}
    for width in (int(w) for w in args.widths.split(",")):
        folder = ROOT / "runs" / "cpu_bf16" / f"seed{args.seed}" / f"width{width}"
        settings = [*DEMO, f"train.max_minutes={args.minutes}", "train.max_steps=1000000", "train.valid_every=500",
                    f"train.seed={args.seed}", *SHAPES[width]]
        runs = {precision: [f"train.precision={precision}"] for precision in ("fp32", "bf16")}
        if not args.trained:
            train_side_by_side(runs, folder, RECIPE, settings)
        for precision in runs:
            out = folder / precision
            bleu = test_set_scores(out / "checkpoints" / "last.pt", out / "test.de.hyp", RECIPE)
            run = {"width": width, "precision": precision, **last_validation(out), "test_bleu": round(bleu["score"], 2),
                   "test": bleu}
            result["runs"].append(run)
            print(json.dumps({k: v for k, v in run.items() if k != "test"}), flush=True)
    write_json(RESULTS / ("cpu_bf16.json" if args.seed == 1 else f"cpu_bf16_seed{args.seed}.json"), result)


if __name__ == "__main__":
    main()
