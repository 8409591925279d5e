"""Stress forms of a test set for `make bench-robustness`: inline tags around words, and verbatim
text (numbers, URLs, emoji, ...) inserted between words; and the checks of their outputs.

Every form is drawn from a seeded generator, so two runs build the same lines.
"""

from __future__ import annotations

import random
import re
from collections import Counter

from nmt.decode.text.markup import MarkupError, mark, walk
from nmt.decode.text.number_marks import written_for

# Two-word tags carry attributes with a quoted ">" and a character reference in them.
ONE_WORD = ("<b>", "</b>")
TWO_WORDS = ('<a href="https://example.org/?q=1&amp;r=2" title="a > b">', "</a>")
# One of each kind of text that translations should copy unchanged.
VERBATIM = ["42", "1102", "2024-05-17", "10:30", "$19.99", "15%", "3.5", "https://example.org/path?id=7",
            "www.example.com", "info@example.com", "🎉", "👍🏽", "C-3PO", "R2-D2", "COVID-19", "#nmt", "@nmt_user"]
_CORE = re.compile(r"^(\W*)(.*?\w)(\W*)$")


def _cores(words: list[str]) -> list[int]:
    """Indices of the words with letters in them (a tag goes around those)."""
    return [i for i, w in enumerate(words) if any(c.isalpha() for c in w)]


def tagged(sources: list[str], width: int, seed: int = 1) -> tuple[list[str], list[tuple[int, int]]]:
    """Each source with `width` (1 or 2) consecutive words wrapped in a tag (punctuation at the
    edges left outside); and the wrapped words' (first, last) indices."""
    rng = random.Random(seed)
    open_tag, close_tag = ONE_WORD if width == 1 else TWO_WORDS
    lines, spans = [], []
    for source in sources:
        words = source.split()
        candidates = [i for i in _cores(words) if i + width - 1 < len(words) and i + width - 1 in _cores(words)]
        if not candidates:
            lines.append(source)
            spans.append((-1, -1))
            continue
        first = rng.choice(candidates)
        last = first + width - 1
        lead, head, _ = _CORE.match(words[first]).groups()
        _, tail, trail = _CORE.match(words[last]).groups()
        if first == last:
            words[first] = f"{lead}{open_tag}{head}{close_tag}{trail}"
        else:
            words[first] = f"{lead}{open_tag}{words[first][len(lead):]}"
            words[last] = f"{words[last][:len(words[last]) - len(trail)]}{close_tag}{trail}"
        lines.append(" ".join(words))
        spans.append((first, last))
    return lines, spans


def with_verbatim(sources: list[str], seed: int = 1) -> tuple[list[str], list[str]]:
    """Each source with one item of VERBATIM (in turn) inserted between two of its words; and each
    item as a German translation writes it (nmt.decode.text.number_marks: "$19.99" is "$19,99")."""
    rng = random.Random(seed)
    lines, items = [], []
    for i, source in enumerate(sources):
        words, item = source.split(), VERBATIM[i % len(VERBATIM)]
        at = rng.randrange(1, len(words)) if len(words) > 1 else len(words)
        lines.append(" ".join(words[:at] + [item] + words[at:]))
        after = re.match(r"[^\W\d_]*", words[at]).group() if at < len(words) else ""  # (the word a measure may be)
        items.append(written_for(item, "en", "de", after))
    return lines, items


def tags_of(line: str) -> Counter | None:
    """The tags of a markup line, as written; None where its markup does not nest."""
    try:
        marked = mark(line, markup=True, verbatim=False)
    except MarkupError:
        return None
    return Counter(tag for item in walk(marked.items) for tag in (item.open, item.close) if tag)


def text_of(line: str) -> str:
    """A markup line's text: tags out, references read, spaces normalized."""
    try:
        return mark(line, markup=True, verbatim=False).text
    except MarkupError:
        return mark(line, markup=True, verbatim=False, lenient=True).text


def tagged_words(line: str) -> set[int]:
    """The indices of `text_of(line)`'s words inside the line's outermost element."""
    marked = mark(line, markup=True, verbatim=False)
    elements = [item for item in marked.items if not item.point]
    if not elements:
        return set()
    start, end = elements[0].start, elements[0].end
    return {i for i, m in enumerate(re.finditer(r"\S+", marked.text)) if m.start() < end and m.end() > start}


def without(text: str, item: str) -> str:
    return " ".join(text.replace(item, " ").split())
