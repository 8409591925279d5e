"""Forced decoding of text pairs: the log-probability a model gives each target piece, and then
EOS, given the source and the pieces before it, computed as the search computes them (PAD and BOS
taken out before the softmax). `nmt likelihood` writes them (nmt.jobs.likelihood); reranking reads
a reverse model's (nmt.decode.rerank). Pairs go in length-sorted token batches; scores come out in
input order, one per pair (an empty target is scored as EOS alone).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from nmt.data.batching import pack_by_tokens
from nmt.data.tokenizer import encode_within
from nmt.special_tokens import EOS


@dataclass
class PairScore:
    tokens: list[str]  # the target's pieces, then the EOS piece
    token_log_probs: list[float]  # one per token

    @property
    def log_prob(self) -> float:
        return sum(self.token_log_probs)

    @property
    def log_prob_per_token(self) -> float:
        return self.log_prob / len(self.token_log_probs)


def score_pairs(scorer, pairs: list[tuple[str, str]], max_tokens: int, precision: str = "auto",
                warn: Callable[[str], None] = lambda _: None, first_line: int = 1,
                sides: tuple[str, str] = ("source", "target")) -> list[PairScore]:
    """(source, target) text pairs -> their scores, in order. `scorer`: a loaded engine
    (nmt.decode.engines.engine.load_engine), whose score_batch does the forced decoding. `sides`:
    what warnings call each side of a pair (a reverse model's source is the user's target)."""
    if not pairs:
        return []
    limit = scorer.max_positions - 1  # room for EOS (source) and BOS (target)
    # A multilingual model's language tokens: in front of the source, and forced first in the
    # target, where the forced token is given, not scored (as a translation's score leaves it out).
    prefix, forced = scorer.controls.source, scorer.controls.target
    src_ids = encode_within(scorer.src_tokenizer, [src for src, _ in pairs], limit - len(prefix), f"{sides[0]} of ",
                            warn, first_line)
    src_ids = [[*prefix, *ids] if ids else ids for ids in src_ids]
    tgt_ids = encode_within(scorer.tgt_tokenizer, [tgt for _, tgt in pairs], limit - len(forced), f"{sides[1]} of ",
                            warn, first_line)
    sizes = np.array([max(len(s), len(t) + len(forced)) + 1 for s, t in zip(src_ids, tgt_ids)])
    log_probs: list[list[float]] = [[] for _ in pairs]
    for batch in pack_by_tokens(np.argsort(sizes, kind="stable"), sizes, max_tokens):
        rows = batch.tolist()
        targets = [[*forced, *tgt_ids[i]] for i in rows]
        for i, scores in zip(rows, scorer.score_batch([src_ids[i] for i in rows], targets, precision)):
            log_probs[i] = scores[len(forced):]
    piece, end = scorer.tgt_tokenizer.id_to_piece, scorer.tgt_tokenizer.id_to_piece(EOS)
    return [PairScore([piece(t) for t in ids] + [end], scores) for ids, scores in zip(tgt_ids, log_probs)]
