"""Asides in parentheses (`make bench-asides`): the demo model with decode.parentheses off (the
model reads the parentheses in place) and on, at the default phrase length (an aside of up to
nmt.decode.text.asides.PHRASE_WORDS words translated in its sentence, a longer one apart) and at
others (0: every aside apart; 99: every one in its sentence), on three forms of a Multi30k set:
- as shipped (test_2016_flickr: one line holds parentheses);
- two lines made one, the second in parentheses in place of the first's full stop, its first
  letter in lower case ("A man jumps … on the ground (a young girl sitting on a wooden chair).");
  the reference the two references made one alike;
- each line whose last 2 to 5 words are a prepositional phrase, with that phrase in parentheses
  ("A Boston Terrier is running … in front (of a white fence)."), scored with the output's
  parentheses taken out against the reference as it is;
- a word in parentheses at each line's end, from a list of words with their German
  translations ("… on a bench (today)." against "… auf einer Bank (heute)."); a single word is
  always translated apart, so PHRASE_WORDS changes nothing there.

BLEU, the length ratio, and how many outputs hold one "(" and one ")". The threshold was chosen
on val (`--test data/multi30k/val --out asides_val`). Writes experiments/robustness/results/asides.json.

    python -m experiments.robustness.asides [-c runs/demo/checkpoints/best.pt] [--test STEM] [--out NAME]
"""

from __future__ import annotations

import contextlib
import random
import re
from pathlib import Path

import nmt.decode.text.asides as asides
from experiments.shared.demo_model import compare_settings, demo_parser, demo_test_set, score, write_study
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine

RESULTS = Path(__file__).resolve().parent / "results"
PREPOSITIONS = frozenset("in on at with near by under behind beside through over into from across along inside "
                         "outside during of for".split())
PHRASE_WORDS = (asides.PHRASE_WORDS, 0, 3, 4, 6, 8, 99)
ONE_WORD = [("today", "heute"), ("again", "wieder"), ("outside", "draußen"), ("probably", "wahrscheinlich"),
            ("here", "hier"), ("too", "auch"), ("maybe", "vielleicht"), ("again?", "wieder?")]


def without_stop(line: str) -> str:
    return line[:-1].rstrip() if line.endswith(".") else line


def with_aside(line: str, aside: str) -> str:
    return f"{without_stop(line)} ({without_stop(aside)})."


def phrase_in_parentheses(line: str) -> str | None:
    """`line` with its final prepositional phrase of 2 to 5 words in parentheses; None without one."""
    if not line.endswith("."):
        return None
    words = line[:-1].split()
    for start in range(len(words) - 2, max(len(words) - 6, 1), -1):
        if words[start].lower() in PREPOSITIONS:
            return f"{' '.join(words[:start])} ({' '.join(words[start:])})."
    return None


def without_parentheses(line: str) -> str:
    return " ".join(re.sub(r"[()]", " ", line).split()).replace(" .", ".")


def measure_forms(strip: bool):
    """The measure of a form whose outputs are scored as they are, or with their parentheses taken out."""
    def measure(outputs: list[str], refs: list[str]) -> dict:
        return {"bleu": score([without_parentheses(o) for o in outputs] if strip else outputs, refs),
                "outputs_with_one_pair_of_parentheses": sum(o.count("(") == 1 and o.count(")") == 1 for o in outputs)}
    return measure


@contextlib.contextmanager
def phrase_words(words: int):
    """nmt.decode.text.asides.PHRASE_WORDS set to `words` for a while."""
    default, asides.PHRASE_WORDS = asides.PHRASE_WORDS, words
    try:
        yield
    finally:
        asides.PHRASE_WORDS = default


def main() -> None:
    parser = demo_parser()
    parser.add_argument("--out", default="asides")
    args = parser.parse_args()
    checkpoint, sources, references = demo_test_set(args)
    engine = load_engine([checkpoint])
    recipe = load_recipe(args.recipe).decode
    order = list(range(len(sources)))
    random.Random(1).shuffle(order)
    pairs = list(zip(order[0::2], order[1::2]))
    phrased = [(phrase_in_parentheses(s), r) for s, r in zip(sources, references) if phrase_in_parentheses(s)]
    forms = {"as_shipped": (sources, references, False),
             "two_lines_the_second_an_aside": (
                 [with_aside(sources[a], sources[b][:1].lower() + sources[b][1:]) for a, b in pairs],
                 [with_aside(references[a], references[b]) for a, b in pairs], False),
             "final_phrase_in_parentheses": ([s for s, _ in phrased], [r for _, r in phrased], True),
             "one_word_in_parentheses_at_the_end": (
                 [with_aside(s, ONE_WORD[i % len(ONE_WORD)][0]) for i, s in enumerate(sources)],
                 [with_aside(r, ONE_WORD[i % len(ONE_WORD)][1]) for i, r in enumerate(references)], False)}
    default = asides.PHRASE_WORDS
    settings = [("parentheses_off", False, default)] + [(f"parentheses_on_phrase_words_{n}", True, n) for n in PHRASE_WORDS]
    result: dict = {form: {} for form in forms}
    for name, on, words in settings:
        for form, (lines, refs, strip) in forms.items():
            if form in ("as_shipped", "one_word_in_parentheses_at_the_end") and on and words != default:
                continue
            with phrase_words(words):
                part = compare_settings(engine, {form: (lines, refs)}, {name: recipe.model_copy(update={"parentheses": on})},
                                        measure_forms(strip))
            result[form] = {**result[form], **part[form]}
    write_study(RESULTS / f"{args.out}.json", checkpoint, args.test, {
        "lines_with_parentheses": sum("(" in s for s in sources), "default_phrase_words": default, **result})


if __name__ == "__main__":
    main()
