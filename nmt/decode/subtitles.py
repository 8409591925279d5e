"""Subtitles in, subtitles out: SubRip (.srt) and WebVTT (.vtt) files for `nmt translate`
(`--input-format srt` or `vtt`, the default for files so named).

A subtitle file is blocks separated by blank lines; a cue's block holds an optional number or
identifier, its timing line ("00:00:01,000 --> 00:00:04,000"), then its text lines. Each cue's
text is translated as one segment, its lines joined: a sentence broken over two lines is read
whole (line by line, its halves were translated as two fragments). So is a sentence that runs on
into the next cues (a cue that ends without a sentence's mark, the next beginning in lower case;
up to MAX_CUES): its translation is shared between them by their source lengths, cut between
words. Each cue's translation is written back over as many lines as the cue had, broken at the
spaces that balance their lengths, or over fewer where it has fewer words (a cue's lines never
include an empty one, which would end it).
Everything else (numbers, timings, WebVTT's header, NOTE, STYLE and REGION blocks, blank lines)
is copied as it stands. Inline tags (<i>, <b>, <font …>) are kept around the words they wrap, as
in any line that looks like markup (nmt.decode.text.markup).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from nmt.errors import NmtError

FORMATS = ("srt", "vtt")
MAX_CUES = 4  # the most cues one sentence is read over
_TIMING = re.compile(r"\d+(?::\d\d)+[,.]\d{3}\s*-->\s*\d+(?::\d\d)+[,.]\d{3}")
_VTT_BLOCKS = ("NOTE", "STYLE", "REGION")
_TAG = re.compile(r"<[^>]*>|\{\\[^}]*\}")  # <i>, </font>, {\an8}
_ENDS_SENTENCE = re.compile(r"[.!?…:;♪。！？]['\"”’»)\]]*$")


@dataclass
class Cue:
    first: int  # the index of its first text line in the file's lines
    count: int  # its text lines
    text: str  # those lines joined with spaces


@dataclass
class Subtitles:
    """A subtitle file read for translation: its `texts` (a cue's, or a sentence's over several
    cues) in, its lines with their translations out (`write`)."""
    lines: list[str]
    cues: list[Cue]
    groups: list[list[int]]  # the cues of each text, in order

    @classmethod
    def read(cls, lines: list[str], kind: str, path: str) -> "Subtitles":
        cues = read_cues(lines, kind, path)
        return cls(lines, cues, sentences_over_cues(cues))

    @property
    def texts(self) -> list[str]:
        return [" ".join(self.cues[i].text for i in group) for group in self.groups]

    @property
    def numbers(self) -> list[int]:
        """Each text's first line in the file, counted from 1 (for warnings)."""
        return [self.cues[group[0]].first + 1 for group in self.groups]

    def write(self, translations: list[str]) -> list[str]:
        """The file's lines with each text's translation in its cues."""
        per_cue = [part for group, translation in zip(self.groups, translations)
                   for part in shared(translation, [len(self.cues[i].text) for i in group])]
        return written(self.lines, self.cues, per_cue)


def sentences_over_cues(cues: list[Cue]) -> list[list[int]]:
    """The cues read together: each with the next while it ends without a sentence's mark and the
    next begins with a lower-case letter, up to MAX_CUES."""
    groups: list[list[int]] = []
    for i, cue in enumerate(cues):
        previous = cues[i - 1].text if i else ""
        # (a cue that opens with a dash is another speaker's; one that opens with a quote, new speech)
        plain, following = _TAG.sub("", previous).strip(), _TAG.sub("", cue.text).strip()
        runs_on = (groups and len(groups[-1]) < MAX_CUES and plain and not _ENDS_SENTENCE.search(plain)
                   and following[:1].islower())
        if runs_on:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def shared(translation: str, lengths: list[int]) -> list[str]:
    """`translation` cut between words into len(`lengths`) parts in proportion to the source
    lengths; where it has fewer words than parts, the last parts are "…"."""
    if len(lengths) == 1:
        return [translation]
    words = translation.split()
    if len(words) < len(lengths):
        return words + ["…"] * (len(lengths) - len(words))
    ends = [max(start - 1, 0) for start in _starts(words)]  # the characters of words[:j], spaces between
    total, cuts, at = sum(lengths), [], 0
    for k in range(1, len(lengths)):
        aim = len(translation) * sum(lengths[:k]) / max(total, 1)
        # a cut after word j, leaving a word at least for each part before and after
        choices = range(at + 1, len(words) - (len(lengths) - k) + 1)
        at = min(choices, key=lambda j: abs(ends[j] - aim))
        cuts.append(at)
    bounds = [0, *cuts, len(words)]
    return [" ".join(words[a:b]) for a, b in zip(bounds, bounds[1:])]


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
    # best[k][j]: the shortest longest line that words[:j] can be broken into k lines; words[i:j]
    # on one line is starts[j] - starts[i] - 1 characters long
    starts = _starts(words)
    inf = float("inf")
    best = [[inf] * (len(words) + 1) for _ in range(count + 1)]
    cut = [[0] * (len(words) + 1) for _ in range(count + 1)]
    best[0][0] = 0
    for k in range(1, count + 1):
        for j in range(k, len(words) + 1):
            for i in range(k - 1, j):
                worst = max(best[k - 1][i], starts[j] - starts[i] - 1)
                if worst < best[k][j]:
                    best[k][j], cut[k][j] = worst, i
    out, j = [], len(words)
    for k in range(count, 0, -1):
        i = cut[k][j]
        out.append(" ".join(words[i:j]))
        j = i
    return out[::-1]


def _starts(words: list[str]) -> list[int]:
    """Where each word starts in the words joined with spaces, and one past their end."""
    return [0, *itertools.accumulate(len(word) + 1 for word in words)]


def written(lines: list[str], cues: list[Cue], translations: list[str]) -> list[str]:
    """The file's `lines` with each cue's text lines replaced by its translation, rewrapped."""
    out, at = [], 0
    for cue, translation in zip(cues, translations):
        out += lines[at:cue.first]
        out += rewrapped(translation, cue.count)
        at = cue.first + cue.count
    return out + lines[at:]
