"""Soft hyphens in the source (`make bench-invisible`): test_2016_flickr with a soft hyphen (U+00AD,
which text copied from a web page or a PDF keeps as a place to hyphenate) in the middle of every
word of 7 letters or more, translated by the demo model with invisible characters the vocabulary
lacks left out of words (nmt.decode.text.invisible, always on) and, for comparison, with that
step patched out (the model reads each soft hyphen as an unknown piece). Writes
experiments/robustness/results/invisible.json.

    python -m experiments.robustness.invisible [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import re
from pathlib import Path

from experiments.shared.demo_model import compare_with_step_bypassed, demo_parser, demo_study, score, write_study
from nmt.decode import translate

RESULTS = Path(__file__).resolve().parent / "results"
SOFT_HYPHEN = "\u00ad"


def hyphenated(line: str) -> str:
    return re.sub(r"\b([^\W\d_]{7,})\b", lambda m: m.group()[:len(m.group()) // 2] + SOFT_HYPHEN
                  + m.group()[len(m.group()) // 2:], line)


def measure(outputs: list[str], refs: list[str]) -> dict:
    return {"bleu": score(outputs, refs), "outputs_with_a_soft_hyphen": sum(SOFT_HYPHEN in o for o in outputs)}


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references, cfg, engine = demo_study(args)
    forms = {"as_shipped": (sources, references),
             "soft_hyphens_in_words_of_7_letters_or_more": ([hyphenated(s) for s in sources], references)}
    result = compare_with_step_bypassed(engine, forms, cfg, measure,
                                        (translate, "without_invisible", lambda text, reads: text),
                                        ("left_out", "read_as_unknown_pieces"))
    result["lines_with_a_soft_hyphen"] = sum(SOFT_HYPHEN in hyphenated(s) for s in sources)
    write_study(RESULTS / "invisible.json", checkpoint, args.test, result)


if __name__ == "__main__":
    main()
