"""Subtitles (`make bench-subtitles`): test_2016_flickr written as a SubRip file, each sentence a
cue broken over two lines at the space that balances them (as subtitles break a sentence too
long for one line), translated by the demo model as subtitles (`--input-format srt`: each cue
whole, written back over two lines; nmt.decode.subtitles) and line by line (`--input-format
plain`, which copies numbers and timings and translates each half apart). BLEU of each cue's
lines joined against the reference, and the cues whose output keeps two lines. Writes
experiments/robustness/results/subtitles.json.

    python -m experiments.robustness.subtitles [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_test_set, score, write_study
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine
from nmt.decode.stream import translate_file
from nmt.decode.subtitles import read_cues, rewrapped

RESULTS = Path(__file__).resolve().parent / "results"


def as_subrip(sentences: list[str]) -> list[str]:
    """Each sentence a cue of two lines (one where it is one word), two seconds each."""
    lines = []
    for i, sentence in enumerate(sentences):
        start, end = 2 * i, 2 * i + 2
        lines += [str(i + 1), f"00:{start // 60:02d}:{start % 60:02d},000 --> 00:{end // 60:02d}:{end % 60:02d},000",
                  *rewrapped(sentence, 2), ""]
    return lines


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    cfg = load_recipe(args.recipe).decode
    engine = load_engine([checkpoint])
    result = {"cues": len(sources)}
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "test.en.srt"
        source.write_text("\n".join(as_subrip(sources)) + "\n", encoding="utf-8")
        for kind in ("srt", "plain"):
            output = Path(folder) / f"test.de.{kind}"
            start = time.perf_counter()
            translate_file(engine, str(source), str(output), cfg, input_format=kind)
            seconds = time.perf_counter() - start
            cues = read_cues(output.read_text(encoding="utf-8").splitlines(), "srt", str(output))
            outputs = [cue.text for cue in cues]
            result[f"input_format_{kind}"] = {
                "bleu": score(outputs, references), "cues_on_two_lines": sum(cue.count == 2 for cue in cues),
                "seconds": round(seconds, 2), "examples": [{"source": s, "output": o} for s, o in zip(sources[:3], outputs[:3])]}
            print(kind, result[f"input_format_{kind}"]["bleu"]["bleu"], flush=True)
    write_study(RESULTS / "subtitles.json", checkpoint, args.test, result)


if __name__ == "__main__":
    main()
