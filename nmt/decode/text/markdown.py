"""Markdown's inline marks carried across a translation (`decode.markdown`): `**strong**` and
`__strong__`, `*emphasis*` and `_emphasis_`, `~~struck~~` and links (`[a link](url "title")`,
`[a link][id]`) are elements around their words; `` `code` ``, images `![alt](src)`, footnote
references `[^1]`, emoji shortcodes `:smile:`, math `$x^2$` and a site's template tags (Hugo's `{{< ref "a.md" >}}`,
Jekyll's `{% link a.md %}`, `{{ site.name }}`) are points copied as written, as inline tags are
(nmt.decode.text.markup); so are reStructuredText's roles (:ref:`install`), links
(`` `Python <https://python.org>`_ ``, Python_), substitutions (|version|) and footnote
references ([#]_), and HTML comments. AsciiDoc's likewise: a link's words (`https://a.org[the
site]`, `link:a.html[the guide]`, `xref:a.adoc[Install]`, `<<install,the install>>`) and a
footnote's (`footnote:[A note.]`) are elements, and so is a highlight (`#marked#`,
`[.role]#text#`); its other macros (`image:a.png[]`, `kbd:[Ctrl+C]`, `btn:[OK]`,
`pass:[...]`), cross references (`<<install>>`), attribute references (`{version}`), anchors
(`[[id]]`), passthroughs (`+text+`), index terms, sub- and superscripts (`H~2~O`, `x^2^`) are
points. A model given them as text drops them and garbles the word they wrap
("A **black** dog" gave "Ein misiger Hund"; a code span was lost).

A mark counts where CommonMark would read it so: the text it wraps starts and ends with something
other than a space, and an underscore or single asterisk does not touch a letter outside it
("snake_case_name", "5 * 3 * 2" and "2*3*4" are text). A code span's content is never read.
"""

from __future__ import annotations

import re

# a code span (a double-backtick literal first: reStructuredText's may end in a backtick, ``:func:`open```)
CODE_SPAN = re.compile(r"``(?!`).*?``(?!`)|(`+)(?!`).+?(?<!`)\1(?!`)")
_TEMPLATE = r"\{\{[<%].*?[%>]\}\}|\{%.*?%\}|\{\{.*?\}\}"  # Hugo's shortcodes, Jekyll's Liquid, a template's {{ value }}
_DESTINATION = (rf"(?:<[^<>\n]*>|(?:{_TEMPLATE}|\([^()\s]*\)|[^()\s])+)"  # a link's URL, and its title
                r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?")
_MACRO_WORDS = r"(?=[^\]\n=\",]*[^\W\d_][^\]\n=\",]*\])"  # a macro's text, without attributes (`[text,window=_blank]`)
_LINK_END = rf"\]\({_DESTINATION}\)|\]\[[^\]\n]*\]"  # [text](url "title"), [text][reference]

# (kind, pattern): an element's groups are its opening mark, content and closing mark; a point's whole match
_MARKS = re.compile(
    r"(?P<role>:[\w.+-]+(?::[\w.+-]+)*:`[^`\n]+`)"  # reStructuredText's role: :ref:`install`, :py:func:`open`
    r"|(?P<code>``(?!`).*?``(?!`)"  # a double-backtick literal (reStructuredText's may end in a backtick: ``:func:`open```)
    r"|(?P<ticks>`+)(?!`).+?(?<!`)(?P=ticks)(?!`)(?:__?(?!\w))?)"  # with reStructuredText's link: `a <url>`_
    r"|(?P<reference>(?<![\w`\\])[A-Za-z0-9][\w.-]*?[A-Za-z0-9]__?(?![\w]))"  # reStructuredText's Python_
    r"|(?P<substitution>\|(?=[^\s|])[^|\n]*(?<=[^\s|])\|(?:__?)?)"  # reStructuredText's |version|
    r"|(?P<citation>\[(?:#[\w-]*|\*|\d+|[A-Za-z][\w-]*)\]_)"  # reStructuredText's footnote reference: [#]_, [1]_
    rf"|(?P<image>!\[[^\]\n]*(?:{_LINK_END}))"
    rf"|(?P<template>{_TEMPLATE})"
    r"|(?P<comment><!--.*?-->)"  # an HTML comment: [a link][id]<!-- ignore -->
    # AsciiDoc's: a link's or footnote's words; a macro that is not words, a cross reference, an
    # attribute's value, an anchor, a passthrough, an index term, a sub- or superscript
    rf"|(?P<macro>(?<![\w\\])(?:(?:link|xref|mailto|footnote):[^\s\[\]]*|(?:https?|ftp)://[^\s\[\]]+)\[{_MACRO_WORDS})"
    r"|(?P<xreftext><<[\w:.#/-]+,(?=[^>\n]*\S>>))"
    r"|(?P<asciidoc>(?<![\w\\])(?:[a-z]+[0-9]?:[^\s\[\]]*|(?:https?|ftp)://[^\s\[\]]+)\[[^\]\n]*\]"
    r"|<<[^<>\n]+>>|\{[A-Za-z0-9_][\w-]*\}|\[\[\[?[\w:.-]+(?:,[^\]\n]*)?\]\]\]?|\+\+\+.+?\+\+\+"
    r"|(?<![\w+])\+\+?(?=[^\s+]).*?(?<=[^\s+])\+\+?(?![\w+])|\({3}.+?\){3}|(?<!~)~[^\s~]+~(?!~)|\^[^\s^]+\^)"
    r"|(?P<highlight>(?<![\w#&])(?:\[[.#%]?[\w.-]+\])?#(?=[^\s#]))"
    r"|(?P<footnote>\[\^[^\]\s]+\])"
    r"|(?P<emoji>(?<![\w:]):[a-z0-9+][\w+-]*:(?![\w:]))"  # :smile:, :material-check:
    r"|(?P<math>(?<![\\$\w])\$(?=[^\s$])[^$\n]*?(?<=[^\s\\])\$(?![\d$]))"  # $x^2$, not $5 or $5 and $6
    rf"|(?P<link>\[(?=[^\]\n]*\S(?:{_LINK_END})))"
    r"|(?P<strong>\*\*(?=\S)|__(?=\S)(?<![\w_]__))"
    r"|(?P<strike>~~(?=\S))"
    r"|(?P<em>(?<![\w*])\*(?=[^\s*])|(?<![\w_])_(?=[^\s_]))")
_POINTS = ("role", "code", "reference", "substitution", "citation", "image", "template", "comment", "footnote", "emoji",
           "math", "asciidoc")  # copied as written


def markdown_pieces(line: str) -> list[tuple] | None:
    """`line`'s pieces as nmt.decode.text.markup reads them ("text", raw) | ("open", raw, name) |
    ("close", raw, name) | ("point", raw), or None where it holds no mark (most lines)."""
    if not any(c in line for c in "*_`[~{$:|<#+^("):
        return None
    pieces: list[tuple] = []
    found = _read(line, 0, len(line), pieces)
    return pieces if found else None


def _read(line: str, start: int, end: int, pieces: list[tuple]) -> bool:
    """Pieces of line[start:end] appended to `pieces`; whether any mark was found."""
    at, found, search = start, False, start
    while (match := _MARKS.search(line, search, end)) is not None:
        kind = match.lastgroup
        closed = None if kind in _POINTS else _closing(line, match, kind, end)
        if kind not in _POINTS and closed is None:  # an opening mark without its close: text
            search = match.end()
            continue
        if match.start() > at:
            pieces.append(("text", line[at:match.start()]))
        if closed is None:  # a code span, an image, a shortcode, math: copied as written
            pieces.append(("point", match.group()))
            at = match.end()
        else:
            content_start, content_end, close_raw = closed
            name = f"md-{kind}"
            pieces.append(("open", match.group(), name))
            if not _read(line, content_start, content_end, pieces):
                pieces.append(("text", line[content_start:content_end]))
            pieces.append(("close", close_raw, name))
            at = content_end + len(close_raw)
        found, search = True, at
    if found and at < end:
        pieces.append(("text", line[at:end]))
    return found


def _closing(line: str, opening: re.Match, kind: str, end: int) -> tuple[int, int, str] | None:
    """(content start, content end, closing mark) of the element `opening` starts, or None."""
    mark, content_start = opening.group(), opening.end()
    if kind == "link":
        close = re.compile(_LINK_END)
    elif kind in ("macro", "xreftext"):
        close = re.compile(r"\^?\]" if kind == "macro" else ">>")  # ("[the site^]": opened in a new window)
    elif kind == "highlight":
        close = re.compile(r"(?<=\S)#(?![\w#])")
    elif kind == "em":
        close = re.compile(rf"(?<=\S){re.escape(mark)}(?![\w{re.escape(mark)}])")
    else:
        close = re.compile(rf"(?<=\S){re.escape(mark)}" + (r"(?!\w)" if mark == "__" else ""))
    match = close.search(line, content_start, end)
    if match is None or match.start() == content_start:
        return None
    return content_start, match.start(), match.group()
