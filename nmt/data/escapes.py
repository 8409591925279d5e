"""Text written escaped: for a web page ("Tom &amp; Jerry", "&#39;") or by the Moses tokenizer
("it &apos;s", "&quot;", "&#124;"), as many prepared corpora are (Multi30k's English side writes
"stone &amp; tile"). One rule tells such a line from text, for the corpora a model learns from and
for the lines it translates alike (nmt.decode.text.markup.read_as_markup), so that a model never
learns references that its input will not hold."""

from __future__ import annotations

import html
import html.entities
import re

REFERENCE = re.compile(r"&(?:#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};|[A-Za-z][A-Za-z0-9]{1,31};)")


def is_reference(spelled: str) -> bool:
    """Whether a REFERENCE match names a character: a code point there is, or an HTML5 name."""
    if spelled[1] == "#":
        number = int(spelled[3:-1], 16) if spelled[2] in "xX" else int(spelled[2:-1])
        return 0 < number <= 0x10FFFF
    return spelled[1:] in html.entities.html5


def escaped_text(line: str) -> bool:
    """Whether a line without tags is text escaped for markup: it has a character reference
    (`&amp;`, `&#39;`), every "&" in it begins one, and no "<" or ">" stands in it bare. "AT&T",
    "Jeans & amp" and "Fish &chips;" (no such name) stay text."""
    if "&" not in line or ">" in line or "<" in line:
        return False
    references = [m for m in REFERENCE.finditer(line) if is_reference(m.group())]
    return bool(references) and len(references) == line.count("&")


def unescaped(line: str) -> str:
    """The text an escaped line stands for ("Q&amp;A" is "Q&A"); any other line as it is."""
    return html.unescape(line) if escaped_text(line) else line
