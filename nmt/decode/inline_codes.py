"""Inline elements of an XML file's text (XLIFF's codes, Android's tags) as the markup the model
translates, and back: a paired element around words is `<fN>…</fN>`, so that it goes around the
words aligned to the ones it wrapped (nmt.decode.text.markup); any other is a point `<pN/>`, put
back whole between the words. N is the element's place in a list of them, counted from 1.
"""

from __future__ import annotations

import copy
import html
import re
from collections.abc import Callable

TAG = re.compile(r"<(/?)([fp])(\d+)(/?)>")


def _same(text: str) -> str:
    return text


def inline_markup(element, codes: list, paired: Callable[[object], bool],
                  read: Callable[[str], str] = _same) -> str:
    """An element's content as inline markup: its text (as `read` gives it) escaped, each child
    that is `paired` `<fN>…</fN>` and every other `<pN/>`, N its place in `codes`, where it is added."""
    parts = [html.escape(read(element.text or ""), quote=False)]
    for child in element:
        codes.append(child)
        number = len(codes)
        if paired(child):
            parts.append(f"<f{number}>{inline_markup(child, codes, paired, read)}</f{number}>")
        else:
            parts.append(f"<p{number}/>")
        parts.append(html.escape(read(child.tail or ""), quote=False))
    return "".join(parts)


def spaced_as_in(translation: str, source: str) -> str:
    """The translation's points (`<pN/>`) with no space beside them where the source had none: the
    markup puts each between words with spaces, which would add a space at a line break's code
    (`runs<x/> on`) or before a full stop."""
    for point in re.finditer(r"<p\d+/>", source):
        tag = re.escape(point.group(0))
        if point.start() > 0 and not source[point.start() - 1].isspace():
            translation = re.sub(r"\s+(?=" + tag + ")", "", translation)
        if point.end() < len(source) and not source[point.end()].isspace():
            translation = re.sub("(?<=" + tag + r")\s+", "", translation)
    return translation


def fill_inline(element, translation: str, codes: list, write: Callable[[str], str] = _same) -> None:
    """Put a translation's markup (from `inline_markup`) into `element`, which is empty: its text
    (as `write` gives it), and copies of the codes its tags name."""
    open_elements, position = [element], 0

    def add_text(text: str) -> None:
        if not text:
            return
        current, text = open_elements[-1], write(html.unescape(text))
        if len(current):
            current[-1].tail = (current[-1].tail or "") + text
        else:
            current.text = (current.text or "") + text

    for tag in TAG.finditer(translation):
        add_text(translation[position:tag.start()])
        position = tag.end()
        closing, kind, number, empty = tag.groups()
        code = codes[int(number) - 1]
        if closing:
            open_elements.pop()
        elif kind == "p" or empty:
            point = copy.deepcopy(code)
            point.tail = None
            open_elements[-1].append(point)
        else:
            shell = code.makeelement(code.tag, code.attrib, code.nsmap)
            open_elements[-1].append(shell)
            open_elements.append(shell)
    add_text(translation[position:])
