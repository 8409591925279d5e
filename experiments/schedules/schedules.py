"""Which learning-rate schedule, at the same peak rate and number of updates? The demo's Multi30k
settings under the inverse square root with the demo's cool-down (the rate taken to 0 over the
last 30 %), a constant rate with the same cool-down (warm-up-stable-decay), and a cosine over the
whole run.

    python -m experiments.schedules.schedules [--updates 1500] [--seed 1] [--schedules cosine,...]

Each run is `nmt train` on the demo's prepared data (runs/demo: `make demo` prepares it), one CPU
thread each, all side by side. Recorded for each: the last validation's dev loss and greedy BLEU
(300 val sentences), updates per second and mean target tokens per second, the rate at each logged
update, then test_2016_flickr (1,000 sentences) translated from last.pt with the recipe's decode
settings and scored by sacreBLEU. Results: experiments/schedules/results/schedules.json
(schedules_seed2.json for another seed, schedules_seed1_cosine.json for some of the schedules).
"""

from __future__ import annotations

import json
from pathlib import Path

from experiments.packing.packed_vs_plain import DEMO, RECIPE
from experiments.shared.runs import ROOT, bleu_and_chrf, last_validation, study_arguments, train_side_by_side
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
RUNS = ROOT / "runs" / "schedules"
SCHEDULES = {  # DEMO cools down over the last 30 %
    "inverse_sqrt_cooldown": ["train.lr_schedule=inverse_sqrt"],
    "constant_cooldown": ["train.lr_schedule=constant"],
    "cosine": ["train.lr_schedule=cosine", "train.cooldown=0"],
}


def logged_rates(run: Path) -> dict[int, float]:
    """The rate after each logged update (metrics.jsonl)."""
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return {r["step"]: r["lr"] for r in records if r.get("kind") == "train"}


def trained_and_scored(chosen: dict[str, list[str]], runs: Path, settings: list[str]) -> list[dict]:
    """Each chosen schedule trained side by side in runs/NAME on the demo's data, then its record:
    the last validation, test BLEU and chrF of last.pt, the logged rates."""
    train_side_by_side(chosen, runs, RECIPE, settings)
    records = []
    for name, extra in chosen.items():
        out = runs / name
        record = {"name": name, "settings": extra, **last_validation(out),
                  "test_last": bleu_and_chrf(out / "checkpoints" / "last.pt", out / "test.de", RECIPE),
                  "rates": logged_rates(out)}
        records.append(record)
        print(json.dumps({k: v for k, v in record.items() if k != "rates"}), flush=True)
    return records


def main() -> None:
    args, names = study_arguments(__doc__.splitlines()[0], SCHEDULES)
    chosen = {name: SCHEDULES[name] for name in names}
    settings = [*DEMO, f"train.max_steps={args.updates}", "train.valid_every=500", f"train.seed={args.seed}"]
    runs = RUNS if args.seed == 1 else RUNS.with_name(f"schedules_seed{args.seed}")  # seeds can train at once
    result = {"updates": args.updates, "seed": args.seed, "settings": settings,
              "runs": trained_and_scored(chosen, runs, settings)}
    variant = "" if list(chosen) == list(SCHEDULES) else "_" + "_".join(chosen)
    write_json(RESULTS / ("schedules.json" if (args.seed, variant) == (1, "") else f"schedules_seed{args.seed}{variant}.json"),
               result)


if __name__ == "__main__":
    main()
