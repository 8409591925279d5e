"""Quantities written as digits (`make bench-quantities`): what decode.copy_verbatim does to a
number that is part of the sentence ("3 people sit in a cave"), not an item beside it.

Each set is translated by the demo model four ways: copy_verbatim on with quantities_in_place
(the default: a plain number before a word stays in the sentence, and where the output writes it
its own way, the word aligned to it becomes its digits; every other span taken out); on with
every number taken out (quantities_in_place off: the words
translated without it, the number put back by alignment); copy_verbatim off (the line as
written); and as written with all its numbers as lexical constraints (what a user can ask per
line). The sets, from test_2016_flickr:
- quantities as digits: every pair whose English has exactly one number word from two to ten and
  whose German reference has exactly its translation (zwei ... zehn), both written as digits
  ("3 people", "3 Leute");
- the test's own lines that hold a number as written (numbers on jerseys, "the 8 second clock");
- inserted items: the robustness study's verbatim form, a number, date, URL, emoji, code or
  handle inserted between two words of each of the first 300 lines ("42" and "1102" are
  quantities where a word follows): outputs that hold the item, and BLEU with it taken out;
- the test set as shipped: BLEU, and the seconds each way takes.
BLEU and chrF against the references (with digits); how many outputs hold the digits, how many
put them before a singular article ("6 Ein Mountainbiker"), and how many write a number from two
to ten both as digits and as a German word ("Zwei Männer ... 2"); and, to read, the outputs of
the lines where keeping quantities in place changed the output.
Writes experiments/robustness/results/quantities.json.

    python -m experiments.robustness.quantities [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import re
from pathlib import Path

import sacrebleu

from experiments.robustness.stress_forms import with_verbatim, without
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


DIGITS_TO_WORDS = {digits: german for german, digits in NUMBERS.values()}


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


WAYS = ("quantities_in_place", "all_taken_out", "copy_verbatim_off", "numbers_as_a_constraint")


def four_ways(engine, cfg, sources: list[str], references: list[str],
              items: list[str] | None = None) -> tuple[dict, list[dict]]:
    """Each line translated the four WAYS: the scores and counts of each, and the outputs of the
    lines where the default's differs from all_taken_out's. With `items` (one inserted into each
    line), also how many outputs hold their item, and BLEU with it taken out."""
    settings = {"quantities_in_place": cfg.model_copy(update={"copy_verbatim": True, "quantities_in_place": True}),
                "all_taken_out": cfg.model_copy(update={"copy_verbatim": True, "quantities_in_place": False}),
                "copy_verbatim_off": cfg.model_copy(update={"copy_verbatim": False}),
                "numbers_as_a_constraint": cfg.model_copy(update={"copy_verbatim": False})}
    runs, outputs = {}, {}
    numbers = [numbers_of(s) for s in sources]
    for name in WAYS:
        outputs[name], seconds = translated(engine, sources, settings[name],
                                            constraints=numbers if name == "numbers_as_a_constraint" else None)
        chrf = sacrebleu.metrics.CHRF().corpus_score(outputs[name], [references]).score
        runs[name] = {**score(outputs[name], references), "chrf": round(chrf, 2), "seconds": round(seconds, 1),
                      "outputs_with_every_number": sum(all(re.search(rf"(?<![\d.,]){re.escape(n)}(?![\d])", o)
                                                           for n in found) for found, o in zip(numbers, outputs[name])),
                      # a number put back before a singular article: the model translated the line
                      # without it, in the singular ("6 Ein Mountainbiker fährt ...")
                      "number_before_a_singular_article": sum(
                          any(re.search(rf"(?<![\d.,]){re.escape(n)} [Ee]ine?[mnrs]?\b", o) for n in found)
                          for found, o in zip(numbers, outputs[name])),
                      # a number written twice, as a word and as digits: the model wrote the word
                      # and a constraint made it write the digits too ("Zwei Männer ... 2 Reis")
                      "number_also_as_a_word": sum(
                          any(n in DIGITS_TO_WORDS and re.search(rf"\b{DIGITS_TO_WORDS[n]}\b", o, re.IGNORECASE)
                              and re.search(rf"(?<![\d.,]){n}(?![\d])", o) for n in found)
                          for found, o in zip(numbers, outputs[name]))}
        if items:
            runs[name]["items_copied"] = sum(item in out for item, out in zip(items, outputs[name]))
            runs[name]["item_taken_out"] = score([without(o, i) for i, o in zip(items, outputs[name])], references)
        print(name, runs[name], flush=True)
    lines = [{"source": s, "reference": r, **{name: o[i] for name, o in outputs.items()}}
             for i, (s, r) in enumerate(zip(sources, references))
             if outputs["quantities_in_place"][i] != outputs["all_taken_out"][i]]
    return runs, lines


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    engine = load_engine([checkpoint])
    cfg = load_recipe(args.recipe).decode
    inserted, items = with_verbatim(sources[:300])
    sets = {"quantities_as_digits": (*with_digits(sources, references), None),
            "test_lines_with_numbers": (*zip(*[(s, r) for s, r in zip(sources, references) if numbers_of(s)]), None),
            "inserted_items": (inserted, references[:300], items),
            "test_set": (sources, references, None)}
    results = {}
    for name, (chosen, their_references, their_items) in sets.items():
        print(name, len(chosen), flush=True)
        runs, lines = four_ways(engine, cfg, list(chosen), list(their_references), their_items)
        results[name] = {"lines": len(chosen), "runs": runs, "lines_where_the_default_changed": lines}
    info = checkpoint_info(checkpoint)
    write_json(RESULTS / "quantities.json", {"checkpoint": str(checkpoint), "updates": info["step"], "test": args.test,
                                             **results})


if __name__ == "__main__":
    main()
