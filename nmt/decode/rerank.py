"""Reranking a line's n-best list: each candidate's score is

    search score + reverse_weight · reverse + qe_weight · qe

where the search score is the beam's (log-probability over the length penalty), `reverse` a
reverse model's log-probability of the source given the candidate, per source token (EOS
counted), the "noisy channel" direction of Yee et al. (2019), and `qe` CometKiwi's score of the
candidate (quality estimation, no reference). With both weights 0 the beam's order stands.
`nmt rerank-tune` (nmt.jobs.rerank_tuning) chooses the weights on a dev set.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from nmt.config import RerankConfig
from nmt.errors import NmtError

FEATURES = ("search", "reverse", "qe")


@dataclass
class Candidate:
    text: str
    search: float
    reverse: float | None = None
    qe: float | None = None

    def total(self, cfg: RerankConfig) -> float:
        return (self.search + cfg.reverse_weight * (self.reverse or 0.0) + cfg.qe_weight * (self.qe or 0.0))


@lru_cache(maxsize=2)
def reverse_engine(path: str, src_lang: str, tgt_lang: str):
    """The reverse model, loaded once per process, translating from the forward model's target
    language (`src_lang` here) into its source language; an error where it cannot."""
    from nmt.decode.engines.engine import load_engine

    if not Path(path).exists():
        raise NmtError(f"rerank.reverse_model {path}: not found")
    engine = load_engine([Path(path)])
    data = engine.recipe.data
    if data.language_token == "none" and (data.src_lang, data.tgt_lang) != (src_lang, tgt_lang):
        raise NmtError(f"rerank.reverse_model {path}: translates {data.src_lang}→{data.tgt_lang}, but reranking "
                       f"needs {src_lang}→{tgt_lang} (the reverse of the model translating)")
    if data.language_token != "none":
        from nmt.decode.engines.engine import choose_direction

        choose_direction(engine, src_lang, tgt_lang)  # an error where it has no such direction
    return engine


@lru_cache(maxsize=2)
def _qe_scorer(directory: str):
    from nmt.metrics.comet import CometScorer

    return CometScorer(directory, "cometkiwi")


def reverse_scores(engine, sources: list[str], candidate_lists: list[list[str]], max_tokens: int = 4096
                   ) -> list[list[float]]:
    """log P(source | candidate) per source token, under the reverse model `engine`."""
    from nmt.decode.forced import score_pairs

    pairs = [(candidate, source) for source, candidates in zip(sources, candidate_lists) for candidate in candidates]
    scores = iter(score_pairs(engine, pairs, max_tokens))
    return [[next(scores).log_prob_per_token for _ in candidates] for candidates in candidate_lists]


def qe_scores(directory: str, sources: list[str], candidate_lists: list[list[str]]) -> list[list[float]]:
    flat = [(source, c) for source, candidates in zip(sources, candidate_lists) for c in candidates]
    if not flat:
        return [[] for _ in sources]
    scores = iter(_qe_scorer(directory).score([s for s, _ in flat], [c for _, c in flat]).segments)
    return [[next(scores) for _ in candidates] for candidates in candidate_lists]


def features(cfg: RerankConfig, languages: tuple[str, str], sources: list[str], candidate_lists: list[list[str]],
             search_scores: list[list[float]], max_tokens: int = 4096) -> list[list[Candidate]]:
    """Each line's candidates with the scores the configured models give (`languages`: the forward
    direction, source and target)."""
    out = [[Candidate(text, score) for text, score in zip(candidates, scores)]
           for candidates, scores in zip(candidate_lists, search_scores)]
    if cfg.reverse_model:
        engine = reverse_engine(cfg.reverse_model, languages[1], languages[0])
        for line, scores in zip(out, reverse_scores(engine, sources, candidate_lists, max_tokens)):
            for candidate, score in zip(line, scores):
                candidate.reverse = score
    if cfg.qe_model:
        for line, scores in zip(out, qe_scores(cfg.qe_model, sources, candidate_lists)):
            for candidate, score in zip(line, scores):
                candidate.qe = score
    return out


def rerank_order(candidates: list[Candidate], cfg: RerankConfig) -> list[tuple[int, float]]:
    """(candidate index, combined score), best first; ties keep the beam's order."""
    return sorted(((i, c.total(cfg)) for i, c in enumerate(candidates)), key=lambda pair: (-pair[1], pair[0]))
