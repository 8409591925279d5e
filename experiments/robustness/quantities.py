"""Quantities written as digits (`make bench-quantities`): what decode.copy_verbatim does to a
number that is part of the sentence ("3 people sit in a cave"), not an item beside it.

Two sets from test_2016_flickr. Quantities as digits: every pair whose English has exactly one number word from two to ten and
whose German reference has exactly its translation (zwei ... zehn): both written as digits ("3
people", "3 Leute"). The demo model translates them with copy_verbatim on (the default: the
digits taken out of the line, the rest translated, the digits put back by alignment), off (the
line translated as written), and off with the digits as a lexical constraint (the line as written,
its output made to hold them: an alternative to taking them out). The other set: the test's own
lines that hold a number as written (numbers on jerseys, "the 8 second clock"), the same three ways. BLEU and chrF against the references with digits; how many outputs
hold the digits, and how many put them before a singular article ("6 Ein Mountainbiker"); and the
outputs themselves, to read.
Writes experiments/robustness/results/quantities.json.

    python -m experiments.robustness.quantities [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import re
from pathlib import Path

import sacrebleu

from experiments.shared.demo_model import demo_parser, demo_test_set, score, translated
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine
from nmt.decode.text.verbatim import verbatim_spans
from nmt.info import checkpoint_info
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"

NUMBERS = {"two": ("zwei", "2"), "three": ("drei", "3"), "four": ("vier", "4"), "five": ("fünf", "5"),
           "six": ("sechs", "6"), "seven": ("sieben", "7"), "eight": ("acht", "8"), "nine": ("neun", "9"),
           "ten": ("zehn", "10")}


def with_digits(sources: list[str], references: list[str]) -> tuple[list[str], list[str]]:
    """The pairs with one number word on each side that translate each other, as digits."""
    pairs = []
    for source, reference in zip(sources, references):
        english = [w for w in re.findall(r"[A-Za-z]+", source) if w.lower() in NUMBERS]
        if len(english) != 1:
            continue
        german, digits = NUMBERS[english[0].lower()]
        found = [w for w in re.findall(r"\w+", reference) if w.lower() == german]
        if len(found) != 1:
            continue
        pairs.append((re.sub(rf"\b{english[0]}\b", digits, source, count=1),
                      re.sub(rf"\b{found[0]}\b", digits, reference, count=1)))
    return [p[0] for p in pairs], [p[1] for p in pairs]


def numbers_of(line: str) -> list[str]:
    """The numbers (prices, dates and times included) among the spans copy_verbatim takes out of `line`."""
    spans = [line[start:end] for start, end in verbatim_spans(line)]
    return [span for span in spans if re.fullmatch(r"[$€£¥₹+-]?\d[\d.,:/-]*[%$€£¥₹]?", span)]


def three_ways(engine, cfg, sources: list[str], references: list[str]) -> tuple[dict, dict]:
    """Each line with copy_verbatim on, off, and as written with its numbers as a constraint:
    the scores and counts of each, and the outputs."""
    runs, outputs = {}, {}
    numbers = [numbers_of(s) for s in sources]
    for name in ("copy_verbatim_on", "copy_verbatim_off", "numbers_as_a_constraint"):
        settings = cfg.model_copy(update={"copy_verbatim": name == "copy_verbatim_on"})
        # as a constraint: the line as written, its numbers a lexical constraint
        outputs[name], seconds = translated(engine, sources, settings,
                                            constraints=numbers if name == "numbers_as_a_constraint" else None)
        chrf = sacrebleu.metrics.CHRF().corpus_score(outputs[name], [references]).score
        runs[name] = {**score(outputs[name], references), "chrf": round(chrf, 2), "seconds": round(seconds, 1),
                      "outputs_with_every_number": sum(all(re.search(rf"(?<![\d.,]){re.escape(n)}(?![\d])", o)
                                                           for n in found) for found, o in zip(numbers, outputs[name])),
                      # a number put back before a singular article: the model translated the line
                      # without it, in the singular ("6 Ein Mountainbiker fährt ...")
                      "number_before_a_singular_article": sum(
                          any(re.search(rf"(?<![\d.,]){re.escape(n)} [Ee]ine?[mnrs]?\b", o) for n in found)
                          for found, o in zip(numbers, outputs[name]))}
        print(name, runs[name], flush=True)
    lines = [{"source": s, "reference": r, **{name: o[i] for name, o in outputs.items()}}
             for i, (s, r) in enumerate(zip(sources, references))]
    return runs, lines


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    engine = load_engine([checkpoint])
    cfg = load_recipe(args.recipe).decode
    sets = {"quantities_as_digits": with_digits(sources, references),
            "test_lines_with_numbers": tuple(zip(*[(s, r) for s, r in zip(sources, references) if numbers_of(s)]))}
    results = {}
    for name, (chosen, their_references) in sets.items():
        print(name, len(chosen), flush=True)
        runs, lines = three_ways(engine, cfg, list(chosen), list(their_references))
        results[name] = {"lines": len(chosen), "runs": runs, "lines_translated": lines}
    info = checkpoint_info(checkpoint)
    write_json(RESULTS / "quantities.json", {"checkpoint": str(checkpoint), "updates": info["step"], "test": args.test,
                                             **results})


if __name__ == "__main__":
    main()
