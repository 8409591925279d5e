"""An aside in parentheses, "Two men (one in a hat) walk down the street.", is translated apart
from its sentence and put back where its neighbours went. A model that saw few parentheses in
training drops what they hold, or leaves one open: the demo model gave "Zwei Männer (er mit Hut
gehen die Straße entlang." and translated "A man is climbing a rock wall (see photo)." without
"(see photo)". The aside becomes a point of nmt.decode.text.markup, placed by the alignment of
the words around it; its text is the translation of what it held (`decode.parentheses`).

An aside is what parentheses hold where they stand apart ("(" after a space or the line's start,
")" before a space, punctuation or the end), of two words or more with letters, without brackets
inside, and not itself inside parentheses. "dog(s)", "f(x)", "(WHO)", "(2019)", "(a)" and "(in
2019)" stay in their sentence; so does a line that is all aside.
"""

from __future__ import annotations

import html
import re

ASIDE = "aside"  # the name of a markup point that holds an aside (nmt.decode.text.markup.Item.name)
_PARENTHESES = re.compile(r"(?<!\S)\(([^()\[\]{}<>]*)\)(?=$|\s|[.,;:!?'\"”’»])")


def aside_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each aside of `text`, parentheses included, in order; none where the
    text outside them has no letter."""
    spans = [m.span() for m in _PARENTHESES.finditer(text)
             if sum(any(c.isalpha() for c in word) for word in m.group(1).split()) >= 2
             and text.count("(", 0, m.start()) == text.count(")", 0, m.start())]  # not inside other parentheses
    outside = "".join(text[end:start] for (_, end), (start, _) in zip([(0, 0), *spans], [*spans, (len(text), 0)]))
    return spans if any(c.isalpha() for c in outside) else []


def aside_text(point: str, markup: bool) -> str:
    """What an aside's point holds: its text without the parentheses (in a `markup` line, its
    character references read: "&amp;" is "&")."""
    text = point[1:-1].strip()
    return html.unescape(text) if markup else text


def written_aside(source: str, translation: str, markup: bool) -> str:
    """An aside's point as the output writes it: the `translation` of its `source` text, without a
    full stop the source did not end in (a model trained on sentences ends a fragment with one), in
    a `markup` line escaped as its text is."""
    if translation.endswith(".") and not translation.endswith("..") and not source.endswith("."):
        translation = translation[:-1].rstrip()
    return f"({html.escape(translation, quote=False) if markup else translation})"
