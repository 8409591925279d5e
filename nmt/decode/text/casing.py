"""Input in capitals or in Title Case, which a model trained on ordinary text mistranslates (it
has seen few such lines): the line, or the sentence of a line (a headline before its paragraph),
is translated in sentence case instead, and the translation of one in capitals is given in
capitals (`decode.normalize_case`). A word in capitals in an ordinary sentence (emphasis, "an
ORANGE hat", or a name the vocabulary spells no better in capitals, "AMC") is translated in lower
case, and where the output copies it, it is written in capitals again (`recapitalized`). A line
with a prefix or constraints is left as it is: they are written in the case the output should
have."""

from __future__ import annotations

import re
from collections.abc import Callable

from nmt.data.tokenizer import output_text
from nmt.decode.search import Hypothesis

_SENTENCE_START = re.compile(r"(^|[.!?][\"'”»)]*\s+)(\W*)(\w)")
_SENTENCE_END = re.compile(r"[.!?][\"'”»)]*\s+")
_LONG_WORD = re.compile(r"(?<![^\W\d_])[^\W\d_]{3,}(?![^\W\d_])")  # 3 or more letters, nothing joined to them


def source_case(line: str) -> str | None:
    """"upper" for a line in capitals, "title" for one in Title Case (every word of 3 or more
    capitalized and nothing else in capitals), None otherwise."""
    letters = "".join(filter(str.isalpha, line))
    if len(letters) >= 2 and all(map(str.isupper, letters)):
        return "upper"
    words = [w for w in line.split() if w[:1].isalpha()]
    if len(words) >= 3 and all(w[0].isupper() and w[1:] == w[1:].lower() for w in words):
        return "title"
    return None


def sentence_case(line: str) -> str:
    """Lower case, with the first letter of each sentence capitalized."""
    return _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2) + m.group(3).upper(), line.lower())


def ordinary_sentences(line: str) -> list[tuple[int, int]]:
    """The (start, end) of each sentence of `line` that is in neither capitals nor Title Case (none
    where the whole line is in one of them)."""
    if source_case(line) is not None:
        return []
    ends = [m.end() for m in _SENTENCE_END.finditer(line)] + [len(line)]
    return [(a, b) for a, b in zip([0, *ends], ends) if source_case(line[a:b]) is None]


def capitalized_words(line: str, pieces: Callable[[str], int]) -> list[tuple[int, int]]:
    """The (start, end) of the words of `line` to translate in lower case: words of 3 or more
    letters, all capitals, that the vocabulary spells in fewer pieces in lower case (`pieces`: a
    word's number of pieces), in a line, or a sentence of it, that is not itself in capitals or
    Title Case (a headline, answered in capitals instead); a word it spells as well in capitals
    ("USA", where it is one piece) stays."""
    return [(start + a, start + b) for start, end in ordinary_sentences(line)
            for a, b in (m.span() for m in _LONG_WORD.finditer(line[start:end]))
            if line[start + a:start + b].isupper() and len(line[start + a:start + b].lower()) == b - a
            and pieces(line[start + a:start + b].lower()) < pieces(line[start + a:start + b])]


def lowered(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with the words at `spans` in lower case."""
    for start, end in reversed(spans):
        text = text[:start] + text[start:end].lower() + text[end:]
    return text


def recapitalized(output: str, words: list[str]) -> str:
    """`output` with each of `words` (in capitals in the source) that it copied, in lower case or
    capitalized ("amc", "Gontaga"), written in capitals again; a word it translated ("ORANGE" as
    "orangefarbenen") stays as translated."""
    for word in words:
        output = re.sub(rf"(?<![^\W\d_]){re.escape(word)}(?![^\W\d_])", word, output, flags=re.IGNORECASE)
    return output


def hypothesis_text(tokenizer, hypothesis: Hypothesis) -> str:
    """The output text of a hypothesis, in capitals where its source was (or as markup and
    verbatim spans made it: `Hypothesis.text`)."""
    if hypothesis.text is not None:
        return hypothesis.text
    text = output_text(tokenizer, hypothesis.tokens)
    return text.upper() if hypothesis.upper else text
