"""Emoticons typed in ASCII (`make bench-emoticons`): the demo model with decode.copy_verbatim on
(an emoticon such as ":)" copied as a verbatim span, placed by alignment) and off, on
test_2016_flickr as shipped, with ":)" after each line's full stop ("… park. :)"), and with ":)"
in place of it ("… park :)"), the references changed alike.

BLEU against the references so changed, and without the emoticon on either side, and how many
outputs keep it. copy_verbatim off also leaves numbers to the model: the as-shipped rows show what
that alone changes. Writes experiments/robustness/results/emoticons.json.

    python -m experiments.robustness.emoticons [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

from pathlib import Path

from experiments.shared.demo_model import compare_settings, demo_parser, demo_test_set, score, write_study
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine

RESULTS = Path(__file__).resolve().parent / "results"
EMOTICON = ":)"


def after_stop(line: str) -> str:
    return f"{line} {EMOTICON}"


def instead_of_stop(line: str) -> str:
    return f"{line[:-1].rstrip() if line.endswith('.') else line} {EMOTICON}"


def without(line: str) -> str:
    return " ".join(line.replace(EMOTICON, " ").split())


def measure(outputs: list[str], refs: list[str]) -> dict:
    return {"bleu": score(outputs, refs),
            "bleu_without_the_emoticon": score([without(o) for o in outputs], [without(r) for r in refs]),
            "outputs_keeping_the_emoticon": sum(EMOTICON in o for o in outputs)}


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    recipe = load_recipe(args.recipe).decode
    settings = {f"copy_verbatim_{state}": recipe.model_copy(update={"copy_verbatim": state == "on"})
                for state in ("on", "off")}
    forms = {"as_shipped": (sources, references),
             "after_the_full_stop": ([after_stop(s) for s in sources], [after_stop(r) for r in references]),
             "instead_of_the_full_stop": ([instead_of_stop(s) for s in sources],
                                          [instead_of_stop(r) for r in references])}
    result = compare_settings(load_engine([checkpoint]), forms, settings, measure)
    write_study(RESULTS / "emoticons.json", checkpoint, args.test, {"emoticon": EMOTICON, **result})


if __name__ == "__main__":
    main()
