"""What does dual conditional cross-entropy filtering (`nmt filter`) catch that a language
identifier cannot, and what does it gain a model trained on the corpus it cleans?

    python -m experiments.cleaning.dual_cross_entropy [--spoiled 0.1] [--updates 1500] [--drop 0.1]
                                                      [--stage scorers|detection|training|seeds|report|all]

Multi30k's en→de training corpus (29,000 pairs) with a seeded share of its pairs spoiled in ways
whose languages are right, a quarter each: the target replaced by another pair's target
(misaligned), cut to its first half of words (truncated), followed by another pair's target
(extended), or its words shuffled (scrambled). No clean data is used to score it: the corpus's
own models score it, as a user without clean data would.

1. Scorers: the demo's settings for --updates on the spoiled corpus, en→de (the forward model;
   it is also the unfiltered run of stage 3) and de→en (the reverse model), side by side, one
   CPU thread each, the demo's joint tokenizer (runs/demo: `make demo` makes it).
2. Detection: `nmt filter` scores every pair with both models, then the share of each kind of
   pair dropped when the worst 5, 10 or 20 % go, ranked by the dual score, by the forward
   model's cross-entropy alone (what `nmt distill --drop-worst` ranks by) and by the reverse's.
3. Training: the same settings on the corpus with the worst --drop of its pairs dropped by the
   dual score and by the forward cross-entropy alone, side by side; test_2016_flickr translated
   from each run's last.pt (the unfiltered one's is the forward scorer's) and scored by sacreBLEU.
4. Seeds: the clean corpus (all 29,000 pairs genuine) from seed 1, then the unfiltered and both
   filtered corpora from seed 2, two runs at a time: how far filtering gets back, and how much
   one run's score moves with its seed.

Results: experiments/cleaning/results/dual_cross_entropy.json.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from pathlib import Path

from experiments.cleaning.language_filter import MULTI30K, lines
from experiments.packing.packed_vs_plain import DEMO, RECIPE
from experiments.shared.runs import (DEMO_RUN, ROOT, bleu_and_chrf, last_validation, nmt, sets, train_side_by_side,
                                     with_the_demos_tokenizer)
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
RUNS = ROOT / "runs" / "dual_cross_entropy"
KINDS = ("misaligned", "truncated", "extended", "scrambled")
DROPS = (0.05, 0.1, 0.2)
RANKINGS = ("dual", "forward", "reverse")  # the keys of `nmt filter --scores`'s lines


def spoiled_corpus(share: float, seed: int = 1) -> tuple[list[tuple[str, str]], list[str | None]]:
    """The en→de training pairs with `share` of them spoiled (KINDS in turn, seeded); each pair's kind or None."""
    en, de = lines("train", "en"), lines("train", "de")
    rng = random.Random(seed)
    chosen = rng.sample(range(len(en)), round(share * len(en)))
    kinds: list[str | None] = [None] * len(en)
    pairs = list(zip(en, de))
    for n, i in enumerate(sorted(chosen)):
        kind = kinds[i] = KINDS[n % len(KINDS)]
        other = de[(i + rng.randrange(1, len(de))) % len(de)]  # any other pair's target
        words = de[i].split()
        if kind == "misaligned":
            target = other
        elif kind == "truncated":
            target = " ".join(words[:max(1, len(words) // 2)])
        elif kind == "extended":
            target = f"{de[i]} {other}"
        else:
            shuffled = words[:]
            while len(set(words)) > 1 and shuffled == words:
                rng.shuffle(shuffled)
            target = " ".join(shuffled)
        pairs[i] = (en[i], target)
    return pairs, kinds


def write_corpus(pairs: list[tuple[str, str]], stem: Path) -> None:
    stem.parent.mkdir(parents=True, exist_ok=True)
    for lang, side in (("en", 0), ("de", 1)):
        with gzip.open(f"{stem}.{lang}.gz", "wt", encoding="utf-8") as f:
            f.write("\n".join(pair[side] for pair in pairs) + "\n")


def reverse_settings() -> list[str]:
    return ["data.src_lang=de", "data.tgt_lang=en"]


def prepared_run(name: str, corpus: Path, extra: list[str]) -> None:
    """runs/dual_cross_entropy/NAME with the demo's joint tokenizer and `corpus` prepared."""
    out = with_the_demos_tokenizer(RUNS / name)
    (out / "tokenizer.json").unlink(missing_ok=True)  # (its record names en→de; the pieces serve both ways)
    nmt("prepare", RECIPE, *sets([f"output_dir={out}", *DEMO, f"data.train={corpus}", *extra]))


def train(runs: dict[str, tuple[Path, list[str]]], updates: int) -> None:
    for name, (corpus, extra) in runs.items():
        prepared_run(name, corpus, extra)
    train_side_by_side({name: extra for name, (_, extra) in runs.items()}, RUNS, RECIPE,
                       [*DEMO, f"train.max_steps={updates}", "train.valid_every=500"], on_demo_data=False)


def detection(scores: list[dict], kinds: list[str | None]) -> list[dict]:
    """For each ranking and share dropped: the share of each kind of pair among those dropped."""
    result = []
    for ranking in RANKINGS:
        order = sorted(range(len(scores)), key=lambda i: (-scores[i][ranking], i))  # worst first
        for drop in DROPS:
            dropped = set(order[:round(drop * len(scores))])
            shares = {}
            for kind in (None, *KINDS):
                of_kind = [i for i, k in enumerate(kinds) if k == kind]
                shares[kind or "genuine"] = round(sum(i in dropped for i in of_kind) / len(of_kind), 4)
            result.append({"ranking": ranking, "drop": drop, "dropped": shares})
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spoiled", type=float, default=0.1)
    parser.add_argument("--updates", type=int, default=1500)
    parser.add_argument("--drop", type=float, default=0.1)
    parser.add_argument("--stage", choices=("scorers", "detection", "training", "seeds", "report", "all"), default="all",
                        help="report: the results of the runs already made, nothing trained")
    args = parser.parse_args()
    if not (DEMO_RUN / "spm.model").is_file():
        raise SystemExit("runs/demo: no tokenizer (run `make demo` first)")
    pairs, kinds = spoiled_corpus(args.spoiled)
    corpus = RUNS / "spoiled"
    forward, reverse = RUNS / "forward" / "checkpoints" / "last.pt", RUNS / "reverse" / "checkpoints" / "last.pt"
    if args.stage in ("scorers", "all"):
        write_corpus(pairs, corpus)
        train({"forward": (corpus, []), "reverse": (corpus, reverse_settings())}, args.updates)
    scores_file = RUNS / "scores.jsonl"
    if args.stage in ("detection", "all"):
        for name, reverse_model in (("dual", ["--reverse-model", str(reverse)]), ("forward_only", [])):
            kept = RUNS / f"{name}_kept"
            for written in (f"{kept}.en", f"{kept}.de", f"{kept}.json", *([scores_file] if reverse_model else [])):
                Path(written).unlink(missing_ok=True)  # (a run's earlier files)
            nmt("filter", "-c", str(forward), *reverse_model, "--source", f"{corpus}.en.gz", "--target",
                f"{corpus}.de.gz", "-o", str(kept), "--drop-worst", str(args.drop),
                *(["--scores", str(scores_file)] if reverse_model else []))
    if args.stage == "scorers":
        return
    scores = [json.loads(line) for line in scores_file.read_text().splitlines()]
    filtering = {name: json.loads((RUNS / f"{name}_kept.json").read_text()) for name in ("dual", "forward_only")}
    result = {"spoiled": args.spoiled, "kinds": list(KINDS), "updates": args.updates,
              "filtering": {name: {key: report[key] for key in ("read", "written", "dropped", "max_kept_score", "minutes")}
                            for name, report in filtering.items()},
              "detection": detection(scores, kinds)}
    print(json.dumps(result["detection"]), flush=True)
    if args.stage in ("training", "all"):
        train({"filtered_dual": (RUNS / "dual_kept", []), "filtered_forward": (RUNS / "forward_only_kept", [])},
              args.updates)
    if args.stage in ("seeds", "all"):  # the clean corpus, and each corpus from another seed: the noise of one run
        train({"clean": (MULTI30K / "train", []), "unfiltered_seed2": (corpus, ["train.seed=2"])}, args.updates)
        train({"filtered_dual_seed2": (RUNS / "dual_kept", ["train.seed=2"]),
               "filtered_forward_seed2": (RUNS / "forward_only_kept", ["train.seed=2"])}, args.updates)
    result["training"] = []
    for name in ("forward", "filtered_dual", "filtered_forward", "clean", "unfiltered_seed2", "filtered_dual_seed2",
                 "filtered_forward_seed2"):
        out = RUNS / name
        if not (out / "checkpoints" / "last.pt").is_file():
            continue
        report = json.loads((out / "data" / "report.json").read_text())
        record = {"name": "unfiltered" if name == "forward" else name, "seed": 2 if name.endswith("seed2") else 1,
                  "train_pairs": report["splits"]["train"]["kept"], **last_validation(out),
                  "test_last": bleu_and_chrf(out / "checkpoints" / "last.pt", out / "test.de", RECIPE)}
        result["training"].append(record)
        print(json.dumps(record), flush=True)
    write_json(RESULTS / "dual_cross_entropy.json", result)


if __name__ == "__main__":
    main()
