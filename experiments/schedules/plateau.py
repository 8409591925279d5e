"""Does cutting the rate on a plateau help? The demo's Multi30k settings for longer than the demo,
validated often: a constant rate without a cool-down, the same rate halved whenever the dev BLEU
has not improved for 2 validations in a row (train.lr_plateau: factor 0.5, patience 2), and the
demo's own schedule (the inverse square root, cooled to 0 over the last 30 %), at the same peak.

    python -m experiments.schedules.plateau [--updates 4000] [--valid-every 250] [--seed 1] [--schedules ...]

Side by side on the demo's prepared data (runs/demo: `make demo` prepares it), one CPU thread
each. Recorded for each as in schedules.py, plus every validation's dev loss and BLEU and the
updates where the rate was cut. Results: experiments/schedules/results/plateau.json.
"""

from __future__ import annotations

import json
from pathlib import Path

from experiments.packing.packed_vs_plain import DEMO
from experiments.schedules.schedules import RESULTS, RUNS, SCHEDULES, trained_and_scored
from experiments.shared.runs import study_arguments
from tools.results import write_json

PLATEAU = {
    "constant": ["train.lr_schedule=constant", "train.cooldown=0"],
    "constant_plateau": ["train.lr_schedule=constant", "train.cooldown=0", "train.lr_plateau.factor=0.5"],
    "inverse_sqrt_cooldown": SCHEDULES["inverse_sqrt_cooldown"],
    # halved after every validation that is not the best yet (patience 2 never cut in 4,000 updates)
    "constant_plateau_patience1": ["train.lr_schedule=constant", "train.cooldown=0", "train.lr_plateau.factor=0.5",
                                   "train.lr_plateau.patience=1"],
}
FIRST = ["constant", "constant_plateau", "inverse_sqrt_cooldown"]  # plateau.json's runs


def validations(run: Path) -> list[dict]:
    """Every validation's update, dev loss and BLEU (metrics.jsonl)."""
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return [{"step": r["step"], "dev_nll": r["nll"], "dev_bleu": round(r["bleu"], 2)}
            for r in records if r.get("kind") == "valid"]


def cuts(run: Path) -> list[dict]:
    """Each cut on a plateau as its training log says it, after the validation it follows: the
    update and the rate's new factor on the schedule's."""
    found, step = [], None
    for line in (run / "train.log").read_text(encoding="utf-8").splitlines():
        if line.startswith("step ") and " valid: " in line:
            step = int(line.split()[1].rstrip(":"))
        elif line.endswith("(train.lr_plateau)"):
            found.append({"step": step, "scale": float(line.split("the rate is now ")[1].split()[0])})
    return found


def main() -> None:
    args, names = study_arguments(__doc__.splitlines()[0], PLATEAU, updates=4000, valid_every=250, default=FIRST)
    chosen = {name: PLATEAU[name] for name in names}
    settings = [*DEMO, f"train.max_steps={args.updates}", f"train.valid_every={args.valid_every}",
                f"train.seed={args.seed}"]
    runs = RUNS.with_name(f"plateau_seed{args.seed}")
    records = trained_and_scored(chosen, runs, settings)
    for record in records:
        record["validations"] = validations(runs / record["name"])
        record["cuts"] = cuts(runs / record["name"])
    variant = "" if names == FIRST else "_" + "_".join(names)
    write_json(RESULTS / (f"plateau{variant}.json" if args.seed == 1 else f"plateau_seed{args.seed}{variant}.json"),
               {"updates": args.updates, "seed": args.seed, "settings": settings, "runs": records})


if __name__ == "__main__":
    main()
