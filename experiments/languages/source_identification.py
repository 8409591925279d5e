"""How often does `nmt translate --src-lang auto` read a line's language right, and at what cost?

    python -m experiments.languages.source_identification

Multi30k's test_2016_flickr in English, German, French and Czech (1,000 lines each), each line
through nmt.data.source_language.SourceGuess as a model reading all four languages (and as models
reading two) would have it identified: whole lines, and their first 2, 4 and 8 words (short
inputs: titles, chat). The share identified right, the most frequent confusions, and milliseconds
per line on one thread. No model is trained: the choice does not depend on the weights. Results:
experiments/languages/results/source_identification.json.
"""

from __future__ import annotations

import gzip
import time
from collections import Counter
from pathlib import Path

from nmt.config import DataConfig
from nmt.data.source_language import SourceGuess
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
LANGUAGES = ("en", "de", "fr", "cs")
READER_SETS = (LANGUAGES, ("en", "de"), ("en", "fr"), ("de", "cs"))
WORDS = (2, 4, 8, None)  # None: the whole line


def test_lines(lang: str) -> list[str]:
    return gzip.open(ROOT / "data" / "multi30k" / f"test_2016_flickr.{lang}.gz", "rt", encoding="utf-8").read().splitlines()


def guess_for(readers: tuple[str, ...]) -> SourceGuess:
    """The guess of a model trained from each of `readers` into one target (xx)."""
    data = DataConfig(src_lang=readers[0], tgt_lang="xx", valid="valid", language_token="both",
                      train=[{"path": "train", "src_lang": lang, "tgt_lang": "xx"} for lang in readers])
    return SourceGuess(data)


def measured(readers: tuple[str, ...], words: int | None, texts: dict[str, list[str]]) -> dict:
    guess = guess_for(readers)
    guess.language("warm-up", "xx")  # the identifier's model read before the clock starts
    right, total, confusions, seconds = 0, 0, Counter(), 0.0
    for lang in readers:
        for line in texts[lang]:
            text = " ".join(line.split()[:words]) if words else line
            start = time.perf_counter()
            found = guess.language(text, "xx")
            seconds += time.perf_counter() - start
            total += 1
            right += found == lang
            if found != lang:
                confusions[f"{lang} read as {found}"] += 1
    return {"readers": list(readers), "words": words or "whole line", "lines": total, "right": right,
            "share_right": round(right / total, 4), "confusions": dict(confusions.most_common(5)),
            "ms_per_line": round(1000 * seconds / total, 3)}


def main() -> None:
    import torch

    torch.set_num_threads(1)
    texts = {lang: test_lines(lang) for lang in LANGUAGES}
    runs = [measured(readers, words, texts) for readers in READER_SETS for words in WORDS]
    for run in runs:
        print(f"{'+'.join(run['readers']):12} {str(run['words']):>10}: {run['share_right']:.2%} right "
              f"({run['lines'] - run['right']} wrong; {run['ms_per_line']} ms/line) {run['confusions']}")
    write_json(RESULTS / "source_identification.json",
               {"what": "--src-lang auto (nmt.data.source_language): Multi30k test_2016_flickr lines identified among "
                        "a model's source languages, whole and cut to their first words",
                "identifier": "py3langid", "runs": runs})


if __name__ == "__main__":
    main()
