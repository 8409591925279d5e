"""Markup found without a flag (`make bench-markup-detection`): the demo model on test_2016_flickr's
tag stress forms (one word in <b>, two in <a href title="a > b">; experiments.robustness.stress_forms)
through `nmt translate`'s own path (nmt.decode.stream.translate_stream) with each input format:
plain (the default: a line that looks like markup is read as markup), markup (every line) and
text (every line as text). For each: outputs with exactly the source's tags, well-formed, and
BLEU of the outputs' text against the references. Also the rule's false alarms: how many lines
of the plain test set, and of the test set with a lone "<" put between two words ("a < b"), the
plain format reads as markup, and whether their outputs are those of the text format.
Writes experiments/robustness/results/markup_detection.json.

    python -m experiments.robustness.markup_detection [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from experiments.robustness.stress_forms import tagged, tags_of, text_of
from experiments.shared.demo_model import demo_parser, demo_test_set, score
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine
from nmt.decode.stream import translate_stream
from nmt.decode.text.markup import read_as_markup
from nmt.info import checkpoint_info
from tools.results import write_json

FORMATS = ("plain", "markup", "text")


def with_lone_angle(sources: list[str], seed: int = 1) -> list[str]:
    """Each source with " < " put between two of its words (text, not markup)."""
    rng = random.Random(seed)
    out = []
    for source in sources:
        words = source.split()
        at = rng.randrange(1, len(words)) if len(words) > 1 else len(words)
        out.append(" ".join(words[:at] + ["<"] + words[at:]))
    return out


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    engine = load_engine([checkpoint])
    cfg = load_recipe(args.recipe).decode

    def translate(lines: list[str], input_format: str) -> tuple[list[str], float, list[str]]:
        warnings: list[str] = []
        start = time.perf_counter()
        out = list(translate_stream(engine, lines, cfg, warn=warnings.append, input_format=input_format))
        return out, time.perf_counter() - start, warnings

    forms = {}
    for width, name in ((1, "tags_one_word"), (2, "tags_two_words")):
        lines, _ = tagged(sources, width)
        form = {"lines": len(lines), "read_as_markup_by_the_rule": sum(map(read_as_markup, lines))}
        for input_format in FORMATS:
            outputs, seconds, warnings = translate(lines, input_format)
            same = sum(tags_of(out) == tags_of(line) for out, line in zip(outputs, lines))
            form[input_format] = {"same_tags_well_formed": same, "seconds": round(seconds, 1),
                                  "warnings": len(warnings), **score([text_of(out) for out in outputs], references)}
        forms[name] = form
    for name, lines in (("plain_test_set", sources), ("lone_angle_bracket", with_lone_angle(sources))):
        plain, _, warnings = translate(lines, "plain")
        text, _, _ = translate(lines, "text")
        forms[name] = {"lines": len(lines), "read_as_markup": sum(map(read_as_markup, lines)),
                       "outputs_as_text_format": sum(a == b for a, b in zip(plain, text)), "warnings": len(warnings)}
    info = checkpoint_info(checkpoint)
    report = {"checkpoint": str(checkpoint), "updates": info["step"], "training_minutes": info["training_minutes"],
              "recipe": args.recipe, "test": args.test, "threads": args.threads,
              "sentences": len(sources), "forms": forms}
    print(report, flush=True)
    write_json(Path(__file__).resolve().parent / "results" / "markup_detection.json", report)


if __name__ == "__main__":
    main()
