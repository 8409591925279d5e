"""Attention with its scores materialised: softmax(q kᵀ / √dh, masked) v as two batched matmuls and a
softmax (train.attention: matmul), in place of `F.scaled_dot_product_attention`'s fused kernels.

The fused kernels (FlashAttention, the memory-efficient one) work in tiles of 64 to 128 queries
by 64 to 128 keys. Translation batches hold many short sentences (about 30 tokens in news text),
so most of each tile is padding of the tile itself: on an H200 the base model's attention took 20 %
of an update's kernel time for about 1 % of its FLOPs (bench/gpu_day/README.md, fifth run). The
scores of such batches are small, (B, h, L, S) with L and S near 30, and the matmuls that make
them waste nothing on tiles; compiled, inductor fuses the mask, the softmax and the dropout into
one kernel each way. Which is faster depends on the lengths and the device:
`bench/gpu_day/attention_probe.py` times both.

The arithmetic is the same as the fused kernels' within rounding. The scores come out of their
matmul in the inputs' dtype (bf16 under autocast), rounded where the fused kernels keep them in
fp32, as fairseq's fp16 attention rounds them; the softmax runs in fp32 and its weights are
rounded to the inputs' dtype before they multiply the values, as in the fused kernels. In bf16 the
gradients' error against fp32 is 1.3-1.9 times the fused kernels' on a tiny model
(tests/model/test_matmul_attention.py); experiments/precision/ trains Multi30k both ways.
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F
from torch import Tensor

from nmt.model.dropout import dropout as nmt_dropout
from nmt.model.precision import autocast_off

# torch's CPU softmax over fewer columns than a vector register holds (16 floats) takes 4-10 times
# as long as over 16: measured on 2 threads, the scores of 136 sentences of 15 tokens by 4 heads
# took 1.6 ms forward and backward, 0.3 ms padded to 16 columns of which the last are -inf.
CPU_SOFTMAX_MIN_COLUMNS = 16


def matmul_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, causal: bool,
                     dropout: float) -> Tensor:
    """q (B, h, L, dh), k and v (B, h, S, dh); mask broadcastable to (B, h, L, S), True where a
    query may attend a key, or a float bias added to the scores (relative positions, -inf where
    hidden); `causal`: query i attends keys up to i. Every query must keep at least one key (an
    all-masked row is NaN, as in the fused kernels)."""
    scores = torch.matmul(q * q.size(-1) ** -0.5, k.transpose(-2, -1))
    if causal:
        length, keys = scores.shape[-2:]
        scores = scores.masked_fill(torch.ones(length, keys, dtype=torch.bool, device=q.device).triu(1),
                                    float("-inf"))
    if mask is not None and mask.dtype == torch.bool:
        scores = scores.masked_fill(~mask, float("-inf"))
    elif mask is not None:
        scores = scores + mask
    weights = softmax_over_keys(scores, torch.promote_types(scores.dtype, torch.float32)).to(q.dtype)
    return torch.matmul(nmt_dropout(weights, dropout, training=True), v)  # (the CPU's faster masks)


# A decoding step's self-attention on a CPU in fp32: one query per row over the row's past keys,
# for hundreds of rows (a batch's beams). scaled_dot_product_attention's CPU kernel works in tiles
# of queries; with one query, two batched matmuls and a softmax took 0.4-0.8 of its time from 8
# keys on (400-1,000 rows of 4-16 heads, 2 threads), and 1.0-1.3 of it at 32 rows; below 8 keys the
# softmax over so few columns is the slower part (CPU_SOFTMAX_MIN_COLUMNS). In bf16 the matmul's
# scores would be rounded where the fused kernel keeps fp32: bf16 keeps the kernel. A compiled step
# (decode.compile, nmt.model.compiled_decoding) takes the matmuls at any length in fp32: inductor
# fuses the scaling and the softmax: 400 lines took 0.86-0.89 of the eager search's time this way,
# 0.90-0.91 with the fused kernel.
STEP_MATMUL_MIN_KEYS = 8


def step_by_matmul(q: Tensor, keys: int) -> bool:
    """Whether a decoding step's attention of fp32 queries `q` over `keys` keys takes step_attention.
    (Compiled, `keys` is a symbol: not compared, or the graph would hold for one side of the bound.)"""
    if q.dtype != torch.float32:
        return False
    if torch.compiler.is_compiling():
        return True
    return q.device.type == "cpu" and keys >= STEP_MATMUL_MIN_KEYS


def autocast_on_cpu(t: Tensor) -> bool:
    """Whether `t` is on a CPU under autocast (decode.precision bf16 there)."""
    return t.device.type == "cpu" and torch.is_autocast_enabled("cpu")


def attention_in_fp32(q: Tensor) -> contextlib.AbstractContextManager:
    """A decoding step's attention with queries `q`: on a CPU under autocast, a block without it,
    in which the step's attention runs in fp32 (its keys and values cached in fp32) while its
    linear layers stay in bf16; elsewhere nothing. One query over a short past is faster as two fp32
    matmuls (step_attention) than through the bf16 fused kernel, which takes tiles of queries:
    in bf16 decoding of 300 lines by a 256-wide model, that kernel took 19 % of the time, against
    8 % for fp32 decoding's matmuls, softmax and the encoder's fused kernel together. fp32 keeps
    the scores unrounded, as the fused kernels do."""
    return autocast_off("cpu") if autocast_on_cpu(q) else contextlib.nullcontext()


def step_attention(q: Tensor, k: Tensor, v: Tensor, bias: Tensor | None) -> Tensor:
    """softmax(q kᵀ / √dh + bias) v for q (N, h, 1, dh), k and v (N, h, t, dh); bias broadcastable
    to (N, h, 1, t) (relative positions) or None. No mask: a step attends its whole past."""
    scores = torch.matmul(q, k.transpose(-1, -2)).mul_(q.size(-1) ** -0.5)
    if bias is not None:
        scores.add_(bias)
    return torch.matmul(scores.softmax(dim=-1), v)


def softmax_over_keys(scores: Tensor, dtype: torch.dtype) -> Tensor:
    """softmax(scores, dim=-1) computed in `dtype`. On a CPU, rows of fewer than
    CPU_SOFTMAX_MIN_COLUMNS keys are padded with -inf to that width first, and the padding sliced
    off after: exp(-inf) adds nothing to a row's sum. Not inside torch.compile (its kernels are its
    own, and the width would be a guard: a graph for each side of it) nor a trace (which would fix
    the padding's width for every length)."""
    keys = scores.size(-1)
    # The width compared last: compiled, it is a symbol, and comparing it would install the guard.
    if (scores.device.type == "cpu" and not torch.compiler.is_compiling() and not torch.jit.is_tracing()
            and keys < CPU_SOFTMAX_MIN_COLUMNS):
        padded = F.pad(scores, (0, CPU_SOFTMAX_MIN_COLUMNS - keys), value=float("-inf"))
        return torch.softmax(padded, dim=-1, dtype=dtype)[..., :keys]
    return torch.softmax(scores, dim=-1, dtype=dtype)
