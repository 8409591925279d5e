"""The domain selection study (selection.py) with the cross-entropy difference taken both ways, as
Axelrod et al. (2011) sum it over a pair's two sides: a de→en general model and its domain model
score the same pool the other way round, and a pair ranks by the sum of the two differences.

    python -m experiments.finetuning.selection_both_ways [--base-minutes 10] [--tune-minutes 3]

Needs selection.py's runs (runs/select_sports: the pool, the seed sample, the en→de models and
their scores). Trains the de→en general model on the pool and its domain model on the sample as
selection.py trains the en→de ones, scores the pool with `nmt filter --domain-model` in that
direction, and reports the precision of each ranking (forward, reverse, both) against the keyword
labels; then fine-tunes the en→de general model on the sample plus the both-ways ranking's first
k pairs. Results: experiments/finetuning/results/selection_sports_both_ways.json.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from experiments.finetuning.finetune_domain import SHORT, SPORTS, train_run, training, write
from experiments.finetuning.selection import GENTLE, RESULTS, WORK, pairs_of, ranking_quality, tune
from experiments.shared.runs import nmt, run_facts
from tools.results import write_json

GERMAN_ENGLISH = ["data.src_lang=de", "data.tgt_lang=en"]


def differences(scores_file) -> np.ndarray:
    """Each pair's H_d - H_f from `nmt filter --scores` (inf where unscored)."""
    return np.array([row.get("difference", np.inf) for row in map(json.loads, scores_file.read_text().splitlines())])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-minutes", type=float, default=10)
    parser.add_argument("--domain-minutes", type=float, default=1)
    parser.add_argument("--tune-minutes", type=float, default=3)
    args = parser.parse_args()
    if not (WORK / "pool.scores.jsonl").is_file():
        raise SystemExit("runs/select_sports: run `make bench-domain-selection` first")
    report = {"base_minutes": args.base_minutes, "domain_minutes": args.domain_minutes, "tune_minutes": args.tune_minutes}

    train_run([f"output_dir={WORK}/general_de_en", f"data.train={WORK}/pool", f"train.max_minutes={args.base_minutes}",
               *SHORT, *GERMAN_ENGLISH])
    general = WORK / "general_de_en" / "checkpoints" / "last.pt"
    report["general_de_en"] = training(general) | run_facts(WORK / "general_de_en")
    train_run([f"output_dir={WORK}/domain_de_en", f"data.train={WORK}/seed", f"train.max_minutes={args.domain_minutes}",
               *SHORT, *GENTLE, *GERMAN_ENGLISH, f"train.init_from={general}"])
    domain = WORK / "domain_de_en" / "checkpoints" / "last.pt"
    report["domain_de_en"] = training(domain)

    reverse_scores = WORK / "pool_de_en.scores.jsonl"
    for stale in (reverse_scores, *WORK.glob("selected_de_en.*")):
        stale.unlink(missing_ok=True)
    nmt("filter", "-c", str(general), "--domain-model", str(domain), "--corpus", str(WORK / "pool"),
        "-o", str(WORK / "selected_de_en"), "--scores", str(reverse_scores))
    report["filter_de_en"] = json.loads((WORK / "selected_de_en.json").read_text())
    pool = pairs_of(WORK / "pool")
    in_domain = np.array([bool(SPORTS.search(src)) for src, _ in pool])
    k = int(in_domain.sum())
    forward, reverse = differences(WORK / "pool.scores.jsonl"), differences(reverse_scores)
    orders = {"en_de": np.argsort(forward, kind="stable"), "de_en": np.argsort(reverse, kind="stable"),
              "both_ways": np.argsort(forward + reverse, kind="stable")}
    report["selection"] = {name: ranking_quality(order, in_domain) for name, order in orders.items()}
    report["correlation_of_the_two_differences"] = round(float(np.corrcoef(forward, reverse)[0, 1]), 4)
    print(json.dumps(report["selection"]), flush=True)
    write_json(RESULTS / "selection_sports_both_ways.json", report)

    seed = pairs_of(WORK / "seed")
    write(seed + [pool[i] for i in orders["both_ways"][:k]], WORK / "seed_plus_both_ways")
    report["tuned"] = {"seed_plus_both_ways": tune("seed_plus_both_ways", WORK / "seed_plus_both_ways",
                                                   WORK / "general" / "checkpoints" / "last.pt", args.tune_minutes)}
    write_json(RESULTS / "selection_sports_both_ways.json", report)
    print(json.dumps(report["tuned"]), flush=True)


if __name__ == "__main__":
    main()
