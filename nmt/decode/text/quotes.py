"""Quotation marks carried across by the markup rules (nmt.decode.text.markup), as parentheses are
(nmt.decode.text.asides). A model that saw few quotation marks in training drops them and
garbles what they hold: on test_2016_flickr the demo model scored 36.30, the same lines in “…”
25.06 and with two words of each quoted 21.83, keeping the marks in 157 of 1,000 (`make
bench-quotes`). Here the words a quote holds stay in their sentence, which the model reads
without the marks, and the marks become an element around the output words aligned to those
words, written as in the source (`decode.quotes`).

A quote is a span between quotation marks of one style, holding a letter and no other mark of
its style: "…" (the opening mark at the line's start or after a space or an opening bracket, the
closing one before a space, punctuation or the end: `5" long` is no quote), “…”, „…“ (or „…”),
«…» and »…«; and single marks, which are apostrophes too: '…' and ‘…’ (opened as "…" is, by a
letter after the mark; closed by a mark before a space, punctuation or the end; a mark between
two letters inside is an apostrophe: 'I don't know'; so is one after an "s" before a word in lower
case where the quote closes later in the line: 'the dogs' toys are red') and ‚…‘.

The marks are then written as the target language writes quotes (`decode.quote_marks: target`,
TARGET_MARKS): a quote „…“ in German, «…» in French, Russian and Ukrainian, 「…」 in Japanese,
one inside another in the language's second marks (‚…‘). English keeps straight marks straight
and makes the others “…” and ‘…’; a language without an entry keeps the marks as written.
"""

from __future__ import annotations

import html
import re

QUOTE = "quote"  # the name of a markup item that holds a quote's marks (nmt.decode.text.markup.Item.name)
SEAM = "\ue000"  # where a tag stands, in the text of a line's pieces joined (quote_spans's `seams`)


def _pattern(seam: str) -> re.Pattern:
    after = rf"(?=$|[\s.,;:!?)\]}}…\"”»{seam}])"  # what may follow a closing mark
    opens = rf"(?<![^\s(\[{{{seam}])"  # what may come before an opening straight mark: the start, a space, a bracket
    letter_after = rf"(?={seam}*[^\W\d_])" if seam else r"(?=[^\W\d_])"
    # "s'" before a word in lower case, where the quote closes later in the line: a plural's
    # possessive ('the dogs' toys are red'), part of the quote, not its closing mark
    closes_later = r" [a-z][^'\n]*\S'" + after
    possessive = r"(?<=s)'(?=" + closes_later + ")"
    return re.compile("|".join([
        opens + r'"[^"\n]+"' + after, r"“[^“”„\n]+”", r"„[^“”„\n]+[“”]", r"«[^«»\n]+»", r"»[^«»\n]+«",
        opens + "'" + letter_after + r"(?:[^'\n]|(?<=\w)'(?=\w)|" + possessive + r")+?(?<=\S)'(?!(?<=s')" + closes_later + ")" + after,
        r"‘(?:[^‘’\n]|(?<=\w)’(?=\w))+?’" + after, r"‚[^‚‘\n]+‘"]))


_QUOTES, _QUOTES_ACROSS_SEAMS = _pattern(""), _pattern(SEAM)


def quote_spans(text: str, seams: bool = False) -> list[tuple[int, int]]:
    """The (start, end) of each quote of `text`, its marks included, in order. `seams`: `text` is a
    line's text pieces joined with SEAM where a tag stands, which may stand beside a mark as a
    space may."""
    pattern = _QUOTES_ACROSS_SEAMS if seams else _QUOTES
    return [m.span() for m in pattern.finditer(text) if any(c.isalpha() for c in m.group()[1:-1])]


# A language's (two-letter code) quotation marks: a quote's opening and closing marks, then those of
# a quote inside a quote (CLDR's quotation and alternate quotation delimiters; French with the
# no-break spaces its typography puts inside guillemets).
TARGET_MARKS = {
    "cs": ("„", "“", "‚", "‘"), "de": ("„", "“", "‚", "‘"), "sk": ("„", "“", "‚", "‘"),
    "en": ("“", "”", "‘", "’"), "fr": ("«\u00a0", "\u00a0»", "“", "”"), "ja": ("「", "」", "『", "』"),
    "pl": ("„", "”", "«", "»"), "ru": ("«", "»", "„", "“"), "uk": ("«", "»", "„", "“"),
}
_STRAIGHT = {'"', "'"}
_KEEPS_STRAIGHT = {"en"}  # languages whose text is as often typed with straight marks as with curly ones


def in_target_marks(items: list, lang: str | None) -> None:
    """Each quote element among markup items (nmt.decode.text.markup.Item) and inside them given the
    quotation marks of `lang` (two-letter), by its depth: a quote in a quote gets the second marks.
    Straight marks stay straight in English, where they are as common as curly ones."""
    marks = TARGET_MARKS.get(lang or "")
    if marks is None:
        return

    def restyle(items: list, depth: int) -> None:
        for item in items:
            inner = depth
            if item.name == QUOTE:
                opening, closing = marks[2:] if depth else marks[:2]
                straight = html.unescape(item.open) in _STRAIGHT and html.unescape(item.close) in _STRAIGHT
                if not (straight and lang in _KEEPS_STRAIGHT):
                    item.open, item.close = opening, closing
                inner = depth + 1
            restyle(item.children, inner)

    restyle(items, 0)
