"""Choosing each line's output among several candidates, after the search: by minimum Bayes risk
(decode.mbr, nmt.decode.mbr) or by reranking the beam's n-best list (decode.rerank,
nmt.decode.rerank). The chosen candidate goes first, the rest follow in the order of the same
score (`Hypothesis.selection`), cut to decode.nbest.

Sampled candidates are drawn for each line on its own, from a generator seeded by decode.seed and
the line's tokens: a line gets the same candidates, and so the same output, whatever the lines
around it, in one process or several (`--nproc`), from a file or from `nmt serve`.
"""

from __future__ import annotations

import zlib

import numpy as np

from nmt.config import DecodeConfig
from nmt.decode.search import Hypothesis
from nmt.decode.text.casing import hypothesis_text


def selecting(cfg: DecodeConfig) -> bool:
    return bool(cfg.mbr.candidates or cfg.rerank.candidates)


def candidate_search(cfg: DecodeConfig) -> tuple[DecodeConfig, int]:
    """(the search that gives the candidates, copies of each source it runs on): with MBR by
    sampling, N copies sampled; with beam candidates, the beam's N best of one copy."""
    if cfg.mbr.candidates and cfg.mbr.source == "sampling":
        return cfg.model_copy(update={"sampling": True, "nbest": 1}), cfg.mbr.candidates
    wanted = cfg.mbr.candidates or cfg.rerank.candidates
    if wanted:
        return cfg.model_copy(update={"sampling": False, "nbest": wanted}), 1
    return cfg, 1


def line_seed(seed: int, source: list[int]) -> int:
    """A generator seed of decode.seed and the line's source tokens alone."""
    return (seed * 1_000_003 + zlib.crc32(np.asarray(source, dtype=np.int64).tobytes())) % (2 ** 62)


# MBR's samples where decode.epsilon is unset: Freitag et al. (2023)'s epsilon sampling, which
# gained over plain sampling at every number of samples on Multi30k (docs/quality.md).
MBR_EPSILON = 0.02


def candidates_epsilon(translator, cfg: DecodeConfig) -> float:
    """The epsilon MBR's samples are drawn with: decode.epsilon where set, else MBR_EPSILON where
    the engine has epsilon sampling (a CTranslate2 export has not: plain sampling there)."""
    if cfg.epsilon is not None:
        return cfg.epsilon
    return MBR_EPSILON if translator.capabilities.epsilon else 0.0


def sample_candidates(translator, source: list[int], prefix: list[int] | None, cfg: DecodeConfig,
                      copies: int) -> list[Hypothesis]:
    """`copies` samples for one source, drawn together in one batch."""
    line_cfg = cfg.model_copy(update={"seed": line_seed(cfg.seed, source),
                                      "epsilon": candidates_epsilon(translator, cfg)})
    prefixes = [prefix] * copies if prefix else None
    return [hyps[0] for hyps in translator.translate_batch([source] * copies, line_cfg, prefixes)]


def choose(translator, sources: list[str], results: list[list[Hypothesis]], cfg: DecodeConfig) -> None:
    """Reorder each line's candidates (in place) by MBR's expected utility or the reranked score,
    best first, cut to decode.nbest. `sources`: the lines' texts (the source of COMET and of the
    reverse model)."""
    rows = [i for i, hyps in enumerate(results) if len(hyps) > 1 or (hyps and hyps[0].tokens)]
    if not rows:
        return
    texts = [[hypothesis_text(translator.tgt_tokenizer, h) for h in results[i]] for i in rows]
    line_sources = [sources[i] for i in rows]
    data = translator.recipe.data
    languages = translator.controls.languages or (data.src_lang, data.tgt_lang)
    if cfg.mbr.candidates:
        from nmt.decode.mbr import mbr_order, utility_matrices

        orders = [mbr_order(matrix) for matrix in utility_matrices(cfg.mbr, line_sources, texts, languages[1])]
    else:
        from nmt.decode.rerank import features, rerank_order

        scored = features(cfg.rerank, languages, line_sources, texts,
                          [[h.score for h in results[i]] for i in rows], cfg.max_tokens)
        orders = [rerank_order(candidates, cfg.rerank) for candidates in scored]
    for i, order in zip(rows, orders):
        chosen = []
        for index, value in order[: cfg.nbest]:
            h = results[i][index]
            h.selection = value
            chosen.append(h)
        results[i] = chosen
