"""What a word is, for word alignments and for putting markup back: a run of characters between
spaces; in Chinese and Japanese writing, which has no spaces, each character (Han, kana and
their punctuation); in Thai, which writes no spaces between words either, the words PyThaiNLP's
dictionary segmenter finds (`pip install 'nmt[thai]'`; without it a Thai run between spaces
stays one word). Both sides of an alignment agree on it: the words of a text (`word_spans`)
and those of its tokenizer pieces (`piece_words`, the words of the text the pieces spell), so
that an alignment computed over pieces names the words of the text. Full-width Latin letters
and digits ("３０００") are not such characters: the tokenizer's NFKC reads them as ordinary
ones ("3000"), one word.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from nmt.data.word_alignments import WORD_START

# Han (with extensions and compatibility forms), kana, CJK symbols and punctuation, half-width katakana.
_ONE_WORD_EACH = "\u3001-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff61-\uff9f\U00020000-\U0003ffff"
_WORD = re.compile(f"[{_ONE_WORD_EACH}]|[^\\s{_ONE_WORD_EACH}]+")
_CHARACTER_WORD = re.compile(f"[{_ONE_WORD_EACH}]")
_THAI = re.compile("[\u0e01-\u0e5b]")
# SARA AM (ำ), which NFKC (the tokenizer's) writes as NIKHAHIT + SARA AA: the segmenter's dictionary
# knows the one character, so a piece's text is read with it put back
_SARA_AM, _SARA_AM_NFKC = "\u0e33", "\u0e4d\u0e32"


def is_word_by_itself(char: str) -> bool:
    """A character that is a word of its own (Chinese and Japanese writing)."""
    return _CHARACTER_WORD.fullmatch(char) is not None


def written_without_spaces(char: str) -> bool:
    """A character of writing that puts no space between words (Chinese, Japanese, Thai): what
    stands next to it is glued to it."""
    return is_word_by_itself(char) or _THAI.match(char) is not None


def lacks_thai_words(text: str) -> bool:
    """Whether `text` holds Thai but PyThaiNLP (nmt[thai]) is not there to find its words."""
    return _THAI.search(text) is not None and thai_segmenter() is None


def word_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each word of `text`."""
    spans = []
    for m in _WORD.finditer(text):
        if _THAI.search(m.group()) and (segment := thai_segmenter()) is not None:
            spans += [(m.start() + a, m.start() + b) for a, b in _thai_words(m.group(), segment)]
        else:
            spans.append(m.span())
    return spans


@functools.cache
def thai_segmenter() -> Callable[[str], list[str]] | None:
    """PyThaiNLP's newmm (maximal matching over its own dictionary, shipped in its package), or
    None where nmt[thai] is not installed."""
    try:
        from pythainlp.tokenize import word_tokenize
    except (ImportError, OSError):  # not installed, or its data folder could not be made (a read-only home)
        return None
    return functools.partial(word_tokenize, engine="newmm", keep_whitespace=True)


def _thai_words(run: str, segment: Callable[[str], list[str]]) -> list[tuple[int, int]]:
    """The words of a run without spaces that holds Thai, as (start, end) in `run`; the run
    whole where the segmenter's words do not spell it."""
    composed, origin, i = [], [], 0  # the run with SARA AM as one character, and where each came from
    while i < len(run):
        two = run.startswith(_SARA_AM_NFKC, i)
        composed.append(_SARA_AM if two else run[i])
        origin.append(i)
        i += 2 if two else 1
    origin.append(len(run))
    words = segment("".join(composed))
    if "".join(words) != "".join(composed):
        return [(0, len(run))]
    spans, at = [], 0
    for word in words:
        spans.append((origin[at], origin[at + len(word)]))
        at += len(word)
    return spans


def piece_words(pieces: list[str]) -> list[tuple[int, ...]]:
    """The words each tokenizer piece holds, in order: the words of the text the pieces spell
    (▁ a space; `word_spans`), so that a piece starting with ▁ starts a new word, a piece of two
    Chinese characters holds two words, and a piece within a word continues it; a piece without
    a character of a word (a lone ▁) belongs to the word after it (else to the one before; the
    first piece always to word 0)."""
    text = "".join(pieces).replace(WORD_START, " ")
    word_at = [-1] * len(text)
    for word, (start, end) in enumerate(word_spans(text)):
        word_at[start:end] = [word] * (end - start)
    found, at = [], 0
    for piece in pieces:
        found.append(tuple(dict.fromkeys(w for w in word_at[at: at + len(piece)] if w >= 0)))
        at += len(piece)
    following = max(word_at, default=-1)
    for i in range(len(found) - 1, -1, -1):  # a piece without words: the next piece's first word
        if found[i]:
            following = found[i][0]
        else:
            found[i] = (max(following, 0),)
    return found


def word_count(words: list[tuple[int, ...]]) -> int:
    """How many words `piece_words` found."""
    return max((w for piece in words for w in piece), default=-1) + 1
