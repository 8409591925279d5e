"""Marks the vocabulary lacks (`make bench-punctuation`): the demo model, whose Multi30k
vocabulary has no em dash and no guillemets, with such marks given to it as the nearest it has
(nmt.decode.text.punctuation, always on) and, for comparison, with that step patched out (the
model reads each as an unknown piece), on test_2016_flickr as shipped and on its lines with
commas, each ", " written " — " as a parenthetical dash (the references as they are: German
writes commas there). Writes experiments/robustness/results/punctuation.json.

    python -m experiments.robustness.punctuation [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

from pathlib import Path
from unittest import mock

from experiments.shared.demo_model import compare_settings, demo_parser, demo_test_set, score, write_study
from nmt.config import load_recipe
from nmt.decode import translate
from nmt.decode.engines.engine import load_engine

RESULTS = Path(__file__).resolve().parent / "results"
EM_DASH = "\u2014"


def measure(outputs: list[str], refs: list[str]) -> dict:
    return {"bleu": score(outputs, refs)}


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    cfg = load_recipe(args.recipe).decode
    engine = load_engine([checkpoint])
    dashed = [(s.replace(", ", f" {EM_DASH} "), r) for s, r in zip(sources, references) if ", " in s]
    forms = {"as_shipped": (sources, references),
             "commas_written_as_em_dashes": ([s for s, _ in dashed], [r for _, r in dashed])}
    nearest = compare_settings(engine, forms, {"nearest_mark": cfg}, measure)
    with mock.patch.object(translate, "with_nearest_marks", lambda text, reads: text):
        unknown = compare_settings(engine, forms, {"read_as_unknown_pieces": cfg}, measure)
    commas = compare_settings(engine, {"the_same_lines_with_their_commas": (
        [s for s, r in zip(sources, references) if ", " in s], [r for _, r in dashed])}, {"as_written": cfg}, measure)
    write_study(RESULTS / "punctuation.json", checkpoint, args.test,
                {**{form: {**nearest[form], **unknown[form]} for form in forms}, **commas})


if __name__ == "__main__":
    main()
