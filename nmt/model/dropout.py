"""Dropout whose CPU masks come from 16-bit random integers instead of `bernoulli_`.

On CPU, `bernoulli_` is slow: drawing int16 integers and comparing them takes about a third of
its time (bench/speed.md), and drawing them four to a 64-bit word a third of that again.
Here an element is kept when its draw is at least a threshold, so p is rounded to a multiple of
1/65536 (0.1 becomes 0.100006). The comparison writes the mask as ones and zeros in the input's
dtype, which the forward and backward multiply by: a CPU's `torch.where` on a boolean mask, or a
product with one, takes 5 to 15 times as long as a product of two tensors of one dtype (the
Multi30k recipe's update spent 5 % of its time in the two `where`s of each dropout). On other
devices, for p = 0, in eval mode and inside torch.compile, this is `F.dropout`: a compiled graph
draws its masks in its own kernels, and AOT autograd cannot rebuild the int16 view of the 64-bit
draws (it fails at run time with "setStorage: ... out of bounds").
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

_LEVELS = 1 << 16


def dropped_levels(p: float) -> int:
    """How many of the 65536 int16 values drop an element: p rounded to a multiple of 1/65536."""
    return round(p * _LEVELS)


class _MaskedScale(torch.autograd.Function):
    """x · keep · scale, keep holding ones and zeros in x's dtype: the kept elements scaled exactly
    as x * scale scales them, the others 0."""

    @staticmethod
    def forward(ctx, x: Tensor, keep: Tensor, scale: float) -> Tensor:
        ctx.save_for_backward(keep)
        ctx.scale = scale
        return (x * keep).mul_(scale)

    @staticmethod
    def backward(ctx, grad: Tensor):
        (keep,) = ctx.saved_tensors
        return (grad * keep).mul_(ctx.scale), None, None


def dropout(x: Tensor, p: float, training: bool) -> Tensor:
    if not training:  # what F.dropout returns in eval mode, without its call: a decoding step has 17
        return x
    if p == 0.0 or x.device.type != "cpu" or torch.compiler.is_compiling():
        return F.dropout(x, p, training)
    dropped = dropped_levels(p)
    if dropped >= _LEVELS:
        return x * 0.0
    keep = torch.empty(x.shape, dtype=x.dtype)  # 1 where kept: the lowest `dropped` values drop
    torch.ge(_int16_draws(x.shape), dropped - _LEVELS // 2, out=keep)
    return _MaskedScale.apply(x, keep, _LEVELS / (_LEVELS - dropped))  # 1 / (1 - p as rounded)


def _int16_draws(shape: torch.Size) -> Tensor:
    """Uniform int16 integers of `shape`, from torch's generator: full 64-bit draws, each cut into
    four, cost a third of as many int16 draws (torch's CPU generator spends one 32-bit draw on
    each element whatever its width)."""
    n = shape.numel()
    words = torch.empty((n + 3) // 4, dtype=torch.int64).random_(-(2**63), None)  # every bit random
    return words.view(torch.int16)[:n].view(shape)


class Dropout(nn.Module):
    """nn.Dropout with the faster CPU masks above."""

    def __init__(self, p: float):
        super().__init__()
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"
