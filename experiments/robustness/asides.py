"""Asides in parentheses (`make bench-asides`): the demo model with decode.parentheses on (an aside
translated apart and put back by alignment) and off, on test_2016_flickr as shipped (one line
holds parentheses), and with each two test lines made one: the first, then the second in
parentheses in place of its full stop, its first letter in lower case ("A man jumps … on the
ground (a young girl sitting on a wooden chair)."); the reference is the two references made one
alike (the second as it stands).

BLEU, the length ratio, and how many outputs hold one "(" and one ")". Writes
experiments/robustness/results/asides.json.

    python -m experiments.robustness.asides [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import random
from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_test_set, score, translated
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine
from nmt.info import checkpoint_info
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"


def without_stop(line: str) -> str:
    return line[:-1].rstrip() if line.endswith(".") else line


def with_aside(line: str, aside: str) -> str:
    return f"{without_stop(line)} ({without_stop(aside)})."


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    engine = load_engine([checkpoint])
    recipe = load_recipe(args.recipe).decode
    settings = {f"parentheses_{state}": recipe.model_copy(update={"parentheses": state == "on"}) for state in ("on", "off")}
    order = list(range(len(sources)))
    random.Random(1).shuffle(order)
    pairs = list(zip(order[0::2], order[1::2]))
    forms = {"as_shipped": (sources, references),
             "two_lines_the_second_an_aside": (
                 [with_aside(sources[a], sources[b][:1].lower() + sources[b][1:]) for a, b in pairs],
                 [with_aside(references[a], references[b]) for a, b in pairs])}
    result: dict = {"lines": len(sources), "lines_shipped_with_parentheses": sum("(" in s for s in sources)}
    for form, (lines, refs) in forms.items():
        result[form] = {"lines": len(lines)}
        for name, cfg in settings.items():
            outputs, seconds = translated(engine, lines, cfg)
            result[form][name] = {
                "bleu": score(outputs, refs),
                "outputs_with_one_pair_of_parentheses": sum(o.count("(") == 1 and o.count(")") == 1 for o in outputs),
                "seconds": round(seconds, 2),
                "examples": [{"source": s, "output": o} for s, o in zip(lines[:3], outputs[:3])]}
            print(form, name, result[form][name]["bleu"]["bleu"], result[form][name]["bleu"]["length_ratio"],
                  result[form][name]["outputs_with_one_pair_of_parentheses"], flush=True)
    write_json(RESULTS / "asides.json", {"checkpoint": str(checkpoint), "updates": checkpoint_info(checkpoint)["step"],
                                         "test": args.test, **result})


if __name__ == "__main__":
    main()
