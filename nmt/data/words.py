"""What a word is, for word alignments and for putting markup back: a run of characters between
spaces; in Chinese and Japanese writing, which has no spaces, each character (Han, kana and
their punctuation); in Thai and Lao, which write no spaces between words either, the words a
dictionary segmenter finds: PyThaiNLP's (`pip install 'nmt[thai]'`) and LaoNLP's (`nmt[lao]`);
without it such a run between spaces stays one word. Khmer and Burmese write none either, and
have no segmenter that is a well-kept library: as each Han character is a word, each Khmer
character cluster (a consonant or independent vowel with its subscript consonants, vowel signs
and marks) and each Burmese syllable (a consonant with its medials, vowels, tones and its final
consonants, killed or stacked) is one, found by Unicode's rules of the script (`syllable_spans`).
Both sides of an alignment agree on it: the words of a text (`word_spans`) and those of its
tokenizer pieces (`piece_words`, the words of the text the pieces spell), so that an alignment
computed over pieces names the words of the text. Full-width Latin letters and digits ("３０００")
are not such characters: the tokenizer's NFKC reads them as ordinary ones ("3000"), one word.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from nmt.special_tokens import WORD_START

# Han (with extensions and compatibility forms), kana, CJK symbols and punctuation, half-width katakana.
_ONE_WORD_EACH = "\u3001-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff61-\uff9f\U00020000-\U0003ffff"
_WORD = re.compile(f"[{_ONE_WORD_EACH}]|[^\\s{_ONE_WORD_EACH}]+")
_CHARACTER_WORD = re.compile(f"[{_ONE_WORD_EACH}]")
_RUN = re.compile(r"\S+")


@dataclass(frozen=True)
class Script:
    """A writing without spaces between words, whose words a dictionary segmenter finds (an extra)."""

    name: str
    letters: re.Pattern
    library: str
    extra: str
    # Characters the tokenizer's NFKC writes as two, which the segmenter's dictionary knows as one:
    # a piece's text is read with them put back (one, the two)
    composed: tuple[tuple[str, str], ...]


SCRIPTS = (
    Script("Thai", re.compile("[\u0e01-\u0e5b]"), "PyThaiNLP", "thai", (("\u0e33", "\u0e4d\u0e32"),)),  # SARA AM
    # the vowel sign AM, and the ligatures HO NO and HO MO
    Script("Lao", re.compile("[\u0e81-\u0edf]"), "LaoNLP", "lao",
           (("\u0eb3", "\u0ecd\u0eb2"), ("\u0edc", "\u0eab\u0e99"), ("\u0edd", "\u0eab\u0ea1"))),
)


# Khmer: a base (consonant or independent vowel) with what it carries: subscripts (COENG and a
# consonant), vowel signs and marks, zero-width joiners; its digits together; each sign of
# punctuation and each lunar-date symbol a word.
_KHMER_BASE, _KHMER_MARKS = "\u1780-\u17b3", "\u17b4-\u17d1\u17d3\u17dd\u200c\u200d"
_KHMER = (f"[{_KHMER_BASE}](?:\u17d2[{_KHMER_BASE}]|[{_KHMER_MARKS}])*", "[\u17e0-\u17e9\u17f0-\u17f9]+",
          "[\u17d4-\u17dc\u19e0-\u19ff]")
# Burmese (and the other languages of its script): a base (consonant, independent vowel, the
# symbols that are words) with its medials, vowels and tones, and the consonants that end the
# syllable: one killed by ASAT (U+103A, a DOT BELOW may come between) or stacked by VIRAMA
# (U+1039) on the one after it, which belongs to the same syllable ("မန္တ" of မန္တလေး).
_MYANMAR_BASE = ("\u1000-\u102a\u103f\u104c-\u104f\u1050-\u1055\u105a-\u105d\u1061\u1065\u1066"
                 "\u106e-\u1070\u1075-\u1081\u108e")
_MYANMAR_MARKS = ("\u102b-\u103e\u1056-\u1059\u105e-\u1060\u1062-\u1064\u1067-\u106d\u1071-\u1074"
                  "\u1082-\u108d\u108f\u109a-\u109d")
_MYANMAR = (f"[{_MYANMAR_BASE}](?:[{_MYANMAR_MARKS}]|[{_MYANMAR_BASE}](?=\u1037*[\u103a\u1039])"
            f"|(?<=\u1039)[{_MYANMAR_BASE}])*", "[\u1040-\u1049\u1090-\u1099]+", "[\u104a\u104b]")
_SYLLABLE = re.compile("|".join((*_KHMER, *_MYANMAR)))
_SYLLABLE_SCRIPTS = re.compile("[\u1780-\u17ff\u19e0-\u19ff\u1000-\u109f]")
_NOT_A_WORD = re.compile("[\u200b-\u200d\u2060\ufeff]+")  # zero-width spaces and joiners between words


def syllable_spans(run: str) -> list[tuple[int, int]]:
    """The words of a run between spaces in Khmer or Burmese writing, as (start, end) in `run`:
    each character cluster (Khmer) or syllable (Burmese); what lies between them ("10" in
    10គីឡូ) one word, zero-width spaces none."""
    spans, at = [], 0
    for m in _SYLLABLE.finditer(run):
        if m.start() > at and not _NOT_A_WORD.fullmatch(run, at, m.start()):
            spans.append((at, m.start()))
        spans.append(m.span())
        at = m.end()
    if at < len(run) and not _NOT_A_WORD.fullmatch(run, at):
        spans.append((at, len(run)))
    return spans


def is_word_by_itself(char: str) -> bool:
    """A character that is a word of its own (Chinese and Japanese writing)."""
    return _CHARACTER_WORD.fullmatch(char) is not None


def written_without_spaces(char: str) -> bool:
    """A character of writing that puts no space between words (Chinese, Japanese, Thai, Lao,
    Khmer, Burmese): what stands next to it is glued to it."""
    return is_word_by_itself(char) or any(script.letters.match(char) for script in SCRIPTS) or \
        _SYLLABLE_SCRIPTS.match(char) is not None


def script_of(run: str) -> Script | None:
    """The script of SCRIPTS that a run between spaces holds, if any."""
    return next((script for script in SCRIPTS if script.letters.search(run)), None)


def without_segmenter(text: str) -> Script | None:
    """A script of SCRIPTS that `text` holds but whose segmenter is not installed."""
    return next((script for script in SCRIPTS if script.letters.search(text) and segmenter(script.name) is None), None)


def outside_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """The text of `text` outside `spans` (in order, not overlapping), joined."""
    pieces, at = [], 0
    for start, end in spans:
        pieces.append(text[at:start])
        at = end
    return "".join(pieces) + text[at:]


def word_spans(text: str, dictionaries: bool = True) -> list[tuple[int, int]]:
    """The (start, end) of each word of `text`; `dictionaries` False: Thai and Lao runs whole, as
    without their segmenters (words by Unicode's rules alone, the same on every machine)."""
    spans = []
    for m in _WORD.finditer(text):
        script = script_of(m.group()) if dictionaries else None
        if script is not None and (segment := segmenter(script.name)) is not None:
            spans += [(m.start() + a, m.start() + b) for a, b in _dictionary_words(m.group(), segment, script.composed)]
        elif script is None and _SYLLABLE_SCRIPTS.search(m.group()):
            spans += [(m.start() + a, m.start() + b) for a, b in syllable_spans(m.group())]
        else:
            spans.append(m.span())
    return spans


@functools.cache
def segmenter(script: str) -> Callable[[str], list[str]] | None:
    """The dictionary segmenter of a script of SCRIPTS (its dictionary shipped in its package), or
    None where its extra is not installed: PyThaiNLP's newmm (maximal matching) for Thai, LaoNLP's
    (the same algorithm over a Lao dictionary) for Lao."""
    try:
        if script == "Thai":
            from pythainlp.tokenize import word_tokenize

            return functools.partial(word_tokenize, engine="newmm", keep_whitespace=True)
        from laonlp.tokenize import word_tokenize as lao_words

        return lao_words
    except (ImportError, OSError):  # not installed, or its data folder could not be made (a read-only home)
        return None


def _dictionary_words(run: str, segment: Callable[[str], list[str]],
                      pairs: tuple[tuple[str, str], ...]) -> list[tuple[int, int]]:
    """The words of a run without spaces, as (start, end) in `run`; the run whole where the
    segmenter's words do not spell it. `pairs`: Script.composed."""
    composed, origin, i = [], [], 0  # the run with each pair's one character, and where each came from
    while i < len(run):
        one, two = next(((one, two) for one, two in pairs if run.startswith(two, i)), (run[i], run[i]))
        composed.append(one)
        origin.append(i)
        i += len(two)
    origin.append(len(run))
    words = segment("".join(composed))
    if "".join(words) != "".join(composed):
        return [(0, len(run))]
    spans, at = [], 0
    for word in words:
        spans.append((origin[at], origin[at + len(word)]))
        at += len(word)
    return spans


def spans_by_rules_alone(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each word of `text` that needs no dictionary (word_spans without
    dictionaries): its whitespace words, each Chinese or Japanese character, Khmer cluster and
    Burmese syllable a word of its own."""
    if not has_character_words(text):
        return [m.span() for m in _RUN.finditer(text)]
    return word_spans(text, dictionaries=False)


def by_rules_alone(text: str) -> list[str]:
    """The words of spans_by_rules_alone. Guided alignment's dice links number these
    (nmt.data.word_alignments), and augmentation's tags wrap them (nmt.data.augment)."""
    return [text[start:end] for start, end in spans_by_rules_alone(text)]


def has_character_words(text: str) -> bool:
    """Whether `text` holds a character of a script whose words are found by its characters
    (Chinese and Japanese characters, Khmer and Burmese): where it does not, words are those
    between spaces, dictionaries aside."""
    return bool(_CHARACTER_WORD.search(text) or _SYLLABLE_SCRIPTS.search(text))


def piece_words(pieces: list[str], dictionaries: bool = True) -> list[tuple[int, ...]]:
    """The words each tokenizer piece holds, in order: the words of the text the pieces spell
    (▁ a space; `word_spans`), so that a piece starting with ▁ starts a new word, a piece of two
    Chinese characters holds two words, and a piece within a word continues it; a piece without
    a character of a word (a lone ▁) belongs to the word after it (else to the one before; the
    first piece always to word 0)."""
    text = "".join(pieces).replace(WORD_START, " ")
    word_at = [-1] * len(text)
    for word, (start, end) in enumerate(word_spans(text, dictionaries)):
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
