"""Does an exponential moving average of the weights (train.ema_decay) translate better than the
weights themselves, and than the mean of the last checkpoints (`nmt average`)? The demo's
Multi30k settings for a fixed number of updates, with the demo's cool-down (the rate taken to 0
over the last 30 %) and with the paper's schedule (no cool-down), each without and with an
average of decay 0.9999 (Marian's exponential-smoothing 1e-4).

    python -m experiments.averaging.weight_average [--updates 1500] [--seed 1] [--schedules paper_schedule]

Each run is `nmt train` on the demo's prepared data (runs/demo: `make demo` prepares it), one CPU
thread each, the two runs of a schedule side by side. Recorded for each: the last validation's
dev loss and greedy BLEU (300 val sentences; a run with the average validates the average),
updates per second and mean target tokens per second; then test_2016_flickr (1,000 sentences)
translated with the recipe's decode settings and scored by sacreBLEU, from last.pt (the run's
weights, or their average) and, for the runs without one, from the mean of the last 3 step
checkpoints (500 updates apart). Results: experiments/averaging/results/weight_average.json
(another seed or some of the schedules: weight_average_seed2_paper_schedule.json, say).
"""

from __future__ import annotations

import json
from pathlib import Path

from experiments.packing.packed_vs_plain import DEMO, RECIPE
from experiments.shared.runs import ROOT, bleu_and_chrf, last_validation, nmt, study_arguments, train_side_by_side
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
DECAY = 0.9999
SCHEDULES = {"demo_cooldown": "train.cooldown=0.3", "paper_schedule": "train.cooldown=0"}


def main() -> None:
    args, chosen = study_arguments(__doc__.splitlines()[0], SCHEDULES)
    result = {"updates": args.updates, "seed": args.seed, "ema_decay": DECAY, "runs": []}
    for schedule, cooldown in ((name, SCHEDULES[name]) for name in chosen):
        runs = {f"{schedule}_plain": [cooldown], f"{schedule}_ema": [cooldown, f"train.ema_decay={DECAY}"]}
        train_side_by_side(runs, ROOT / "runs" / "averaging", RECIPE,
                           [*DEMO, f"train.max_steps={args.updates}", "train.valid_every=500", f"train.seed={args.seed}",
                            "train.keep_last=8"])
        for name, extra in runs.items():
            out = ROOT / "runs" / "averaging" / name
            record = {"name": name, "settings": extra, **last_validation(out),
                      "test_last": bleu_and_chrf(out / "checkpoints" / "last.pt", out / "test.last.de", RECIPE)}
            if "ema" not in name:
                nmt("average", "--last", "3", "--dir", str(out / "checkpoints"), "-o", str(out / "averaged.pt"))
                record["test_mean_of_last_3"] = bleu_and_chrf(out / "averaged.pt", out / "test.averaged.de", RECIPE)
            result["runs"].append(record)
            print(json.dumps(record), flush=True)
    variant = "" if (args.seed, chosen) == (1, list(SCHEDULES)) else f"_seed{args.seed}_{'_'.join(chosen)}"
    write_json(RESULTS / f"weight_average{variant}.json", result)


if __name__ == "__main__":
    main()
