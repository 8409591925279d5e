"""What does the language filter of `nmt prepare` (data.language_filter) catch, what does it cost
in good pairs, and what does it gain a model trained on a corpus spoiled as crawled ones are?

    python -m experiments.cleaning.language_filter [--spoiled 0.1] [--updates 1500] [--no-training | --trained]

Multi30k's en→de training corpus (29,000 pairs) with a seeded share of its pairs spoiled, a
quarter each way: the target replaced by the sentence's French translation (Multi30k's own), by
its Czech one, by the English source itself (left untranslated), and the pair reversed (German
source, English target). 1. Detection: each pair through nmt.data.language_filter.LanguageFilter at
thresholds 0, 0.5 and 0.9: the share of each kind of spoiled pair dropped, of the genuine ones
dropped, and pairs per second; the genuine pairs of en→fr and en→cs too. 2. Training: the demo's
settings for a fixed number of updates on the spoiled corpus, prepared without and with the
filter at 0.5 (the demo's tokenizer; runs/demo: `make demo` makes it), side by side, one CPU thread
each; dev loss and BLEU at the end, then test_2016_flickr translated from last.pt, sacreBLEU, and
the share of the test translations in German and the other languages found (`nmt score --langid de`). Results:
experiments/cleaning/results/language_filter.json.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import subprocess
import time
from pathlib import Path

from experiments.packing.packed_vs_plain import DEMO, RECIPE
from experiments.shared.runs import (DEMO_RUN, ROOT, bleu_and_chrf, last_validation, nmt, nmt_command, sets,
                                     train_side_by_side, with_the_demos_tokenizer)
from nmt.data.language_filter import LanguageFilter
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
RUNS = ROOT / "runs" / "cleaning"
MULTI30K = ROOT / "data" / "multi30k"
KINDS = ("french_target", "czech_target", "untranslated", "reversed")
THRESHOLDS = (0.0, 0.5, 0.9)


def lines(split: str, lang: str) -> list[str]:
    return gzip.open(MULTI30K / f"{split}.{lang}.gz", "rt", encoding="utf-8").read().splitlines()


def spoiled_corpus(share: float, seed: int = 1) -> tuple[list[tuple[str, str]], list[str | None]]:
    """The en→de training pairs with `share` of them spoiled (KINDS in turn, seeded); each pair's kind or None."""
    en, de, fr, cs = (lines("train", lang) for lang in ("en", "de", "fr", "cs"))
    chosen = random.Random(seed).sample(range(len(en)), round(share * len(en)))
    kinds: list[str | None] = [None] * len(en)
    pairs = list(zip(en, de))
    for n, i in enumerate(sorted(chosen)):
        kind = kinds[i] = KINDS[n % len(KINDS)]
        pairs[i] = {"french_target": (en[i], fr[i]), "czech_target": (en[i], cs[i]),
                    "untranslated": (en[i], en[i]), "reversed": (de[i], en[i])}[kind]
    return pairs, kinds


def detection(pairs, kinds, threshold: float) -> dict:
    """The share of each kind of pair the filter drops at `threshold`, and pairs per second."""
    language_filter = LanguageFilter(threshold)
    started = time.perf_counter()
    dropped = [language_filter.reason(s, t, ("en", "de")) is not None for s, t in pairs]
    seconds = time.perf_counter() - started
    shares = {}
    for kind in (None, *KINDS):
        of_kind = [d for d, k in zip(dropped, kinds) if k == kind]
        shares[kind or "genuine"] = {"pairs": len(of_kind), "dropped": round(sum(of_kind) / len(of_kind), 4)}
    return {"threshold": threshold, "dropped": shares, "pairs_per_s": round(len(pairs) / seconds)}


def genuine_dropped(tgt_lang: str, threshold: float) -> dict:
    """The share of Multi30k's genuine en→tgt_lang training pairs the filter drops."""
    language_filter = LanguageFilter(threshold)
    pairs = list(zip(lines("train", "en"), lines("train", tgt_lang)))
    dropped = sum(language_filter.reason(s, t, ("en", tgt_lang)) is not None for s, t in pairs)
    return {"pairs": len(pairs), "dropped": round(dropped / len(pairs), 4)}


def prepared_run(name: str, corpus: Path, extra: list[str]) -> None:
    """runs/cleaning/NAME with the demo's tokenizer and the spoiled corpus prepared."""
    out = with_the_demos_tokenizer(RUNS / name)
    nmt("prepare", RECIPE, *sets([f"output_dir={out}", *DEMO, f"data.train={corpus}", *extra]))


def trained_on(pairs: list[tuple[str, str]], corpus: Path, runs: dict[str, list[str]], updates: int,
               trained: bool = False) -> list[dict]:
    """Each of `runs` (named settings) prepared from `pairs`, written as `corpus`, with the demo's
    tokenizer, and trained side by side on the demo's settings for `updates` (`trained`: already
    done); each run's record: its pairs kept and dropped, its last validation, test BLEU and chrF
    from last.pt, and the languages of its test translations."""
    if not trained:
        RUNS.mkdir(parents=True, exist_ok=True)
        for lang, side in (("en", 0), ("de", 1)):
            with gzip.open(f"{corpus}.{lang}.gz", "wt", encoding="utf-8") as f:
                f.write("\n".join(pair[side] for pair in pairs) + "\n")
        for name, extra in runs.items():
            prepared_run(name, corpus, extra)
        train_side_by_side(runs, RUNS, RECIPE, [*DEMO, f"data.train={corpus}", f"train.max_steps={updates}",
                                                "train.valid_every=500"], on_demo_data=False)
    records = []
    for name, extra in runs.items():
        out = RUNS / name
        report = json.loads((out / "data" / "report.json").read_text())["splits"]["train"]
        records.append({"name": name, "settings": extra, "train_pairs": report["kept"], "dropped": report["dropped"],
                        **last_validation(out),
                        "test_last": bleu_and_chrf(out / "checkpoints" / "last.pt", out / "test.de", RECIPE),
                        "test_output": output_languages(out / "test.de")})
        print(json.dumps(records[-1]), flush=True)
    return records


def output_languages(hypotheses: Path) -> dict:
    """`nmt score --langid de`: the share of the lines in German, and the languages found."""
    scored = subprocess.run([nmt_command(), "score", str(hypotheses), "--langid", "de", "--json"], cwd=ROOT,
                            check=True, capture_output=True, text=True)
    langid = json.loads(scored.stdout)  # the one score asked for: an object
    return {"in_german": langid["share"], "languages": langid["languages"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spoiled", type=float, default=0.1)
    parser.add_argument("--updates", type=int, default=1500)
    parser.add_argument("--no-training", action="store_true")
    parser.add_argument("--trained", action="store_true", help="score the runs already trained in runs/cleaning")
    args = parser.parse_args()
    pairs, kinds = spoiled_corpus(args.spoiled)
    result = {"spoiled": args.spoiled, "kinds": list(KINDS),
              "detection": [detection(pairs, kinds, t) for t in THRESHOLDS],
              "genuine_dropped_at_0.5": {f"en-{lang}": genuine_dropped(lang, 0.5) for lang in ("fr", "cs")}}
    print(json.dumps(result), flush=True)
    if not args.no_training:
        if not (DEMO_RUN / "spm.model").is_file():
            raise SystemExit("runs/demo: no tokenizer (run `make demo` first)")
        # data.remove_copies (on by default) would drop the untranslated kind before the identifier
        # sees it: off in both runs, so that they measure the identifier on all four kinds
        runs = {"unfiltered": ["data.remove_copies=false"],
                "filtered": ["data.language_filter=0.5", "data.remove_copies=false"]}
        result["training"] = trained_on(pairs, RUNS / "spoiled", runs, args.updates, args.trained)
    write_json(RESULTS / "language_filter.json", result)


if __name__ == "__main__":
    main()
