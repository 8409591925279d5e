"""Invisible format characters the source vocabulary lacks, left out of the line before anything
else reads it: a soft hyphen (U+00AD, left in text copied from a web page or a PDF as a place to
hyphenate), a word joiner (U+2060), a zero-width joiner (U+200D) and the like. They change nothing
a reader sees, but a vocabulary without them makes each an unknown piece, in the middle of its
word: the demo model translated "ma\u00adn" as "Briefes", and a name rule would take
"Bri\u00adtish" for a name. Those after a symbol stay: an emoji's joiners and a flag's tags are
copied with it (nmt.decode.text.verbatim). A line copied as it stands keeps them.

Control characters too, which training never sees (`nmt prepare` drops pairs holding them,
nmt.data.clean): sentencepiece deletes some, joining the words on either side ("dog\x0bruns"
read as "dogruns"), and reads others as unknown pieces, on which the demo model wrote "meißelt"
for "runs". Those of C0 (but tab, line feed and carriage return) and DEL separate words where
they occur (a vertical tab is PowerPoint's and Word's line break within a paragraph), so each
becomes a space. Those of C1 (U+0080-U+009F) in text nearly always are Windows-1252 bytes
decoded as Latin-1 (curly quotes, dashes, the ellipsis, the euro sign), so each becomes its
Windows-1252 character, as ftfy's `fix_c1_controls` does, or a space where that code page has none.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

# Unicode's format characters (general category Cf)
_FORMAT = re.compile("[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
                     "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
                     "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]+")


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _readable(code: int) -> str:
    """What the control character `code` is read as: C1's Windows-1252 character, else a space."""
    try:
        return bytes([code]).decode("cp1252") if code >= 0x80 else " "
    except UnicodeDecodeError:  # 0x81, 0x8d, 0x8f, 0x90, 0x9d: nothing there in Windows-1252
        return " "


_READABLE = {code: _readable(code) for code in (*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0))}


def readable_controls(text: str) -> str:
    """`text` with each control character a space, or (C1) the Windows-1252 character it stood for."""
    if _CONTROL.search(text) is None:
        return text  # (nearly every line)
    return text.translate(_READABLE)


def without_invisible(text: str, reads: Callable[[str], bool]) -> str:
    """`text` without the format characters that `reads` (the source vocabulary's test of a
    character) fails, but for those after a symbol (an emoji's)."""
    if _FORMAT.search(text) is None:
        return text  # (nearly every line)

    def kept(match: re.Match) -> str:
        start = match.start()
        after_symbol = start > 0 and unicodedata.category(text[start - 1]).startswith("S")
        return match.group() if after_symbol else "".join(c for c in match.group() if reads(c))

    return _FORMAT.sub(kept, text)
