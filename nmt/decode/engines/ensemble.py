"""Ensemble decoding: several models search as one.

At every step each model scores the next token from its own cached state, and the ensemble's
distribution is the mean of their probabilities (log of the mean, computed with logsumexp).
The models may differ in shape (layers, width, heads, positions) but share the vocabularies:
tokens go in and come out as ids. Greedy, beam, n-best and sampling search use an Ensemble as
they use one Transformer: it has the same encode / start_decoding / decode_step interface.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import torch
from torch import Tensor

from nmt.special_tokens import PAD
from nmt.model.transformer import DecoderState, Transformer


@dataclass
class EnsembleState:
    states: list[DecoderState]  # one per model

    def select(self, rows: Tensor, same_sentences: bool = False) -> "EnsembleState":
        return EnsembleState([s.select(rows, same_sentences) for s in self.states])


class Ensemble:
    def __init__(self, models: list[Transformer]):
        self.models = models
        # What search reads of a model's configuration: the positions every member can take.
        self.cfg = SimpleNamespace(max_positions=min(m.cfg.max_positions for m in models))
        starts = {m.start_token for m in models}
        if len(starts) > 1:
            raise ValueError("ensemble members start their decoders from different tokens (model.decoder_start)")
        self.start_token = starts.pop()

    @property
    def aligner(self) -> Transformer:
        """The model whose cross-attention gives word alignments: the first member's."""
        return self.models[0]

    def eval(self) -> "Ensemble":
        for m in self.models:
            m.eval()
        return self

    def encode(self, src: Tensor) -> tuple[list[Tensor], Tensor]:
        """src (B, S) -> each model's memory (B, S, D_m), and the padding mask (B, 1, 1, S)."""
        return [m.encode(src)[0] for m in self.models], (src != PAD)[:, None, None, :]

    def start_decoding(self, memories: list[Tensor], src_mask: Tensor, beams: int = 1,
                       vocabulary: Tensor | None = None, compiled: bool = False) -> EnsembleState:
        return EnsembleState([m.start_decoding(memory, src_mask, beams, vocabulary, compiled)
                              for m, memory in zip(self.models, memories)])

    def decode_step(self, tokens: Tensor, state: EnsembleState, forbid: Callable[[Tensor], None] | None = None) -> Tensor:
        """tokens (N,) -> log of the mean of the models' next-token probabilities (N, V); with
        `forbid` (Transformer.decode_step), those it forbids taken out of the mean and the rest
        renormalized."""
        if len(self.models) == 1:
            return self.models[0].decode_step(tokens, state.states[0], forbid)
        log_probs = [m.decode_step(tokens, s) for m, s in zip(self.models, state.states)]
        mean = torch.logsumexp(torch.stack(log_probs), dim=0) - math.log(len(log_probs))
        if forbid is None:
            return mean
        forbid(mean)
        return mean.log_softmax(dim=-1)

    def teacher_forced_log_probs(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        """(B, T, V): log of the mean of the models' next-token probabilities at every position."""
        log_probs = [m.teacher_forced_log_probs(src, tgt_in) for m in self.models]
        if len(log_probs) == 1:
            return log_probs[0]
        return torch.logsumexp(torch.stack(log_probs), dim=0) - math.log(len(log_probs))
