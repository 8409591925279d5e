"""T5's relative positions (Raffel et al. 2020, section 2.1; `model.positions: relative`).

Nothing is added to the embeddings. Each self-attention score q·k gets a learned scalar per head
for the key's offset from the query, k - q, looked up by bucket: offsets below half the buckets
have one bucket each, larger ones share log-spaced buckets up to `max_distance`, beyond which all
offsets share the last. The encoder tells left from right (half the buckets each way); the
decoder, which sees only the past, spends every bucket on the left. One table per side serves all
of its layers.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


def relative_buckets(offsets: Tensor, buckets: int, max_distance: int, bidirectional: bool) -> Tensor:
    """The bucket (long) of each key-minus-query offset."""
    bucket = torch.zeros_like(offsets)
    if bidirectional:
        buckets //= 2
        bucket = bucket + (offsets > 0).long() * buckets  # keys to the right: the upper half
        distance = offsets.abs()
    else:
        distance = (-offsets).clamp(min=0)  # the future has no bucket of its own (the causal mask hides it)
    exact = buckets // 2
    # log-spaced from `exact` to max_distance over the remaining buckets (the clamp keeps log(0) out
    # of the rows `where` discards)
    scaled = torch.log(distance.clamp(min=1).float() / exact) / math.log(max_distance / exact) * (buckets - exact)
    far = (exact + scaled.long()).clamp(max=buckets - 1)
    return bucket + torch.where(distance < exact, distance, far)


class RelativePositionBias(nn.Module):
    """A side's bias table (buckets, heads); `forward` gives the (1, h, L, S) bias of queries at
    positions offset..offset+L-1 over keys at 0..S-1."""

    def __init__(self, buckets: int, heads: int, max_distance: int, bidirectional: bool):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(buckets, heads))
        self.max_distance = max_distance
        self.bidirectional = bidirectional

    def forward(self, queries: int, keys: int, offset: int = 0) -> Tensor:
        device = self.weight.device
        query = torch.arange(offset, offset + queries, device=device)[:, None]
        key = torch.arange(keys, device=device)[None, :]
        bucket = relative_buckets(key - query, self.weight.size(0), self.max_distance, self.bidirectional)
        return self.weight[bucket].permute(2, 0, 1).unsqueeze(0)  # (L, S, h) -> (1, h, L, S)
