"""Text wrapped at a width (`--input-format wrapped`): an e-mail, a book from Project Gutenberg, a
README, whose sentences run on from line to line. Line by line, each piece of a sentence would
be translated apart; here each paragraph (lines between blank lines) is read whole, its lines
joined, and its translation written back over as many lines as it had, broken at the spaces that
balance their lengths (fewer where it has fewer words), so that the file keeps its shape. A line
that opens with a list's marker, a heading's "#" or an indentation starts a unit of its own,
with the lines after it that are not so marked.
"""

from __future__ import annotations

from dataclasses import dataclass

from nmt.decode.subtitles import rewrapped
from nmt.decode.text.list_markers import list_marker


def _indentation(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


@dataclass
class Wrapped:
    """A wrapped text read for translation: its `texts` (each paragraph's, or list item's) in, its
    lines with their translations out (`write`)."""
    lines: list[str]
    units: list[tuple[int, int]]  # (start, end) of each paragraph's or item's lines

    @classmethod
    def read(cls, lines: list[str], continue_indented: bool = False) -> "Wrapped":
        """`continue_indented`: an indented line without a marker continues the unit before it
        (a Markdown list item's lines), rather than starting one."""
        units: list[tuple[int, int]] = []
        start = None
        for i, line in enumerate([*lines, ""]):
            marker = list_marker(line)
            if continue_indented and not marker.strip():
                marker = ""
            if start is not None and (not line.strip() or marker):
                units.append((start, i))
                start = None
            if start is None and line.strip():
                start = i
        return cls(lines, units)

    @property
    def texts(self) -> list[str]:
        return [" ".join(line.strip() for line in self.lines[a:b]) for a, b in self.units]

    @property
    def numbers(self) -> list[int]:
        """Each text's first line, counted from 1 (for warnings)."""
        return [a + 1 for a, _ in self.units]

    def write(self, translations: list[str]) -> list[str]:
        """The lines with each unit's translation over its lines, the marker or indentation that
        translation kept in front of the first (nmt.decode.text.list_markers) where it stood."""
        out, at = [], 0
        for (a, b), translation in zip(self.units, translations):
            out += self.lines[at:a]
            marker = list_marker(self.lines[a])
            marker = marker if marker and translation.startswith(marker) else ""  # (as translate kept it)
            broken = rewrapped(translation[len(marker):], b - a)
            # the lines after the first indented as they were (a Markdown list item's)
            out += [marker + broken[0], *(_indentation(self.lines[a + k]) + line for k, line in enumerate(broken[1:], 1))]
            at = b
        return out + self.lines[at:]
