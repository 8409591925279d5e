"""Names ("Boston", "Vitamin Shoppe", "El Corazon") written into the translation as they stand
(`decode.copy_names`).

A model translates a name it has seldom or never seen piece by piece, and writes an invented word
or a wrong one in its place ("Ein Rallye Terrier" for "A Boston Terrier", "auf einer Hitze" for
"on top of a Hummer"). A name is found by its capital letter inside a sentence, where the source
vocabulary spells it in two or more pieces and no better in lower case (a word it knows well,
"Frisbee" or "China", is one piece); the capitalized words beside it join it ("Boston Terrier",
"Kids Food Basket"); in a sentence in capitals or Title Case, nothing is. It stays in the sentence, and the model translates the line as it is. Then,
where the output does not have the name as written, the output words aligned to it
(nmt.decode.text.alignment) that the model was unsure of, a token given less than
`DOUBTFUL` probability, are replaced by it, as a quantity's are by its digits
(nmt.decode.text.quantities). A capitalized word the model translates with confidence
("Mexican" as "mexikanischen", "T-shirt" as "T-Shirt") is its translation and stays. Not for a
source language that capitalizes every noun (German, Luxembourgish), where a capital says
nothing of a name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from nmt.data.words import word_spans
from nmt.decode.text.casing import ordinary_sentences
from nmt.decode.text.markup import aligned, output_word_spans
from nmt.decode.text.substitution import run_span, source_word_indices, substituted, word_run

# An output word is doubtful where one of its tokens had less than this probability: chosen on
# Multi30k's validation lines with names among 0.37, 0.22, 0.15, 0.135 and 0.08 (make bench-names).
DOUBTFUL = 0.15
_NOUNS_CAPITALIZED = {"de", "deu", "ger", "gsw", "lb", "ltz", "nds", "bar"}
_SENTENCE_END = re.compile(r"[.!?:][\"'”»)]*$")


def capitals_mark_names(language: str | None) -> bool:
    """Whether a capital letter inside a sentence of `language` (a code such as "en", "en_US",
    "deu_Latn"; None: not known) says a word may be a name: not where every noun has one."""
    return language is None or re.split(r"[_-]", language)[0].lower() not in _NOUNS_CAPITALIZED


def name_spans(line: str, pieces: Callable[[str], int]) -> list[tuple[int, int]]:
    """The (start, end) of each name of `line` (`pieces`: a word's number of source pieces)."""
    words = [_core(line, a, b) for a, b in word_spans(line)]  # (core start, core end, start, end)
    starts = [i == 0 or _SENTENCE_END.search(line[words[i - 1][0]:words[i - 1][3]]) is not None
              for i in range(len(words))]
    capital = [b > a and line[a].isupper() and any(c.islower() for c in line[a:b]) for a, b, _, _ in words]

    def unknown(i: int) -> bool:
        word = line[words[i][0]:words[i][1]]
        return pieces(word) >= 2 and pieces(word.lower()) >= pieces(word)

    # in a sentence in capitals or Title Case (nmt.decode.text.casing), capitals say nothing
    ordinary = ordinary_sentences(line)
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(words):
        if not capital[i] or not any(a <= words[i][2] < b for a, b in ordinary):
            i += 1
            continue
        j = i  # a run of capitalized words with nothing but a space between them
        while (j + 1 < len(words) and capital[j + 1] and not starts[j + 1] and words[j][1] == words[j][3]
               and words[j + 1][0] == words[j + 1][2] and line[words[j][3]:words[j + 1][2]].isspace()):
            j += 1
        first = i + 1 if starts[i] and not unknown(i) else i  # "A Boston Terrier": not "A"
        if first <= j and any(unknown(k) and not starts[k] for k in range(first, j + 1)):
            spans.append((words[first][0], words[j][1]))
        i = j + 1
    return spans


def doubtful_words(pieces: list[str], log_probs: list[float], words: int) -> set[int]:
    """The output words (counted as its alignment counts them, `words` of them) holding a token
    given less than DOUBTFUL probability, from the output's `pieces` (sentencepiece, a word
    starting at "▁") and their log-probabilities; none where the pieces' words are not the
    output's (an output written otherwise than its tokens spell)."""
    word, doubtful, least = -1, set(), math.log(DOUBTFUL)
    for piece, log_prob in zip(pieces, log_probs):
        word += piece.startswith("▁") or word < 0
        if log_prob < least:
            doubtful.add(word)
    return doubtful if word + 1 == words else set()


def with_names(source: str, spans: list[tuple[int, int]], output: str, alignment: str | None,
               doubtful: set[int], joins: tuple[int, ...] = ()) -> tuple[str, tuple[int, ...], str | None]:
    """`output` (its `joins` moved, its `alignment` linked to its new words) with each name of
    `source` at `spans` written in place of the `doubtful` output words aligned to it, where they
    are one run (or the one beside the next source word's words) without digits (a number is
    copied, not named). The name's words the output has already beside the run stay, and are not
    written twice ("Rallye Terrier" becomes "Boston Terrier"). A name the output has already, or
    without such a run, is left as the output wrote it."""
    out_spans = output_word_spans(output, joins)
    links = aligned(alignment or "", len(out_spans)) if out_spans else {}
    replaced: list[tuple[int, int, str]] = []
    for start, end in spans:
        name = source[start:end]
        if re.search(rf"(?<![^\W_]){re.escape(name)}(?![^\W_])", output):
            continue
        inside = source_word_indices(source, start, end)
        targets = sorted({t for i in inside for t in links.get(i, []) if t in doubtful})
        run = word_run(targets, set(links.get(inside[-1] + 1, []))) if targets else None
        if run is None or any(c.isdigit() for x, y in out_spans[run[0]:run[-1] + 1] for c in output[x:y]):
            continue
        words = written = name.split(" ")
        after, before = run[-1] + 1, run[0] - 1
        while len(words) > 1 and after < len(out_spans) and _bare(output, out_spans[after]) == words[-1]:
            words, after = words[:-1], after + 1
        while len(words) > 1 and before >= 0 and _bare(output, out_spans[before]) == words[0]:
            words, before = words[1:], before - 1
        a, b = run_span(output, out_spans, run)
        if a < b and not any(a < y and x < b for x, y, _ in replaced) and not any(a < j < b for j in joins):
            replaced.append((a, b, name if words == written else " ".join(words)))
    return substituted(output, joins, alignment, replaced)


def _bare(text: str, span: tuple[int, int]) -> str:
    """An output word without the punctuation around it."""
    a, b, _, _ = _core(text, *span)
    return text[a:b]


def _core(line: str, start: int, end: int) -> tuple[int, int, int, int]:
    """A word's (start, end) without the punctuation around it, then the word's own."""
    a, b = start, end
    while a < b and not line[a].isalnum():
        a += 1
    while b > a and not line[b - 1].isalnum():
        b -= 1
    return a, b, start, end
