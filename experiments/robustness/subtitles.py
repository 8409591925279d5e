"""Subtitles (`make bench-subtitles`): test_2016_flickr written as SubRip files, translated by the
demo model as subtitles (`--input-format srt`, nmt.decode.subtitles) and line by line
(`--input-format plain`, which copies numbers and timings and translates each line apart):
- each sentence a cue broken over two lines at the space that balances them (as subtitles break
  a sentence too long for one line);
- each sentence run over two cues of one line each, cut at the same space (as subtitles carry a
  long sentence into the next cue), also as subtitles with each cue read alone (MAX_CUES 1).
BLEU of each sentence's output lines joined against the reference. Writes
experiments/robustness/results/subtitles.json.

    python -m experiments.robustness.subtitles [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import itertools
import tempfile
import time
from pathlib import Path
from unittest import mock

from experiments.shared.demo_model import demo_parser, demo_test_set, score, write_study
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine
from nmt.decode.stream import translate_file
from nmt.decode import subtitles
from nmt.decode.subtitles import read_cues, rewrapped

RESULTS = Path(__file__).resolve().parent / "results"


def as_subrip(sentences: list[str], over_cues: bool) -> tuple[list[str], list[int]]:
    """Each sentence a cue of two lines, or two cues of a line each (one where it is one word);
    the file's lines, and each sentence's count of cues."""
    lines, counts, number = [], [], 0
    for sentence in sentences:
        cues = [[half] for half in rewrapped(sentence, 2)] if over_cues else [rewrapped(sentence, 2)]
        counts.append(len(cues))
        for text in cues:
            number += 1
            lines += [str(number), f"{_time(2 * number)} --> {_time(2 * number + 2)}", *text, ""]
    return lines, counts


def _time(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d},000"


def translated_sentences(engine, cfg, subrip: tuple[list[str], list[int]], kind: str,
                         folder: Path) -> tuple[list[str], float]:
    """Each sentence's output (its cues' text joined) and the seconds the file took."""
    lines, counts = subrip
    source, output = folder / "test.en.srt", folder / f"test.de.{kind}"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    start = time.perf_counter()
    translate_file(engine, str(source), str(output), cfg, input_format=kind)
    seconds = time.perf_counter() - start
    texts = [cue.text for cue in read_cues(output.read_text(encoding="utf-8").splitlines(), "srt", str(output))]
    ends = list(itertools.accumulate(counts))
    return [" ".join(texts[end - count:end]) for count, end in zip(counts, ends)], seconds


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    cfg = load_recipe(args.recipe).decode
    engine = load_engine([checkpoint])
    one_word = sum(len(s.split()) < 2 for s in sources)
    result: dict = {"sentences": len(sources), "sentences_of_one_word": one_word}
    settings = (("two_line_cues", False, "srt", subtitles.MAX_CUES), ("two_line_cues", False, "plain", subtitles.MAX_CUES),
                ("sentences_over_two_cues", True, "srt", subtitles.MAX_CUES),
                ("sentences_over_two_cues", True, "srt", 1), ("sentences_over_two_cues", True, "plain", subtitles.MAX_CUES))
    with tempfile.TemporaryDirectory() as folder:
        for form, over_cues, kind, max_cues in settings:
            name = f"input_format_{kind}" + ("_each_cue_alone" if max_cues == 1 else "")
            with mock.patch.object(subtitles, "MAX_CUES", max_cues):
                outputs, seconds = translated_sentences(engine, cfg, as_subrip(sources, over_cues), kind, Path(folder))
            result.setdefault(form, {})[name] = {
                "bleu": score(outputs, references), "seconds": round(seconds, 2),
                "examples": [{"source": s, "output": o} for s, o in zip(sources[:3], outputs[:3])]}
            print(form, name, result[form][name]["bleu"]["bleu"], flush=True)
    write_study(RESULTS / "subtitles.json", checkpoint, args.test, result)


if __name__ == "__main__":
    main()
