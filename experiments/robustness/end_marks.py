"""Sentences keep the mark they end in (`make bench-end-marks`): the demo model with
decode.end_marks on and off, each with decode.complete_sentences on (the Multi30k recipe's: a
sentence ending in any of these marks but "?" given to the model with a full stop) and off, on test_2016_flickr as shipped (no line
ends in any of these marks, so nothing may change), and with every line ending in "!", "?"
(a statement asked as a question: "A man in an orange hat starring at something?"), "...", ":"
or "," instead of its full stop, source and reference alike.

BLEU and chrF against the references so changed, and how many outputs end in the punctuation
their reference ends in. Writes experiments/robustness/results/end_marks.json.

    python -m experiments.robustness.end_marks [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import re
from pathlib import Path

import sacrebleu

from experiments.shared.demo_model import compare_settings, demo_parser, demo_test_set, score, write_study
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine

RESULTS = Path(__file__).resolve().parent / "results"


def ending_in(line: str, mark: str) -> str:
    """`line` with its final full stop, or its end, made `mark`."""
    return (line[:-1] if line.endswith(".") else line) + mark


def ending(line: str) -> str:
    """The punctuation a line ends in ("." "..." "?!")."""
    return re.search(r"[.!?:,…]*$", line).group()


def measure(outputs: list[str], refs: list[str]) -> dict:
    return {"bleu": score(outputs, refs), "chrf": round(sacrebleu.corpus_chrf(outputs, [refs]).score, 2),
            "outputs_ending_as_their_reference": sum(ending(o) == ending(r) for o, r in zip(outputs, refs))}


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    recipe = load_recipe(args.recipe).decode
    settings = {f"end_marks_{marks}_complete_sentences_{complete}": recipe.model_copy(update={
        "end_marks": marks == "on", "complete_sentences": complete == "on"})
        for marks in ("on", "off") for complete in ("on", "off")}
    forms = {"as_shipped": (sources, references),
             "exclamations": ([ending_in(s, "!") for s in sources], [ending_in(r, "!") for r in references]),
             "questions": ([ending_in(s, "?") for s in sources], [ending_in(r, "?") for r in references]),
             **{name: ([ending_in(s, mark) for s in sources], [ending_in(r, mark) for r in references])
                for name, mark in (("ellipses", "..."), ("colons", ":"), ("commas", ","))}}
    result = compare_settings(load_engine([checkpoint]), forms, settings, measure)
    write_study(RESULTS / "end_marks.json", checkpoint, args.test, {
        "lines_shipped_ending_in_one_of_these_marks": sum(s.endswith(("?", "!", "...", ":", ",")) for s in sources),
        **result})


if __name__ == "__main__":
    main()
