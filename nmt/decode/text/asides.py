"""An aside in parentheses is carried across by the markup rules (nmt.decode.text.markup), so that
its parentheses survive. A model that saw few parentheses in training drops what they hold, or
leaves one open: the demo model gave "Zwei Männer (er mit Hut gehen die Straße entlang." and
translated "A man is climbing a rock wall (see photo)." without "(see photo)" (`decode.parentheses`).
- A phrase, of 2 to PHRASE_WORDS words ("in front (of a white fence)"), belongs to its sentence:
  its words stay in it, and the parentheses become an element around the output words aligned to
  them ("vor (einem Zaun)").
- A longer aside is a sentence of its own ("… on the ground (a young girl sitting on a wooden
  chair)."), which the model, reading it inside the other, drops: it is taken out as a point,
  translated apart, and put back in parentheses where the words around it went. So is a single
  word ("Two women (sisters?) walk"), which in its sentence is a word the sentence lacks: the
  demo model garbled the sentence around it.
The threshold was chosen on Multi30k's val set (make bench-asides).

An aside is what parentheses hold where they stand apart ("(" after a space or the line's start,
")" before a space, punctuation or the end), holding two letters or more, without brackets
inside, and not itself inside parentheses: "(sisters?)" and "(WHO)" are asides (the demo model
dropped both, or left one open: "Zwei Frauen (isieren am Strand."); "dog(s)", "f(x)", "(2019)"
and "(a)" stay in their sentence, and so does a line that is all aside.
"""

from __future__ import annotations

import html
import re

from nmt.data.words import outside_spans

ASIDE = "aside"  # the name of a markup item that holds an aside (nmt.decode.text.markup.Item.name)
PHRASE_WORDS = 5  # an aside of this many words or fewer is translated in its sentence
_PARENTHESES = re.compile(r"(?<!\S)\(([^()\[\]{}<>]*)\)(?=$|\s|[.,;:!?'\"”’»])")


def aside_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each aside of `text`, parentheses included, in order; none where the
    text outside them has no letter."""
    spans = [m.span() for m in _PARENTHESES.finditer(text)
             if sum(c.isalpha() for c in m.group(1)) >= 2
             and text.rfind("(", 0, m.start()) <= text.rfind(")", 0, m.start())]  # not inside other parentheses
    return spans if any(c.isalpha() for c in outside_spans(text, spans)) else []


def is_phrase(aside: str) -> bool:
    """Whether an aside's text (`aside`, without its parentheses) is translated in its sentence."""
    return 2 <= len(aside.split()) <= PHRASE_WORDS


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
