"""Sentence-level chrF (Popović, 2015) between many pairs at once, equal to sacrebleu's
`sentence_chrf` with its defaults (character 6-grams, beta 2, whitespace ignored), and with
`word_order` 2 to its chrF++ (Popović, 2017: word unigrams and bigrams too, split from
punctuation as sacrebleu splits them): each sentence's n-grams are counted once, not once per
pair, and a set compared with itself finds each pair's matches once, which is what makes
minimum-Bayes-risk decoding's N x N comparisons affordable."""

from __future__ import annotations

from collections import Counter

ORDER, BETA = 6, 2.0
WORD_ORDER = {"chrf": 0, "chrf++": 2}  # each name's word n-gram order (sacrebleu's word_order)


def char_ngrams(sentence: str, order: int = ORDER) -> list[Counter]:
    """Counts of the sentence's character n-grams, n = 1..order, whitespace removed."""
    text = "".join(sentence.split())
    return [Counter(text[i:i + n] for i in range(len(text) - n + 1)) for n in range(1, order + 1)]


PUNCTUATION = frozenset('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')


def words(sentence: str) -> list[str]:
    """The sentence's words for chrF++: split at spaces, one punctuation mark at a word's end (else
    at its start) split off, as sacrebleu does (so "(hi)" gives "(hi" and ")")."""
    out = []
    for word in sentence.split():
        if len(word) > 1 and word[-1] in PUNCTUATION:
            out += [word[:-1], word[-1]]
        elif len(word) > 1 and word[0] in PUNCTUATION:
            out += [word[0], word[1:]]
        else:
            out.append(word)
    return out


def ngrams(sentence: str, word_order: int = 0) -> list[Counter]:
    """Counts of the character n-grams (chrF's orders), then of the word n-grams, n = 1..word_order."""
    tokens = words(sentence) if word_order else []
    return char_ngrams(sentence) + [Counter(" ".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1))
                                    for n in range(1, word_order + 1)]


def _matches(a: list[Counter], b: list[Counter]) -> list[int]:
    """Per order, the n-grams the two sides share (clipped counts): the same both ways round."""
    out = []
    for x, y in zip(a, b):
        small, large = (x, y) if len(x) <= len(y) else (y, x)
        out.append(sum(min(count, large[gram]) for gram, count in small.items() if gram in large))
    return out


def _f_score(matches: list[int], hyp_totals: list[int], ref_totals: list[int]) -> float:
    """chrF in [0, 100], averaged over the orders both sides have n-grams of, as sacrebleu does."""
    precision = recall = 0.0
    orders = 0
    for m, n_hyp, n_ref in zip(matches, hyp_totals, ref_totals):
        if n_hyp > 0 and n_ref > 0:
            precision += m / n_hyp
            recall += m / n_ref
            orders += 1
    if orders == 0:
        return 0.0
    precision, recall = precision / orders, recall / orders
    if precision + recall == 0:
        return 0.0
    factor = BETA ** 2
    return 100 * (1 + factor) * precision * recall / (factor * precision + recall)


def chrf_matrix(hypotheses: list[str], references: list[str], word_order: int = 0) -> list[list[float]]:
    """chrF of each hypothesis (rows) against each reference (columns); chrF++ with `word_order` 2."""
    same = hypotheses is references
    hyp_counts = [ngrams(h, word_order) for h in hypotheses]
    ref_counts = hyp_counts if same else [ngrams(r, word_order) for r in references]
    hyp_totals = [[c.total() for c in counts] for counts in hyp_counts]
    ref_totals = hyp_totals if same else [[c.total() for c in counts] for counts in ref_counts]
    scores = [[0.0] * len(ref_counts) for _ in hyp_counts]
    for i, h in enumerate(hyp_counts):
        for j in range(i if same else 0, len(ref_counts)):
            matches = _matches(h, ref_counts[j])
            scores[i][j] = _f_score(matches, hyp_totals[i], ref_totals[j])
            if same and j != i:
                scores[j][i] = _f_score(matches, hyp_totals[j], ref_totals[i])
    return scores
