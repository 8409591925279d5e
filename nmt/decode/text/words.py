"""What a word is, for word alignments and for putting markup back: a run of characters between
spaces, and in Chinese and Japanese writing, which has no spaces, each character (Han, kana and
their punctuation). Both sides of an alignment agree on it: the words of a text (`word_spans`)
and those of its tokenizer pieces (`piece_words`), so that an alignment computed over pieces
names the words of the text. Full-width Latin letters and digits ("３０００") are not such
characters: the tokenizer's NFKC reads them as ordinary ones ("3000"), one word.
"""

from __future__ import annotations

import re

from nmt.data.word_alignments import WORD_START

# Han (with extensions and compatibility forms), kana, CJK symbols and punctuation, half-width katakana.
_ONE_WORD_EACH = "\u3001-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff61-\uff9f\U00020000-\U0003ffff"
_WORD = re.compile(f"[{_ONE_WORD_EACH}]|[^\\s{_ONE_WORD_EACH}]+")
_CHARACTER_WORD = re.compile(f"[{_ONE_WORD_EACH}]")


def is_word_by_itself(char: str) -> bool:
    """A character that is a word of its own (Chinese and Japanese writing)."""
    return _CHARACTER_WORD.fullmatch(char) is not None


def word_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each word of `text`."""
    return [m.span() for m in _WORD.finditer(text)]


def piece_words(pieces: list[str]) -> list[tuple[int, ...]]:
    """The words each tokenizer piece holds, in order: a piece whose text starts with ▁ starts a
    new word (the first piece always belongs to word 0), each Chinese or Japanese character is a
    word (a piece of two such characters holds two words), and a piece without a character of a
    word (a lone ▁) belongs to the word after it (else to the one before)."""
    found: list[tuple[int, ...]] = []
    current, extends = -1, False  # the last word, and whether the next ordinary character continues it
    waiting = 0  # pieces at the end of `found` that hold no word yet
    for piece in pieces:
        mine: list[int] = []
        for char in piece:
            if char == WORD_START or char.isspace():
                extends = False
                continue
            if is_word_by_itself(char) or not extends:
                current += 1
            extends = not is_word_by_itself(char)
            if not mine or mine[-1] != current:
                mine.append(current)
        if not mine:
            found.append(())
            waiting += 1
            continue
        for i in range(len(found) - waiting, len(found)):
            found[i] = (mine[0],)
        waiting = 0
        found.append(tuple(mine))
    for i in range(len(found) - waiting, len(found)):  # at the end: the word before, or the first
        found[i] = (max(current, 0),)
    return found


def word_count(words: list[tuple[int, ...]]) -> int:
    """How many words `piece_words` found."""
    return max((w for piece in words for w in piece), default=-1) + 1
