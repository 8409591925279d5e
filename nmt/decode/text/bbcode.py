"""BBCode, the rich text of Godot's labels (`[b]`, `[color=red]`, `[url=...]`) and of forums, as
inline markup for the model and back: a pair of tags around words is a code `<fN>…</fN>` that
goes around the words aligned to them (nmt.decode.text.markup), and a tag alone, or a tag whose
content is not text to translate (`[img]path[/img]`, `[code]`, a bare `[url]https://…[/url]`), a
point `<pN/>` kept whole between the words, as XLIFF's inline codes are (nmt.decode.inline_codes).
Only the tags of Godot's RichTextLabel and of forums' BBCode are read; other brackets (`[1]`,
`[sic]`) are text.
"""

from __future__ import annotations

import html
import re

from nmt.decode.inline_codes import TAG, spaced_as_in
from nmt.decode.text.messages import as_markup, from_markup

_NAMES = frozenset((
    "b", "i", "u", "s", "code", "char", "p", "center", "left", "right", "fill", "indent", "url", "hint", "img",
    "font", "font_size", "dropcap", "opentype_features", "lang", "table", "cell", "ul", "ol", "lb", "rb", "br", "hr",
    "color", "bgcolor", "fgcolor", "outline_size", "outline_color", "pulse", "wave", "tornado", "shake", "fade",
    "rainbow", "quote", "list", "*", "size", "email", "spoiler", "strike", "sup", "sub", "youtube"))
_ALONE = frozenset(("*", "br", "hr", "lb", "rb"))  # never closed: a list's item, a break, a bracket
_CONTENT_KEPT = frozenset(("img", "code", "char", "youtube"))  # their content is a path, code, a number: not text
_BRACKET_TAG = re.compile(r"\[(/?)([a-z_]+|\*)((?:=|\s)[^\[\]\n]*)?\]")


def bbcode_markup(text: str) -> tuple[str, list[tuple[str, str]]] | None:
    """`text` as inline markup, its BBCode as codes, with each code's (opening, closing) text (a
    point's: its whole text and ""); None where it has no BBCode tag."""
    tags = [m for m in _BRACKET_TAG.finditer(text) if m.group(2) in _NAMES and not (m.group(1) and m.group(3))]
    if not tags:
        return None
    closes, open_tags = {}, []  # an opening tag's place in `tags` -> its closing tag's
    for index, tag in enumerate(tags):
        if not tag.group(1):
            if tag.group(2) not in _ALONE:
                open_tags.append(index)
            continue
        # a closing tag closes the latest one of its name still open (those opened after it stay unpaired)
        opening = next((k for k in range(len(open_tags) - 1, -1, -1) if tags[open_tags[k]].group(2) == tag.group(2)), None)
        if opening is not None:
            closes[open_tags[opening]] = index
            del open_tags[opening:]
    opened_by = {close: opening for opening, close in closes.items()}
    markup, codes, numbers, position, skip_to = [], [], {}, 0, -1  # numbers: an opening tag's code
    for index, tag in enumerate(tags):
        if index <= skip_to:
            continue  # (inside a point's content)
        markup.append(html.escape(text[position:tag.start()], quote=False))
        close, name = closes.get(index), tag.group(2)
        if close is not None and (name in _CONTENT_KEPT or name == "url" and not tag.group(3)):
            codes.append((text[tag.start():tags[close].end()], ""))  # (its content with it)
            markup.append(f"<p{len(codes)}/>")
            position, skip_to = tags[close].end(), close
            continue
        if close is not None:
            codes.append((tag.group(0), tags[close].group(0)))
            numbers[index] = len(codes)
            markup.append(f"<f{len(codes)}>")
        elif index in opened_by:
            markup.append(f"</f{numbers[opened_by[index]]}>")
        else:  # a tag alone ([br], [lb], one never closed)
            codes.append((tag.group(0), ""))
            markup.append(f"<p{len(codes)}/>")
        position = tag.end()
    markup.append(html.escape(text[position:], quote=False))
    return "".join(markup), codes


def message_markup(text: str) -> tuple[str, list[tuple[str, str]] | None]:
    """A message's text as markup for the model: with its BBCode as codes, and their tags; else
    as_markup's, and None."""
    coded = bbcode_markup(text)
    return coded if coded is not None else (as_markup(text), None)


def message_text(translation: str, markup: str, codes: list[tuple[str, str]] | None) -> str:
    """A message's translation of `markup` (message_markup's) in its text's own form again."""
    return from_bbcode_markup(translation, markup, codes) if codes is not None else from_markup(translation, markup)


def from_bbcode_markup(translation: str, markup: str, codes: list[tuple[str, str]]) -> str:
    """A translation of `markup` (bbcode_markup's) written in BBCode again: its codes the tags they
    stand for, its text unescaped, no space beside a point where the source had none."""
    translation = spaced_as_in(translation, markup)
    written, position = [], 0
    for tag in TAG.finditer(translation):
        written.append(html.unescape(translation[position:tag.start()]))
        closing, _, number, _ = tag.groups()
        opening, closing_text = codes[int(number) - 1]
        written.append(closing_text if closing else opening)
        position = tag.end()
    written.append(html.unescape(translation[position:]))
    return "".join(written)
