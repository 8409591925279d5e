"""Validation: loss and perplexity on the dev set, and BLEU of greedy translations of it."""

from __future__ import annotations

import math

import numpy as np
import sacrebleu
import torch

from nmt.data.batching import collate, epoch_batches, pack_by_tokens
from nmt.data.shards import ParallelShards
from nmt.decode.search import greedy_search
from nmt.model.transformer import Transformer


@torch.no_grad()
def dev_loss(model: Transformer, data: ParallelShards, max_tokens: int, device: torch.device) -> dict:
    """Mean negative log-likelihood per target token (no label smoothing) and its perplexity."""
    total_nll, total_tokens = 0.0, 0
    for indices in epoch_batches(data, max_tokens, seed=0, epoch=0, shuffle=False):
        batch = collate(data, indices).to(device)
        total_nll += model(batch.src, batch.tgt_in, batch.out_positions, batch.out_targets, label_smoothing=0.0).item()
        total_tokens += batch.n_tgt_tokens
    nll = total_nll / max(total_tokens, 1)
    return {"nll": nll, "ppl": math.exp(min(nll, 100.0))}


def dev_bleu(model: Transformer, data: ParallelShards, references: list[str], tgt_tokenizer,
             max_tokens: int, device: torch.device, max_len_a: float, max_len_b: int) -> float:
    """Corpus BLEU (sacrebleu defaults) of greedy translations of the first len(references) sentences."""
    n = len(references)
    lengths = data.src.lengths[:n] + 1
    hypotheses: list[str] = [""] * n
    for indices in pack_by_tokens(np.argsort(lengths, kind="stable"), lengths, max_tokens):
        src = collate(data, indices).src.to(device)
        for i, hyp in zip(indices.tolist(), greedy_search(model, src, max_len_a, max_len_b)):
            hypotheses[i] = tgt_tokenizer.decode(hyp.tokens)
    return sacrebleu.corpus_bleu(hypotheses, [references]).score
