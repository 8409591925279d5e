"""A line of several sentences (a paragraph pasted as one line) is translated sentence by sentence:
split by sentencex (Wikimedia's segmenter for some 300 languages; it keeps URLs, decimals and
abbreviations such as "e.g." or "Dr." whole) and after Khmer's full stops (which it does not
know), each sentence translated in the same length-sorted
batches as every other, and the translations joined back into the line's one output, a space
between each two. A model trained on single sentences otherwise drops part of such a line.

What a split line's output is: the n-th hypothesis joins each sentence's n-th best (its last where
it has fewer); its score and log-probability are the sentences' sums, its token scores theirs in a
row, its text theirs joined by a space, or by nothing after Chinese or Japanese (scripts written
without spaces: `join_texts`; where, is `Hypothesis.joins`), its alignment theirs with each
sentence's word indices moved past the sentences before it (a part cut inside a word starting on
that word).
A line with constraints is translated whole (where a phrase belongs is not defined across a
split). A prefix goes on the first sentence. A sentence longer than the model's positions is
translated in parts cut between words (in text without spaces, between characters), at the end of
a clause where one lies near the limit;
every sentence of a line is translated, however long the line (`nmt serve` bounds a line's
characters: --max-chars).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from nmt.data.languages import two_letter
from nmt.decode.search import Hypothesis
from nmt.data.words import is_word_by_itself, word_spans


@dataclass
class SplitLines:
    sentences: list[str]  # every line's sentences (or parts of one), in order; a line kept whole is one
    line_of: list[int]  # for each sentence, the index of its line
    inside_word: list[bool]  # for each, whether it goes on with the last word of the one before (text without spaces)
    # for each, whether it begins a sentence, and whether it ends one (a part cut from a longer sentence may not)
    begins: list[bool] = field(default_factory=list)
    ends: list[bool] = field(default_factory=list)

    def first_of_line(self, i: int) -> bool:
        return i == 0 or self.line_of[i - 1] != self.line_of[i]


def sentences_of(line: str, lang: str) -> list[str]:
    """The sentences of `line`, stripped; [line] when it holds one (or none). `lang` in any of its
    codes (de, deu, deu_Latn): sentencex knows a language's abbreviations by its two-letter code."""
    from sentencex import segment

    parts = [piece.strip() for part in segment(two_letter(lang) or lang, line) for piece in _AFTER_KHMER_END.split(part)]
    parts = [part for part in parts if part]
    return parts if len(parts) > 1 else [line]


# Khmer's full stop (KHAN, ។) and end of a section (BARIYOOSAN, ៕), which sentencex does not know:
# a sentence ends after one where a space, a Khmer letter or an opening quote or bracket follows
# (not a closing one).
_AFTER_KHMER_END = re.compile("(?<=[\u17d4\u17d5])(?:\\s+|(?=[\u1780-\u17b3«“‘(\\[]))")


# A part of an over-long sentence preferably ends after one of these: the end of a clause.
_CLAUSE_ENDS = tuple(",;:)]}»”")


def parts_within(sentence: str, word_tokens: list[int], max_tokens: int) -> list[str]:
    """`sentence` in consecutive parts of at most `max_tokens` tokens, cut between words
    (`word_tokens`: each whitespace-separated word's tokens, which sentencepiece never joins across
    a space): each part as long as fits, ending at its last clause end (a comma, a semicolon, ...)
    where that keeps at least half its words. A single word longer than `max_tokens` is a part alone
    (which `pieces_of_word` cuts)."""
    words = sentence.split()
    parts, start = [], 0
    while start < len(words):
        end, total = start + 1, word_tokens[start]
        while end < len(words) and total + word_tokens[end] <= max_tokens:
            total, end = total + word_tokens[end], end + 1
        if end < len(words):
            clause = next((i + 1 for i in range(end - 1, start + (end - start + 1) // 2 - 2, -1)
                           if words[i].endswith(_CLAUSE_ENDS)), None)
            end = clause or end
        parts.append(" ".join(words[start:end]))
        start = end
    return parts


# Text without spaces (Chinese, Japanese, Thai, Lao) too long for the model is preferably cut after one of these.
_CLAUSE_MARKS = frozenset("，、；：。！？,;:)]}）」』】》")
_LONGEST_PIECE = 16  # characters: sentencepiece's max_piece_length (a longer one only makes pieces shorter)


def pieces_of_word(word: str, tokens_of, max_tokens: int, starts: set[int] | None = None) -> list[str]:
    """A word longer than `max_tokens` tokens (text without spaces) in consecutive pieces of at
    most `max_tokens` tokens (`tokens_of`: a list of texts -> their token counts): each as long as
    fits, ending after its last clause mark (，、；...) where that keeps at least half its characters,
    else at the end of its last word (nmt.data.words: a Chinese or Japanese character, a
    Thai or Lao word) where that does. `starts`: the word's `word_starts`, where the caller has them."""
    starts = word_starts(word) if starts is None else starts
    pieces, start = [], 0
    while start < len(word):
        end = min(len(word), start + max_tokens * _LONGEST_PIECE)  # no piece that fits is longer
        if tokens_of([word[start:end]])[0] > max_tokens:
            fits, too_long = start + 1, end  # the longest piece that fits: by bisection
            while too_long - fits > 1:
                middle = (fits + too_long) // 2
                fits, too_long = (middle, too_long) if tokens_of([word[start:middle]])[0] <= max_tokens else (fits, middle)
            while fits > start + 1 and unicodedata.category(word[fits]).startswith("M"):
                fits -= 1  # not between a letter and its combining marks (Thai vowels, accents)
            half = start + (fits - start + 1) // 2
            end = next((i + 1 for i in range(fits - 1, half - 2, -1) if word[i] in _CLAUSE_MARKS), None) or \
                next((i for i in range(fits, half - 1, -1) if i in starts), fits)
        pieces.append(word[start:end])
        start = end
    return pieces


def word_starts(text: str) -> set[int]:
    """Where in `text` a word starts (nmt.data.words)."""
    return {start for start, _ in word_spans(text)}


def _sentence_parts(sentence: str, tokens_of, max_tokens: int) -> tuple[list[str], list[bool]]:
    """An over-long sentence's parts (`parts_within`, a word too long for the model cut by
    `pieces_of_word`), and for each whether it goes on with the word of the part before (not
    where the cut falls where a word starts: beside a Chinese or Japanese character, between
    Thai, Lao, Khmer or Burmese words)."""
    parts, inside = [], []
    for part in parts_within(sentence, tokens_of(sentence.split()), max_tokens):
        if " " in part:  # whole words
            parts.append(part)
            inside.append(False)
            continue
        starts, at = word_starts(part), 0  # segmented once (Thai, Lao: by their dictionary segmenters)
        pieces = pieces_of_word(part, tokens_of, max_tokens, starts)
        parts += pieces
        for piece in pieces:
            inside.append(at > 0 and at not in starts)
            at += len(piece)
    return parts, inside


def split_lines(lines: list[str], lang: str, keep_whole: list[bool], tokens_of, max_tokens: int,
                warn, numbers: list[int]) -> SplitLines:
    """Every line's sentences, each within `max_tokens` source tokens (`tokens_of`: a list of texts
    -> their token counts): a longer sentence is translated in parts (`parts_within`; text without
    spaces, `pieces_of_word`), with a warning naming the line, so that every sentence of a line is
    translated however long it is. A line `keep_whole` is one sentence (cut where it is encoded,
    if it is too long)."""
    split = SplitLines([], [], [])
    for index, (line, whole) in enumerate(zip(lines, keep_whole)):
        parts, inside, begins, ends = [line], [False], [True], [True]
        if not whole and line.strip():
            found, parts, inside, begins, ends = sentences_of(line, lang), [], [], [], []
            for sentence, count in zip(found, tokens_of(found)):
                if count <= max_tokens:
                    parts.append(sentence)
                    inside.append(False)
                    begins.append(True)
                    ends.append(True)
                    continue
                pieces, within = _sentence_parts(sentence, tokens_of, max_tokens)
                cut = "between words" + (" and inside text without spaces" if any(within) else "")
                warn(f"line {numbers[index]}: a sentence of {count} tokens, more than the model's {max_tokens} "
                     f"(model.max_positions): translated in {len(pieces)} parts, cut {cut}")
                parts += pieces
                inside += within
                begins += [True] + [False] * (len(pieces) - 1)
                ends += [False] * (len(pieces) - 1) + [True]
        split.sentences += parts
        split.line_of += [index] * len(parts)
        split.inside_word += inside
        split.begins += begins
        split.ends += ends
    return split


def join_hypotheses(per_sentence: list[list[Hypothesis]], source_words: list[int] | None = None) -> list[Hypothesis]:
    """One line's n-best from its sentences' n-bests (see the module's docstring);
    `source_words`: each sentence's number of words, where the hypotheses have alignments."""
    if len(per_sentence) == 1:
        return per_sentence[0]
    joined = []
    for n in range(max(len(hyps) for hyps in per_sentence)):
        chosen = [hyps[min(n, len(hyps) - 1)] for hyps in per_sentence]
        scores = [h.token_log_probs for h in chosen]
        texts = [h.text for h in chosen]
        text, joins = join_texts(texts) if None not in texts else (None, ())
        joined.append(Hypothesis(
            tokens=[t for h in chosen for t in h.tokens], score=sum(h.score for h in chosen),
            log_prob=sum(h.log_prob for h in chosen),
            token_log_probs=None if any(s is None for s in scores) else [p for s in scores for p in s],
            alignment=None if source_words is None else join_alignments([h.alignment or "" for h in chosen],
                                                                        source_words),
            text=text, joins=joins))
    return joined


def _without_spaces(char: str) -> bool:
    """A character of Chinese or Japanese writing (a word by itself, nmt.data.words), the
    ideographic space or a full-width form, where one sentence follows another without a space."""
    return is_word_by_itself(char) or char == "\u3000" or "\uff00" <= char <= "\uffef"


def join_texts(texts: list[str]) -> tuple[str, tuple[int, ...]]:
    """Consecutive sentences' output texts as one line, joined by a space, or by nothing after a
    sentence ending in Chinese or Japanese (in its last character, or in its last letter where the
    next sentence starts in one of theirs: "すごい!" + "次は"); and where the sentences joined by
    nothing meet (offsets in the line). Empty texts are left out."""
    line, joins = "", []
    for text in texts:
        if line and text:
            letter = next((c for c in reversed(line) if not unicodedata.category(c).startswith(("P", "Z"))), " ")
            if _without_spaces(line[-1]) or (_without_spaces(text[0]) and _without_spaces(letter)):
                joins.append(len(line))
            else:
                line += " "
        line += text
    return line, tuple(joins)


def join_alignments(alignments: list[str], source_words: list[int]) -> str:
    """Consecutive sentences' Pharaoh alignments as one: each sentence's source and output word
    indices moved past those of the sentences before it (an alignment links every output word,
    so a sentence's output words are those its links name; a sentence joined to the one before
    without a space still starts a word, as its first piece does)."""
    pairs, source_at, output_at = [], 0, 0
    for alignment, words in zip(alignments, source_words):
        sentence = [tuple(int(x) for x in pair.split("-")) for pair in alignment.split()]
        pairs += [f"{s + source_at}-{t + output_at}" for s, t in sentence]
        source_at, output_at = source_at + words, output_at + max((t + 1 for _, t in sentence), default=0)
    return " ".join(pairs)
