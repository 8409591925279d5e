"""Wrapped text (`make bench-wrapped`): test_2016_flickr as paragraphs of three consecutive
sentences wrapped at 60 columns (as an e-mail or a book is), translated by the demo model with
`--input-format wrapped` (each paragraph whole, wrapped again over its lines;
nmt.decode.wrapped) and line by line (`--input-format plain`). BLEU of each paragraph's output
lines joined against its three references joined, and whether the output keeps the file's line
count. Writes experiments/robustness/results/wrapped.json.

    python -m experiments.robustness.wrapped [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import tempfile
import textwrap
from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_test_set, score, write_study
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine
from nmt.decode.stream import translate_file
from nmt.decode.wrapped import Wrapped

RESULTS = Path(__file__).resolve().parent / "results"
SENTENCES, WIDTH = 3, 60


def paragraphs(lines: list[str]) -> list[str]:
    return [" ".join(lines[i:i + SENTENCES]) for i in range(0, len(lines), SENTENCES)]


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    cfg = load_recipe(args.recipe).decode
    engine = load_engine([checkpoint])
    text = "\n\n".join(textwrap.fill(paragraph, WIDTH) for paragraph in paragraphs(sources)).splitlines()
    result: dict = {"paragraphs": len(paragraphs(sources)), "lines": len(text), "width": WIDTH}
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "test.en.txt"
        source.write_text("\n".join(text) + "\n", encoding="utf-8")
        for kind in ("wrapped", "plain"):
            output = Path(folder) / f"test.de.{kind}"
            translate_file(engine, str(source), str(output), cfg, input_format=kind)
            lines = output.read_text(encoding="utf-8").splitlines()
            outputs = [" ".join(lines[a:b]) for a, b in Wrapped.read(text).units]
            result[f"input_format_{kind}"] = {"bleu": score(outputs, paragraphs(references)),
                                              "same_line_count": len(lines) == len(text),
                                              "examples": [{"output": "\n".join(lines[:4])}]}
            print(kind, result[f"input_format_{kind}"]["bleu"]["bleu"], flush=True)
    write_study(RESULTS / "wrapped.json", checkpoint, args.test, result)


if __name__ == "__main__":
    main()
