"""The best extensions of each sentence's beams, found without ranking every one of them.

A beam search step ranks, per sentence, K beams × V tokens of `beam score + log-probability`
and keeps the best n (2K). torch's CPU top-k copies and partially sorts each row, which for
K·V = 32,000 candidates costs more than the softmax before it. The best n of a sentence are
among the best n of each of its beams (a beam's score is the same for all its tokens), and a
beam's best n lie in the n chunks of C columns with the highest maxima (any other chunk's
maximum is beaten by n distinct values). So: one pass of chunk maxima, a small top-k over the
chunks, and the final top-k over K·n·C gathered candidates instead of K·V. The values found are
exactly those of the full ranking; only the order among equal values may differ.

On a GPU the single top-k kernel is cheaper than the several launches this takes: there, and
where the columns are too few for chunks to save anything, every candidate is ranked.
"""

from __future__ import annotations

import torch
from torch import Tensor

CHUNK = 64  # columns per chunk: the gathered candidates are K·n·CHUNK per sentence


def top_candidates(scores: Tensor, log_probs: Tensor, n: int, chunk: int = CHUNK) -> tuple[Tensor, Tensor, Tensor]:
    """scores (B, K), log_probs (B, K, V) -> the n best of scores[b, k] + log_probs[b, k, v] per
    sentence b: their values (B, n), best first, their beams k (B, n) and columns v (B, n)."""
    sentences, beams, vocab = log_probs.shape
    if log_probs.device.type != "cpu" or vocab < 2 * n * chunk:
        flat = (scores.unsqueeze(2) + log_probs).view(sentences, beams * vocab)
        values, index = flat.topk(n, dim=1)
        return values, index // vocab, index % vocab
    rows = log_probs.reshape(sentences * beams, vocab)
    whole, tail = divmod(vocab, chunk)
    maxima = rows[:, : whole * chunk].view(-1, whole, chunk).amax(dim=2)  # (B·K, chunks)
    if tail:  # the last, shorter chunk
        maxima = torch.cat([maxima, rows[:, whole * chunk:].amax(dim=1, keepdim=True)], dim=1)
    best_chunks = maxima.topk(n, dim=1).indices  # (B·K, n)
    columns = (best_chunks.unsqueeze(2) * chunk + torch.arange(chunk, device=rows.device)).view(-1, n * chunk)
    values = rows.gather(1, columns.clamp_max(vocab - 1) if tail else columns)
    if tail:  # the shorter last chunk's columns past the end
        values.masked_fill_(columns >= vocab, float("-inf"))
    gathered = (values.view(sentences, beams, n * chunk) + scores.unsqueeze(2)).view(sentences, -1)
    top, index = gathered.topk(n, dim=1)  # (B, n) over K·n·chunk
    return top, index // (n * chunk), columns.view(sentences, -1).gather(1, index)
