"""Selecting a domain's pairs from a large corpus: `nmt filter --domain-model` (the cross-entropy
difference of an in-domain model and a general one) against the in-domain model's cross-entropy
alone, at random, and the keyword oracle; then fine-tuning on what each selects.

    python -m experiments.finetuning.selection [--base-minutes 10] [--tune-minutes 3] [--seed-pairs 200]
                                               [--train-seed 1] [--arms seed_only,difference,...]

1. Multi30k's en→de sports pairs (finetune_domain.SPORTS) are shuffled as finetune_domain shuffles
   them: the same 500 held out to test on; the next `--seed-pairs` are the user's small in-domain
   sample; the rest are mixed into the other 26,999 pairs: the corpus to select from (the pool).
2. A general model trains on the pool for `--base-minutes` (the fine-tuning study's settings).
3. The domain model: the general one fine-tuned on the seed sample (a gentle rate, 1 minute).
4. `nmt filter -c GENERAL --domain-model DOMAIN --corpus POOL --scores FILE` scores every pair
   of the pool: H_f, H_d and their difference. Each ranking's top k (k: the pool's sports pairs)
   is compared with the keyword labels: precision at k/2, k and 2k, and average precision. The
   labels are the keyword rule's, so a sports sentence without one of its words counts as a miss:
   a lower bound.
5. The general model is fine-tuned for `--tune-minutes` on the seed sample alone, and on the seed
   plus k pairs chosen by each ranking (difference, H_d alone, at random, the keyword oracle);
   each translates the held-out sports pairs and test_2016_flickr (beam 4, α 1.5).

Results: experiments/finetuning/results/selection_sports.json; with `--train-seed N` (the fine-tuning
runs' train.seed; the general and domain models and the selections stay the same),
selection_sports_seedN.json.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np

from experiments.finetuning.finetune_domain import SHORT, SPORTS, scores, split_corpus, train_run, training, write
from experiments.shared.runs import nmt, run_facts
from nmt.data.corpus import read_parallel
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
SPLIT = ROOT / "runs" / "finetune_sports"  # finetune_domain's split: general, sports_tune, sports_test
WORK = ROOT / "runs" / "select_sports"
GENTLE = ["train.lr=0.0005", "train.warmup_steps=50", "train.valid_every=100", "train.valid_bleu_sentences=0"]


def pairs_of(prefix: Path) -> list[tuple[str, str]]:
    return list(read_parallel(Path(f"{prefix}.en.gz"), Path(f"{prefix}.de.gz")))


def pairs_of_files(prefix: Path) -> list[tuple[str, str]]:
    return list(zip(*(Path(f"{prefix}.{lang}").read_text(encoding="utf-8").splitlines() for lang in ("en", "de"))))


def build_pool(seed_pairs: int) -> dict:
    """WORK/seed (the in-domain sample) and WORK/pool (the rest of the sports pairs among the
    general ones, shuffled); the held-out sports pairs stay finetune_domain's."""
    split = split_corpus()
    tune = pairs_of(SPLIT / "sports_tune")
    general = pairs_of(SPLIT / "general")
    pool = general + tune[seed_pairs:]
    random.Random(1).shuffle(pool)
    WORK.mkdir(parents=True, exist_ok=True)
    write(tune[:seed_pairs], WORK / "seed")
    write(pool, WORK / "pool")
    in_domain = [bool(SPORTS.search(src)) for src, _ in pool]
    return split | {"seed_pairs": seed_pairs, "pool_pairs": len(pool), "pool_sports_pairs": sum(in_domain)}


def ranking_quality(order: np.ndarray, in_domain: np.ndarray) -> dict:
    """Precision of the top k/2, k and 2k of a ranking (best first), k the domain's pairs, and its
    average precision (the mean of the precision at each domain pair's rank)."""
    k = int(in_domain.sum())
    hits = in_domain[order]
    ranks = np.flatnonzero(hits) + 1
    return {f"precision_at_{n}": round(float(hits[:n].mean()), 4) for n in (k // 2, k, 2 * k)} | {
        "average_precision": round(float((np.arange(1, k + 1) / ranks).mean()), 4)}


def tune(name: str, corpus: Path, base: Path, minutes: float, seed: int = 1) -> dict:
    """The general model fine-tuned on `corpus` from train.seed `seed`; its updates, tokens/s and scores."""
    if seed != 1:
        name = f"{name}_s{seed}"
    run = WORK / name
    train_run([f"output_dir={run}", f"data.train={corpus}", f"train.max_minutes={minutes}", *SHORT, *GENTLE,
               f"train.init_from={base}", f"train.seed={seed}"])
    checkpoint = run / "checkpoints" / "last.pt"
    return training(checkpoint) | run_facts(run) | {"scores": scores(checkpoint, name)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-minutes", type=float, default=10)
    parser.add_argument("--domain-minutes", type=float, default=1)
    parser.add_argument("--tune-minutes", type=float, default=3)
    parser.add_argument("--seed-pairs", type=int, default=200)
    parser.add_argument("--train-seed", type=int, default=1, help="train.seed of the fine-tuning runs")
    parser.add_argument("--arms", default="seed_only,difference,domain_alone,random,keywords",
                        help="the fine-tuning runs, comma-separated")
    args = parser.parse_args()
    arms = args.arms.split(",")
    results = RESULTS / ("selection_sports.json" if args.train_seed == 1 else f"selection_sports_seed{args.train_seed}.json")
    report = {"split": build_pool(args.seed_pairs), "base_minutes": args.base_minutes,
              "domain_minutes": args.domain_minutes, "tune_minutes": args.tune_minutes, "train_seed": args.train_seed}
    print(json.dumps(report), flush=True)

    train_run([f"output_dir={WORK}/general", f"data.train={WORK}/pool", f"train.max_minutes={args.base_minutes}", *SHORT])
    general = WORK / "general" / "checkpoints" / "last.pt"
    report["general"] = training(general) | run_facts(WORK / "general") | {"scores": scores(general, "general")}
    train_run([f"output_dir={WORK}/domain", f"data.train={WORK}/seed", f"train.max_minutes={args.domain_minutes}",
               *SHORT, *GENTLE, f"train.init_from={general}"])
    domain = WORK / "domain" / "checkpoints" / "last.pt"
    report["domain_model"] = training(domain)

    # As a user selects: the pool's k pairs with the lowest difference, and every pair's scores.
    pool = pairs_of(WORK / "pool")
    in_domain = np.array([bool(SPORTS.search(src)) for src, _ in pool])
    k = int(in_domain.sum())
    scores_file = WORK / "pool.scores.jsonl"
    for stale in (scores_file, *WORK.glob("selected.*")):
        stale.unlink(missing_ok=True)
    nmt("filter", "-c", str(general), "--domain-model", str(domain), "--corpus", str(WORK / "pool"),
        "-o", str(WORK / "selected"), "--drop-worst", str((len(pool) - k) / len(pool)), "--scores", str(scores_file))
    rows = [json.loads(line) for line in scores_file.read_text().splitlines()]
    number = {name: np.array([row.get(name, np.inf) for row in rows]) for name in ("difference", "domain")}
    report["filter"] = json.loads((WORK / "selected.json").read_text())
    orders = {"difference": np.argsort(number["difference"], kind="stable"),
              "domain_alone": np.argsort(number["domain"], kind="stable"),
              "random": np.random.default_rng(1).permutation(len(pool)),
              "keywords": np.argsort(~in_domain, kind="stable")}
    report["selection"] = {name: ranking_quality(order, in_domain) for name, order in orders.items()}
    print(json.dumps(report["selection"]), flush=True)

    seed = pairs_of(WORK / "seed")
    report["tuned"] = {}
    if "seed_only" in arms:
        report["tuned"]["seed_only"] = tune("seed_only", WORK / "seed", general, args.tune_minutes, args.train_seed)
    chosen = {name: [pool[i] for i in order[:k]] for name, order in orders.items()}
    kept = pairs_of_files(WORK / "selected")  # nmt filter's own output: the difference's top k, in the pool's order
    assert sorted(kept) == sorted(chosen["difference"]), "nmt filter kept other pairs than its scores rank first"
    for name in orders:
        if name not in arms:
            continue
        write(seed + chosen[name], WORK / f"seed_plus_{name}")
        report["tuned"][f"seed_plus_{name}"] = tune(f"seed_plus_{name}", WORK / f"seed_plus_{name}", general,
                                                    args.tune_minutes, args.train_seed)
        write_json(results, report)
    print(json.dumps(report["tuned"]), flush=True)


if __name__ == "__main__":
    main()
