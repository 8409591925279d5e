"""Subtitles in, subtitles out: SubRip (.srt) and WebVTT (.vtt) files for `nmt translate`
(`--input-format srt` or `vtt`, the default for files so named).

A subtitle file is blocks separated by blank lines; a cue's block holds an optional number or
identifier, its timing line ("00:00:01,000 --> 00:00:04,000"), then its text lines. Each cue's
text is translated as one segment, its lines joined: a sentence broken over two lines is read
whole (line by line, its halves were translated as two fragments). The translation is written
back over as many lines as the cue had, broken at the spaces that balance their lengths, or over
fewer where it has fewer words (a cue's lines never include an empty one, which would end it).
Everything else (numbers, timings, WebVTT's header, NOTE, STYLE and REGION blocks, blank lines)
is copied as it stands. Inline tags (<i>, <b>, <font …>) are kept around the words they wrap, as
in any line that looks like markup (nmt.decode.text.markup).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nmt.errors import NmtError

FORMATS = ("srt", "vtt")
_TIMING = re.compile(r"\d+(?::\d\d)+[,.]\d{3}\s*-->\s*\d+(?::\d\d)+[,.]\d{3}")
_VTT_BLOCKS = ("NOTE", "STYLE", "REGION")


@dataclass
class Cue:
    first: int  # the index of its first text line in the file's lines
    count: int  # its text lines
    text: str  # those lines joined with spaces


def subtitle_format(path: str) -> str | None:
    """The subtitle format a file's name says (movie.en.srt, talk.vtt), else None."""
    name = path.lower().removesuffix(".gz")
    return next((kind for kind in FORMATS if name.endswith(f".{kind}")), None)


def read_cues(lines: list[str], kind: str, path: str) -> list[Cue]:
    """The cues of a subtitle file's `lines` (without line ends), in order. A block without a
    timing line is an error naming its line, but for WebVTT's header and NOTE, STYLE and REGION
    blocks."""
    if kind not in FORMATS:
        raise NmtError(f"--input-format {kind}: choose {', '.join(FORMATS)}")
    if kind == "vtt" and not (lines and lines[0].lstrip("\ufeff").startswith("WEBVTT")):
        raise NmtError(f"{path}: line 1: a WebVTT file starts with WEBVTT")
    cues = []
    for start, end in _blocks(lines):
        block = lines[start:end]
        timing = next((i for i, line in enumerate(block) if _TIMING.search(line)), None)
        if timing is None:
            if kind == "vtt" and (start == 0 or block[0].split(" ", 1)[0] in _VTT_BLOCKS):
                continue  # copied as it stands
            raise NmtError(f"{path}: line {start + 1}: a subtitle block without a timing line "
                           "(00:00:01,000 --> 00:00:04,000)")
        if timing > 1:
            raise NmtError(f"{path}: line {start + timing + 1}: a timing line after text; a block is a number or "
                           "an identifier, its timing, then its text")
        first = start + timing + 1
        if first < end:
            cues.append(Cue(first, end - first, " ".join(line.strip() for line in lines[first:end])))
    return cues


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """(start, end) of each run of non-blank lines."""
    blocks, start = [], None
    for i, line in enumerate([*lines, ""]):
        if line.strip() and start is None:
            start = i
        elif not line.strip() and start is not None:
            blocks.append((start, i))
            start = None
    return blocks


def rewrapped(text: str, count: int) -> list[str]:
    """`text` over `count` lines (fewer where it has fewer words), broken at spaces so that its
    longest line is as short as it can be."""
    words = text.split()
    count = max(1, min(count, len(words)))
    if count == 1:
        return [" ".join(words)]
    # best[k][j]: the shortest longest line that words[:j] can be broken into k lines
    length = [[len(" ".join(words[i:j])) for j in range(len(words) + 1)] for i in range(len(words) + 1)]
    inf = float("inf")
    best = [[inf] * (len(words) + 1) for _ in range(count + 1)]
    cut = [[0] * (len(words) + 1) for _ in range(count + 1)]
    best[0][0] = 0
    for k in range(1, count + 1):
        for j in range(k, len(words) + 1):
            for i in range(k - 1, j):
                worst = max(best[k - 1][i], length[i][j])
                if worst < best[k][j]:
                    best[k][j], cut[k][j] = worst, i
    out, j = [], len(words)
    for k in range(count, 0, -1):
        i = cut[k][j]
        out.append(" ".join(words[i:j]))
        j = i
    return out[::-1]


def written(lines: list[str], cues: list[Cue], translations: list[str]) -> list[str]:
    """The file's `lines` with each cue's text lines replaced by its translation, rewrapped."""
    out, at = [], 0
    for cue, translation in zip(cues, translations):
        out += lines[at:cue.first]
        out += rewrapped(translation, cue.count)
        at = cue.first + cue.count
    return out + lines[at:]
