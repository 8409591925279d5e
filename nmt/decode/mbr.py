"""Minimum-Bayes-risk decoding (Freitag et al., 2022): of a line's candidates, the output is the
one with the highest expected utility, its mean utility against all the candidates taken as
pseudo-references (itself included, as in Freitag et al. and mbrs; duplicates thus count as
evidence). Utilities: chrF and chrF++ (nmt.metrics.chrf, equal to sacrebleu's), sacrebleu's sentence BLEU,
or COMET from a local model (nmt.metrics.comet; the source goes in too).

Ties go to the earlier candidate: the beam's better one, or the earlier sample.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from nmt.config import MbrConfig
from nmt.data.languages import two_letter
from nmt.metrics.bleu import make_bleu, target_tokenizer
from nmt.metrics.chrf import WORD_ORDER, chrf_matrix

# utility(source, candidates) -> matrix[i][j]: candidate i scored against candidate j as its reference
Utility = Callable[[str, list[str]], list[list[float]]]


def bleu_matrix(candidates: list[str], tokenize: str | None = None) -> list[list[float]]:
    bleu = make_bleu(tokenize, effective_order=True)
    return [[bleu.sentence_score(h, [r]).score for r in candidates] for h in candidates]


@lru_cache(maxsize=2)
def _comet_scorer(directory: str):
    from nmt.metrics.comet import CometScorer

    return CometScorer(directory, "comet")


def comet_matrices(directory: str, sources: list[str], candidate_lists: list[list[str]]) -> list[list[list[float]]]:
    """COMET of every (candidate, pseudo-reference) pair of every line, in one pass of the model."""
    triples = [(source, h, r) for source, candidates in zip(sources, candidate_lists)
               for h in candidates for r in candidates]
    if not triples:
        return [[] for _ in sources]
    scores = iter(_comet_scorer(directory).score(*map(list, zip(*triples))).segments)
    return [[[next(scores) for _ in candidates] for _ in candidates] for candidates in candidate_lists]


def expected_utilities(matrix: list[list[float]]) -> list[float]:
    """Each candidate's mean utility against all candidates (uniform weights: each is one draw)."""
    return [sum(row) / len(row) for row in matrix]


def mbr_order(matrix: list[list[float]]) -> list[tuple[int, float]]:
    """(candidate index, expected utility), best first; ties keep the candidates' order."""
    utilities = expected_utilities(matrix)
    return sorted(enumerate(utilities), key=lambda pair: (-pair[1], pair[0]))


def utility_matrices(cfg: MbrConfig, sources: list[str], candidate_lists: list[list[str]],
                     tgt_lang: str | None = None) -> list[list[list[float]]]:
    """Each line's utility matrix under cfg.utility (BLEU tokenized for `tgt_lang`:
    nmt.metrics.bleu.target_tokenizer)."""
    if cfg.utility == "comet":
        return comet_matrices(cfg.comet_model, sources, candidate_lists)
    if cfg.utility in WORD_ORDER:  # chrf, chrf++
        return [chrf_matrix(candidates, candidates, WORD_ORDER[cfg.utility]) for candidates in candidate_lists]
    tokenize = target_tokenizer(two_letter(tgt_lang) if tgt_lang else None)
    return [bleu_matrix(candidates, tokenize) for candidates in candidate_lists]
