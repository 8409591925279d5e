"""Attention masks for packed rows (nmt.data.packing): each token attends only to its own
sentence, so a packed row computes what its sentences would compute in rows of their own.

Masks are True where a query may attend a key. Padding queries (segment 0) are given keys too
(the padding of their row, or every key across to the source), so that no attention row is all
masked: an all-masked row's softmax is NaN, and a NaN at a padding position, although it never
reaches the loss, would still turn weight gradients into NaN (0 · NaN).

Two forms of the same masks: dense boolean tensors for scaled_dot_product_attention (any device,
eager or compiled), and FlexAttention block masks, whose kernel skips the blocks of a row that
no query of the block may attend. Flex runs where it pays and can train: a compiled step on CUDA
(it has no backward on a CPU, and eager it runs unfused), without attention dropout (which it
does not take).
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from nmt.data.batching import Packing


class PackedMasks(NamedTuple):
    """The masks of one packed batch: (R, 1, S, S), (R, 1, T, T) and (R, 1, T, S) dense boolean
    tensors, or FlexAttention BlockMasks of the same shapes."""

    encoder: object
    decoder: object
    cross: object


def _same_sentence(q_segments: Tensor, k_segments: Tensor) -> Tensor:  # (R, Lq), (R, Lk) -> (R, Lq, Lk)
    return q_segments[:, :, None] == k_segments[:, None, :]


def dense_masks(packing: Packing) -> PackedMasks:
    src, tgt = packing.src_segments, packing.tgt_segments
    width = tgt.size(1)
    causal = torch.ones(width, width, dtype=torch.bool, device=tgt.device).tril()
    return PackedMasks(encoder=_same_sentence(src, src)[:, None], decoder=(_same_sentence(tgt, tgt) & causal)[:, None],
                       cross=dense_cross_mask(packing))


def dense_cross_mask(packing: Packing) -> Tensor:
    """The (R, 1, T, S) encoder-decoder mask: a target's padding attends the whole source row; the
    target side's, itself among others (guided alignment's heads read it where flex runs)."""
    tgt = packing.tgt_segments
    return (_same_sentence(tgt, packing.src_segments) | (tgt == 0)[:, :, None])[:, None]


def flex_masks(packing: Packing) -> PackedMasks:
    """dense_masks as FlexAttention BlockMasks (built on the device, inside the compiled step)."""
    from torch.nn.attention.flex_attention import create_block_mask

    src, tgt = packing.src_segments, packing.tgt_segments
    rows, s, t = src.size(0), src.size(1), tgt.size(1)

    def encoder(b, h, q, k):
        return src[b, q] == src[b, k]

    def decoder(b, h, q, k):
        return (tgt[b, q] == tgt[b, k]) & (k <= q)

    def cross(b, h, q, k):
        return (tgt[b, q] == src[b, k]) | (tgt[b, q] == 0)

    device = src.device
    return PackedMasks(encoder=create_block_mask(encoder, rows, None, s, s, device=device),
                       decoder=create_block_mask(decoder, rows, None, t, t, device=device),
                       cross=create_block_mask(cross, rows, None, t, s, device=device))


def use_flex(device: torch.device, attention_dropout: float, training: bool) -> bool:
    """Whether packed attention runs FlexAttention's kernel (module doc)."""
    return (device.type == "cuda" and torch.compiler.is_compiling()
            and not (training and attention_dropout > 0))


def packed_masks(packing: Packing, flex: bool) -> PackedMasks:
    return flex_masks(packing) if flex else dense_masks(packing)


def flex_attend(q: Tensor, k: Tensor, v: Tensor, block_mask: object) -> Tensor:
    """(B, h, Lq, dh) queries over (B, h, Lk, dh) keys and values under a BlockMask."""
    from torch.nn.attention.flex_attention import flex_attention
    return flex_attention(q, k, v, block_mask=block_mask)
