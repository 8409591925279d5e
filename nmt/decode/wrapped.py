"""Text wrapped at a width (`--input-format wrapped`): an e-mail, a book from Project Gutenberg, a
README, whose sentences run on from line to line. Line by line, each piece of a sentence would
be translated apart; here each paragraph (lines between blank lines) is read whole, its lines
joined, and its translation written back over as many lines as it had, broken at the spaces that
balance their lengths (fewer where it has fewer words), so that the file keeps its shape. A line
that opens with a list's marker, a heading's "#" or an indentation starts a unit of its own,
with the lines after it that are not so marked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nmt.decode.subtitles import rewrapped
from nmt.decode.text.list_markers import list_marker
from nmt.decode.text.markdown import CODE_SPAN


_HARD_BREAK = re.compile(r"(?<=\S)(?:\\| {2,})$")  # Markdown's line break: a backslash or two spaces at a line's end
_ASCIIDOC_BREAK = re.compile(r"(?<=\S) \+$")  # AsciiDoc's: " +"


_QUOTE = re.compile(r"\s*(?:>[ \t]?)+")  # Markdown's block quote: "> ", "> > "
_BARE_MARKER = re.compile(r"\s*(?:[-*+]|\d{1,9}[.)])\s*")  # an empty item ("-": a list-table's empty cell)
_KEPT_SPACE = "\ue000"
# a space a line must not be broken at: what follows would start a block of its own at a line's
# start ("> " a quote, "# " a heading, "- " or "1. " a list, "===" a heading's underline, a fence)
_BLOCK_START = re.compile(r" (?=>|#{1,6}(?:\s|$)|[-*+](?:\s|$)|\d{1,9}[.)](?:\s|$)|=+(?:\s|$)|```|~~~|\|)")  # a code span's space while the text is wrapped: never broken, never merged
# and in AsciiDoc: a list's ". ", a comment's "//", an attribute line's "[", an entry's ":name:",
# a block macro's "name::", an admonition's "NOTE:", a callout's "<1>", a continuation's "+"
_ASCIIDOC_BLOCK_START = re.compile(r" (?=\.{1,5}(?:\s|$)|//|\[|:!?\w[\w-]*!?:|\w[\w-]*::|(?:NOTE|TIP|IMPORTANT|"
                                   r"WARNING|CAUTION):|<(?:\d+|\.)>|\+(?:\s|$)|'''|<<<|[a-zA-Z]\.\s)")


def _indentation(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _prefix(line: str, markdown: bool) -> str:
    """What a unit's later line keeps in front of its words: its indentation, or in Markdown its
    block quote's marks."""
    quote = _QUOTE.match(line) if markdown else None
    return quote.group() if quote else _indentation(line)


# the end of a sentence, where a text written a sentence a line breaks its line: a full stop, a
# question or exclamation mark, closing quotes and brackets after it (and Markdown's emphasis),
# then a space (Chinese and Japanese, written without one, are not broken: a line's end would
# show as a space there). A text is taken to be written so where every line inside its units
# ends a sentence or a clause (a colon, a semicolon).
_CLOSERS = "[\"'”’»)\\]*_]"
_SENTENCE_END = re.compile(rf"(?:(?<=\w[.!?…。！？])|(?<=\w[.!?…。！？]{_CLOSERS})|(?<=\w[.!?…。！？]{_CLOSERS}{_CLOSERS}))"
                           r" +(?=\S)")  # (after a word: "... and so" starts no line of its own)


_LINE_END = re.compile(r"[.!?…。！？:;：；][\"'”’»)\]*_`]*\s*$")  # a sentence's or a clause's (semantic line breaks break at both)


def wrapped_paragraph(lines: list[str]) -> int | None:
    """The index of the first line of a paragraph wrapped at a width among `lines` (lines read
    one by one: a hint that --input-format wrapped reads them better), or None. A paragraph is
    taken as wrapped where it has three lines or more, its lines before the last are 40 columns
    or more and within a fifth of each other's length, and most of them end inside a sentence;
    two such paragraphs are needed, or one of six lines (a corpus's sentences, a line each, vary
    in length and end in their marks)."""
    found, first, start = 0, None, 0
    for end in [*(k for k, line in enumerate(lines) if not line.strip()), len(lines)]:
        block = [line.rstrip() for line in lines[start:end]]
        start = end + 1
        if len(block) < 3:
            continue
        inner = [len(line) for line in block[:-1]]
        running_on = sum(not _LINE_END.search(line) for line in block[:-1])
        if min(inner) >= 40 and min(inner) >= 0.8 * max(inner) and running_on * 2 > len(inner):
            found += 1
            first = first if first is not None else end - len(block)
            if found >= 2 or len(block) >= 6:
                return first
    return None


def broken_over(translation: str, count: int, markdown: bool = False, asciidoc: bool = False,
                by_sentence: bool = False, tags: bool = False) -> list[str]:
    """`translation` broken into at most `count` lines of balanced lengths, or `by_sentence` a
    sentence a line (as many lines as it has); in Markdown (and AsciiDoc) a code span kept on one
    line, its spaces as written, and no line starting a block; with `tags`, an HTML tag kept on one
    line."""
    if tags:
        translation = re.sub(r"<[^<>]*>", lambda m: m.group().replace(" ", _KEPT_SPACE), translation)
    if markdown:
        translation = CODE_SPAN.sub(lambda m: m.group().replace(" ", _KEPT_SPACE), translation)
        translation = _BLOCK_START.sub(_KEPT_SPACE, translation)
        if asciidoc:
            translation = _ASCIIDOC_BLOCK_START.sub(_KEPT_SPACE, translation)
    lines = [line for line in _SENTENCE_END.split(translation) if line] if by_sentence else rewrapped(translation, count)
    return [line.replace(_KEPT_SPACE, " ") for line in lines]


@dataclass
class Wrapped:
    """A wrapped text read for translation: its `texts` (each paragraph's, or list item's) in, its
    lines with their translations out (`write`)."""
    lines: list[str]
    units: list[tuple[int, int]]  # (start, end) of each paragraph's or item's lines
    breaks: list[str]  # each unit's line break at its end (Markdown's), or ""
    markdown: bool = False
    asciidoc: bool = False
    by_sentence: bool = False  # written a sentence a line: every line inside a unit ends a sentence (two at least)

    @classmethod
    def read(cls, lines: list[str], markdown: bool = False, asciidoc: bool = False) -> "Wrapped":
        """`markdown`: Markdown's rules: an indented line without a marker continues the unit
        before it (a list item's lines), and so does a block quote's line the unit's quote (a
        quoted paragraph's), rather than starting one; a quote's line without words (">") parts
        its paragraphs, and a line break ("\\" or two spaces at a line's end) ends a unit, as
        the line it ends is shown. `asciidoc` (with `markdown`): AsciiDoc's line break (" +") in
        place of Markdown's, and no line of a translation written so that it starts a block."""
        hard_breaks = _ASCIIDOC_BREAK if asciidoc else _HARD_BREAK
        units: list[tuple[int, int]] = []
        breaks: list[str] = []
        start = None
        for i, line in enumerate([*lines, ""]):
            marker = list_marker(line)
            quote = _QUOTE.match(line) if markdown else None
            empty = not line.strip() or bool(quote and not line[quote.end():].strip()) or bool(
                markdown and _BARE_MARKER.fullmatch(line))  # (an empty item: copied, parting the items around it)
            if markdown and quote and start is not None and not list_marker(line[quote.end():]).strip():
                started = _QUOTE.match(lines[start])
                if started and started.group().replace(" ", "") == quote.group().replace(" ", ""):
                    marker = ""  # the quoted paragraph goes on
            if markdown and not marker.strip():
                marker = ""
            if start is not None and (empty or marker):
                units.append((start, i))
                breaks.append("")
                start = None
            if start is None and not empty:
                start = i
            hard_break = hard_breaks.search(line) if markdown and start is not None and i < len(lines) else None
            if hard_break and (i + 1 < len(lines) and lines[i + 1].strip() or asciidoc):  # (AsciiDoc's at a unit's end too)
                units.append((start, i + 1))
                breaks.append(hard_break.group())
                start = None
        # (a text wrapped at a width ends a line with a sentence now and then, not every time)
        line_ends = [_LINE_END.search(lines[k]) is not None for a, b in units for k in range(a, b - 1)]
        return cls(lines, units, breaks, markdown, asciidoc, len(line_ends) >= 2 and all(line_ends))

    @property
    def texts(self) -> list[str]:
        texts = []
        for (a, b), end in zip(self.units, self.breaks):
            text = " ".join([self.lines[a].strip(), *(line[len(_prefix(line, self.markdown)):].strip()
                                                      for line in self.lines[a + 1:b])])
            texts.append(text[:-1].rstrip() if end.strip() else text)  # without a break's backslash
        return texts

    @property
    def numbers(self) -> list[int]:
        """Each text's first line, counted from 1 (for warnings)."""
        return [a + 1 for a, _ in self.units]

    def write(self, translations: list[str]) -> list[str]:
        """The lines with each unit's translation over its lines, the marker or indentation that
        translation kept in front of the first (nmt.decode.text.list_markers) where it stood."""
        out, at = [], 0
        for (a, b), translation, end in zip(self.units, translations, self.breaks):
            out += self.lines[at:a]
            marker = list_marker(self.lines[a])  # a list's marker, as translate kept it; or an indentation
            if translation.startswith(marker.lstrip()):  # (the text starts with the marker, not its indentation)
                translation = translation[len(marker.lstrip()):]
            else:
                marker = _indentation(self.lines[a])
            # a text written a sentence a line is written so again
            broken = broken_over(translation, b - a, self.markdown, self.asciidoc, self.by_sentence and b - a > 1)
            broken[-1] += end
            # the lines after the first indented (a Markdown list item's) or quoted as they were
            out += [marker + broken[0], *(_prefix(self.lines[min(a + k, b - 1)], self.markdown) + line
                                          for k, line in enumerate(broken[1:], 1))]
            at = b
        return out + self.lines[at:]
