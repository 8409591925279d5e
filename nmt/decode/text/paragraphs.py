"""A line of several sentences (a paragraph pasted as one line) is translated sentence by sentence:
split by sentencex (Wikimedia's segmenter for some 300 languages; it keeps URLs, decimals and
abbreviations such as "e.g." or "Dr." whole), each sentence translated in the same length-sorted
batches as every other, and the translations joined back into the line's one output, a space
between each two. A model trained on single sentences otherwise drops part of such a line.

What a split line's output is: the n-th hypothesis joins each sentence's n-th best (its last where
it has fewer); its score and log-probability are the sentences' sums, its token scores theirs in a
row, its text (where the sentences have one: a sentence in capitals among others) theirs joined, its alignment theirs with each sentence's word indices moved past the sentences before it.
A line with constraints is translated whole (where a phrase belongs is not defined across a
split). A prefix goes on the first sentence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nmt.decode.search import Hypothesis


@dataclass
class SplitLines:
    sentences: list[str]  # every line's sentences, in order; a line kept whole is one "sentence"
    line_of: list[int]  # for each sentence, the index of its line
    cut: set[int] = field(default_factory=set)  # lines whose last sentences were left out

    def first_of_line(self, i: int) -> bool:
        return i == 0 or self.line_of[i - 1] != self.line_of[i]


def sentences_of(line: str, lang: str) -> list[str]:
    """The sentences of `line`, stripped; [line] when it holds one (or none)."""
    from sentencex import segment

    parts = [part.strip() for part in segment(lang, line)]
    parts = [part for part in parts if part]
    return parts if len(parts) > 1 else [line]


def split_lines(lines: list[str], lang: str, keep_whole: list[bool], tokens_of, max_tokens: int,
                warn, numbers: list[int]) -> SplitLines:
    """Every line's sentences. A line's sentences are bounded as a whole line is: those past
    `max_tokens` source tokens in all (`tokens_of`: a list of sentences -> their token counts)
    are left out, with a warning naming the line."""
    sentences, line_of, cut = [], [], set()
    for index, (line, whole) in enumerate(zip(lines, keep_whole)):
        parts = [line] if whole or not line.strip() else sentences_of(line, lang)
        if len(parts) > 1:
            total, kept = 0, 0
            for count in tokens_of(parts):
                if kept and total + count > max_tokens:
                    break
                total, kept = total + count, kept + 1
            if kept < len(parts):
                warn(f"line {numbers[index]}: {len(parts)} sentences; the first {kept} translated, the rest past "
                     f"{max_tokens} tokens left out (model.max_positions)")
                parts, cut = parts[:kept], cut | {index}
        sentences += parts
        line_of += [index] * len(parts)
    return SplitLines(sentences, line_of, cut)


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
        joined.append(Hypothesis(
            tokens=[t for h in chosen for t in h.tokens], score=sum(h.score for h in chosen),
            log_prob=sum(h.log_prob for h in chosen),
            token_log_probs=None if any(s is None for s in scores) else [p for s in scores for p in s],
            alignment=None if source_words is None else join_alignments([h.alignment or "" for h in chosen],
                                                                        source_words),
            text=None if None in texts else " ".join(texts)))
    return joined


def join_alignments(alignments: list[str], source_words: list[int]) -> str:
    """Consecutive sentences' Pharaoh alignments as one: each sentence's source and output word
    indices moved past those of the sentences before it (an alignment links every output word,
    so a sentence's output words are those its links name)."""
    pairs, source_at, output_at = [], 0, 0
    for alignment, words in zip(alignments, source_words):
        sentence = [tuple(int(x) for x in pair.split("-")) for pair in alignment.split()]
        pairs += [f"{s + source_at}-{t + output_at}" for s, t in sentence]
        source_at, output_at = source_at + words, output_at + max((t + 1 for _, t in sentence), default=0)
    return " ".join(pairs)
