"""Control characters in the source (`make bench-controls`): test_2016_flickr with a vertical tab
(U+000B: PowerPoint's and Word's line break within a paragraph, kept by text copied out of them)
in place of every third space, translated by the demo model with control characters made readable
(nmt.decode.text.invisible.readable_controls, always on: each a space) and, for comparison, with
that step patched out (sentencepiece then deletes the tab, joining the words on either side).
Writes experiments/robustness/results/controls.json.

    python -m experiments.robustness.controls [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

from pathlib import Path

from experiments.shared.demo_model import compare_with_step_bypassed, demo_parser, demo_study, score, write_study
from nmt.decode import translate

RESULTS = Path(__file__).resolve().parent / "results"
VERTICAL_TAB = "\x0b"


def with_line_breaks(line: str) -> str:
    """Every third space a vertical tab."""
    words = line.split(" ")
    return "".join(word + (VERTICAL_TAB if i % 3 == 2 else " ") for i, word in enumerate(words[:-1])) + words[-1]


def measure(outputs: list[str], refs: list[str]) -> dict:
    return {"bleu": score(outputs, refs), "outputs_with_a_control_character": sum(VERTICAL_TAB in o for o in outputs)}


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references, cfg, engine = demo_study(args)
    forms = {"as_shipped": (sources, references),
             "a_vertical_tab_for_every_third_space": ([with_line_breaks(s) for s in sources], references)}
    result = compare_with_step_bypassed(engine, forms, cfg, measure, (translate, "readable_controls", lambda text: text),
                                        ("each_a_space", "read_as_they_are"))
    result["lines_with_a_vertical_tab"] = sum(VERTICAL_TAB in with_line_breaks(s) for s in sources)
    write_study(RESULTS / "controls.json", checkpoint, args.test, result)


if __name__ == "__main__":
    main()
