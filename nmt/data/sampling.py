"""How an epoch draws from several training corpora (data.train as a list; rule in DataConfig).

Corpus c, with n_c pairs after cleaning, gets the share p_c ∝ weight_c · n_c^(1/T) of an epoch of
N = Σ n_c pairs: round(N · p_c) of them. A corpus drawn more often than it has pairs is read whole
as many times as fit, then a random part of it; one drawn less often gives a random part. Which
pairs is a pure function of (seed, epoch), like the epoch's batches, so resuming stays exact.
With every weight 1 and T = 1 each corpus gets exactly its own size: every pair once, in the same
batches as one concatenated corpus.
"""

from __future__ import annotations

import numpy as np


def corpus_shares(sizes: list[int], weights: list[float], temperature: float) -> np.ndarray:
    """p_c ∝ weight_c · n_c^(1/T); an empty corpus gets nothing."""
    sizes_array = np.asarray(sizes, dtype=np.float64)
    raw = np.asarray(weights, dtype=np.float64) * np.where(sizes_array > 0, sizes_array, 0.0) ** (1.0 / temperature)
    return raw / raw.sum()


def epoch_counts(sizes: list[int], weights: list[float], temperature: float) -> list[int]:
    """Pairs each corpus gives to one epoch."""
    shares = corpus_shares(sizes, weights, temperature)
    return [int(round(share * sum(sizes))) for share in shares]


def epoch_selection(sizes: list[int], weights: list[float], temperature: float, seed: int,
                    epoch: int) -> np.ndarray | None:
    """Indices (into the corpora laid end to end) of the pairs of `epoch`, or None when the epoch
    is every pair once (the batching then shuffles all of them, as for one corpus)."""
    counts = epoch_counts(sizes, weights, temperature)
    if counts == list(sizes):
        return None
    rng = np.random.default_rng([seed, epoch, 1])
    starts = np.cumsum([0, *sizes[:-1]])
    parts = []
    for start, size, count in zip(starts, sizes, counts):
        if size == 0 or count == 0:
            continue
        whole, rest = divmod(count, size)
        parts += [np.arange(start, start + size)] * whole
        parts.append(start + rng.choice(size, rest, replace=False))
    return np.concatenate(parts).astype(np.int64)
