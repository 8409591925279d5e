"""Key padding as FlashAttention's variable-length segments (train.attention: varlen), so that the
encoder's self-attention and the encoder-decoder attention of a padded batch run FlashAttention,
which takes no mask, instead of the memory-efficient kernel with one.

A padded batch's queries (B, L) and keys (B, S), flattened to B·L and B·S rows, are cut into 2B
segments with no copy: segment 2i holds sentence i's L queries and its s_i real keys, segment
2i+1 no query and its S - s_i padding keys. Each query attends only within its own segment, so a
real key is seen by its sentence's queries alone and a padding key by none: what the boolean
key-padding mask computes, padding queries included (their rows attend their sentence's real keys,
as under the mask). A segment without queries is a case FlashAttention's kernels handle: the
forward skips it, and the backward writes zero gradients for its keys (tests/train/test_cuda.py
checks both against the masked attention). `torch.nn.attention.varlen.varlen_attn` (torch 2.10
and later) runs FlashAttention on CUDA in bf16 or fp16, without dropout; elsewhere
`reference_attention` computes the same segments through a dense mask: the logic of the CUDA
path, tested on a CPU.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor


class KeySegments(NamedTuple):
    """Queries and keys of a padded batch as variable-length segments: cumulative row offsets
    (2B + 1,) int32 over the flattened queries and keys, and the longest segment of each."""

    cu_queries: Tensor
    cu_keys: Tensor
    max_queries: int
    max_keys: int


def key_padding_segments(key_mask: Tensor, queries: int) -> KeySegments:
    """Segments for `queries` queries per sentence over the keys where `key_mask` (B, 1, 1, S) or
    (B, S) is True; each row's True entries must come first (right padding)."""
    keys = key_mask.size(-1)
    real = key_mask.reshape(-1, keys).sum(-1, dtype=torch.int32)  # (B,) real keys per sentence
    query_lengths = torch.stack([torch.full_like(real, queries), torch.zeros_like(real)], dim=1).flatten()
    key_lengths = torch.stack([real, keys - real], dim=1).flatten()
    return KeySegments(cu_queries=F.pad(query_lengths.cumsum(0, dtype=torch.int32), (1, 0)),
                       cu_keys=F.pad(key_lengths.cumsum(0, dtype=torch.int32), (1, 0)),
                       max_queries=queries, max_keys=keys)


def varlen_attention(q: Tensor, k: Tensor, v: Tensor, segments: KeySegments) -> Tensor:
    """q (B, h, L, dh), k and v (B, h, S, dh) as `_split_heads` makes them -> (B, L, h·dh), the heads
    merged. (B, L, h, dh) is the projections' own layout, so flattening it copies nothing."""
    b, heads, length, dh = q.shape
    rows = (t.transpose(1, 2).reshape(-1, heads, dh) for t in (q, k, v))  # (B·L, h, dh), (B·S, h, dh)
    attend = _flash_varlen if q.is_cuda else reference_attention
    return attend(*rows, segments).reshape(b, length, heads * dh)


def flash_varlen_available() -> bool:
    """Whether this torch has `varlen_attn` (torch 2.10 and later)."""
    try:
        from torch.nn.attention.varlen import varlen_attn  # noqa: F401
    except ImportError:
        return False
    return True


def _flash_varlen(q: Tensor, k: Tensor, v: Tensor, segments: KeySegments) -> Tensor:
    from torch.nn.attention.varlen import varlen_attn

    return varlen_attn(q, k, v, segments.cu_queries, segments.cu_keys, segments.max_queries, segments.max_keys)


def reference_attention(q: Tensor, k: Tensor, v: Tensor, segments: KeySegments) -> Tensor:
    """What varlen_attn computes, through a dense (B·L, B·S) mask of same-segment pairs: q (Tq, h, dh),
    k and v (Tk, h, dh) -> (Tq, h, dh). Memory grows with the square of the batch: for CPUs and tests."""
    def segment_of(cu: Tensor, rows: int) -> Tensor:  # each row's segment: how many offsets are <= it
        return torch.searchsorted(cu[1:], torch.arange(rows, device=cu.device, dtype=cu.dtype),
                                  right=True)

    same = segment_of(segments.cu_queries, q.size(0))[:, None] == segment_of(segments.cu_keys, k.size(0))[None, :]
    out = F.scaled_dot_product_attention(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), attn_mask=same)
    return out.transpose(0, 1)
