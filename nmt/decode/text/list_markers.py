"""A list's marker at the start of a line ("- ", "• ", "1. ", "b) ", "(iv) ", a task's "- [ ] "), or a
Markdown heading's ("## ") or block quote's ("> "): part of the document, not of the sentence. A model trained on sentences drops it or turns it into words
("* A dog runs." gave "Ein einsamer Hund rennt.", "1. A dog runs." "1 . Ein Hund rennt."), so with
`decode.copy_verbatim` it is taken off the line before translation and written in front of the
output as it stood (nmt.decode.translate). So is a line's indentation, where it has no marker (an
indented paragraph, a nested Markdown block): the model would drop it.
"""

from __future__ import annotations

import re

_BULLET = "[-*+•‣◦▪▫●○■□–—·>:]+"  # "-", "--", "•", "–", ">" (a quoted line), ":" (a definition's, in Markdown)
_ITEM = r"(?:\d{1,3}|#|[A-Za-z]|[ivxlcdm]{2,6}|[IVXLCDM]{2,6})"  # 12, b, iv, XII (one letter: a, i, V)
_TASK = r"(?:\[[ xX]\]\s+)?"  # a task list's box: "- [ ] ", "- [x] "
# "> - " too, and a bullet's within a bullet's ("* - ": reStructuredText's list-table row, its first cell)
_MARKER = re.compile(rf"\s*(?:>[ \t]*)*(?:(?:{_BULLET}\s+)*(?:{_BULLET}|{_ITEM}[.)]|\({_ITEM}\))\s+{_TASK}|#{{1,6}}\s+)(?=\S)"
                     r"|\s+(?=\S)")


def list_marker(line: str) -> str:
    """The list marker that starts `line`, with the whitespace around it, or else the whitespace
    that starts it; "" where it has neither (or nothing follows)."""
    match = _MARKER.match(line)
    return match.group() if match else ""
