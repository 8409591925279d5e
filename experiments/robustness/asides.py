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
  parentheses taken out against the reference as it is.

BLEU, the length ratio, and how many outputs hold one "(" and one ")". The threshold was chosen
on val (`--test data/multi30k/val --out asides_val`). Writes experiments/robustness/results/asides.json.

    python -m experiments.robustness.asides [-c runs/demo/checkpoints/best.pt] [--test STEM] [--out NAME]
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import nmt.decode.text.asides as asides
from experiments.shared.demo_model import demo_parser, demo_test_set, score, translated
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine
from nmt.info import checkpoint_info
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
PREPOSITIONS = frozenset("in on at with near by under behind beside through over into from across along inside "
                         "outside during of for".split())
PHRASE_WORDS = (asides.PHRASE_WORDS, 0, 3, 4, 6, 8, 99)


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
             "final_phrase_in_parentheses": ([s for s, _ in phrased], [r for _, r in phrased], True)}
    settings = [("parentheses_off", False, asides.PHRASE_WORDS)] + [
        (f"parentheses_on_phrase_words_{n}", True, n) for n in PHRASE_WORDS]
    result: dict = {"lines": len(sources), "lines_with_parentheses": sum("(" in s for s in sources),
                    "default_phrase_words": asides.PHRASE_WORDS}
    default = asides.PHRASE_WORDS
    for form, (lines, refs, strip) in forms.items():
        result[form] = {"lines": len(lines)}
        for name, on, words in settings:
            if form == "as_shipped" and on and words != default:
                continue
            asides.PHRASE_WORDS = words
            outputs, seconds = translated(engine, lines, recipe.model_copy(update={"parentheses": on}))
            asides.PHRASE_WORDS = default
            result[form][name] = {
                "bleu": score([without_parentheses(o) for o in outputs] if strip else outputs, refs),
                "outputs_with_one_pair_of_parentheses": sum(o.count("(") == 1 and o.count(")") == 1 for o in outputs),
                "seconds": round(seconds, 2),
                "examples": [{"source": s, "output": o} for s, o in zip(lines[:3], outputs[:3])]}
            print(form, name, result[form][name]["bleu"]["bleu"], result[form][name]["bleu"]["length_ratio"],
                  result[form][name]["outputs_with_one_pair_of_parentheses"], flush=True)
    write_json(RESULTS / f"{args.out}.json", {"checkpoint": str(checkpoint), "updates": checkpoint_info(checkpoint)["step"],
                                              "test": args.test, **result})


if __name__ == "__main__":
    main()
