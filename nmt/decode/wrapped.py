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


@dataclass
class Wrapped:
    """A wrapped text read for translation: its `texts` (each paragraph's, or list item's) in, its
    lines with their translations out (`write`)."""
    lines: list[str]
    units: list[tuple[int, int]]  # (start, end) of each paragraph's or item's lines

    @classmethod
    def read(cls, lines: list[str]) -> "Wrapped":
        units: list[tuple[int, int]] = []
        start = None
        for i, line in enumerate([*lines, ""]):
            if start is not None and (not line.strip() or list_marker(line)):
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
            out += [marker + broken[0], *broken[1:]]
            at = b
        return out + self.lines[at:]
