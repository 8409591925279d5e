"""What do untranslated pairs (a target that copies its source) cost a model, and what does
`nmt prepare`'s data.remove_copies (on by default) win back?

    python -m experiments.cleaning.copies [--share 0.1] [--updates 1500] [--seed 1] [--trained]

Multi30k's en→de training corpus (29,000 pairs) with a seeded share of its targets replaced by
their English source, as crawled corpora hold them (Khayrallah and Koehn, 2018, found this the
noise that harms a model most). The demo's settings for a fixed number of updates on that corpus,
prepared with data.remove_copies off and on (the demo's tokenizer; runs/demo: `make demo` makes
it), side by side, one CPU thread each; dev loss and BLEU at the end, then test_2016_flickr
translated from last.pt with the recipe's beam search and greedily, sacreBLEU, and the share of
the translations in German and the languages of the rest (`nmt score --langid de`). Results:
experiments/cleaning/results/copies.json (copies_seed2.json for --seed 2, ...).
"""

from __future__ import annotations

import argparse
import json
import random

from experiments.cleaning.language_filter import RESULTS, RUNS, lines, output_languages, trained_on
from experiments.packing.packed_vs_plain import RECIPE
from experiments.shared.runs import DEMO_RUN, bleu_and_chrf
from nmt.data.clean import is_copy
from tools.results import write_json

RUNS_OF = {"copies_kept": ["data.remove_copies=false"], "copies_removed": []}


def runs_of(seed: int, runs: dict[str, list[str]] = RUNS_OF) -> dict[str, list[str]]:
    """A study's runs (by default this one's, runs/cleaning/copies_kept and copies_removed) trained
    from `seed` (train.seed): as named for seed 1, with `_sN` after the names for another."""
    if seed == 1:
        return runs
    return {f"{name}_s{seed}": [*extra, f"train.seed={seed}"] for name, extra in runs.items()}


def copied_corpus(share: float, seed: int = 1) -> tuple[list[tuple[str, str]], set[int]]:
    """The en→de training pairs with `share` of the targets replaced by their source (seeded);
    the lines so spoiled."""
    en, de = lines("train", "en"), lines("train", "de")
    chosen = set(random.Random(seed).sample(range(len(en)), round(share * len(en))))
    return [(src, src if i in chosen else tgt) for i, (src, tgt) in enumerate(zip(en, de))], chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--share", type=float, default=0.1)
    parser.add_argument("--updates", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=1, help="train.seed of both runs (the copied pairs stay the same)")
    parser.add_argument("--trained", action="store_true", help="score the runs already trained in runs/cleaning")
    args = parser.parse_args()
    if not (DEMO_RUN / "spm.model").is_file():
        raise SystemExit("runs/demo: no tokenizer (run `make demo` first)")
    pairs, copied = copied_corpus(args.share)
    flagged = {i for i, (src, tgt) in enumerate(pairs) if is_copy(src, tgt)}
    result = {"share": args.share, "copied_pairs": len(copied), "updates": args.updates, "seed": args.seed,
              "flagged_by_is_copy": {"copied": len(flagged & copied), "genuine": len(flagged - copied)}}
    print(json.dumps(result), flush=True)
    result["training"] = trained_on(pairs, RUNS / "copied", runs_of(args.seed), args.updates, args.trained)
    for record in result["training"]:  # the same checkpoint searched greedily: where the copies do their harm
        out = RUNS / record["name"]
        record["test_greedy"] = bleu_and_chrf(out / "checkpoints" / "last.pt", out / "test.greedy.de", RECIPE,
                                              ("--beam-size", "1"))
        record["test_greedy_output"] = output_languages(out / "test.greedy.de")
        print(json.dumps({"name": record["name"], **{k: v for k, v in record.items() if "greedy" in k}}), flush=True)
    write_json(RESULTS / ("copies.json" if args.seed == 1 else f"copies_seed{args.seed}.json"), result)


if __name__ == "__main__":
    main()
