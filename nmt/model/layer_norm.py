"""The layers' LayerNorm: statistics and affine in fp32, output in autocast's dtype (bf16, fp16).

CUDA autocast runs `layer_norm` in fp32 and returns fp32, so in a post-LN model every layer's
output, the residual stream, became fp32 again: each dropout, residual addition and norm on it
moved twice the bytes of bf16, its saved activations were twice the size, and every linear layer
after it cast it back to bf16 before its matmul. Here the norm returns what those matmuls take.
fairseq's fp16 training and Megatron's bf16 keep the residual stream in 16 bits the same way.

What changes in the numbers: with pre-LN, nothing (a sublayer's norm only feeds a linear layer,
which autocast rounds to bf16 anyway; the residual stream stays as the fp32 embeddings make it,
and the final norms are torch's: `Transformer`). With
post-LN, the residual stream is rounded to bf16 where each layer's norm writes it, as the next
layer's matmuls already saw it; the residual addition before it is computed in fp32
(`SublayerConnection`), so the stream is rounded once per sublayer. Without autocast (fp32
training, CPU decoding) it is nn.LayerNorm.

The embeddings' own LayerNorm (model.embedding_norm) stays a plain nn.LayerNorm: with pre-LN its
output is the residual stream, which stays fp32.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from nmt.model.precision import autocast_off


class LayerNorm(nn.LayerNorm):
    def forward(self, x: Tensor) -> Tensor:
        device = x.device.type
        if not torch.is_autocast_enabled(device):
            return super().forward(x)
        dtype = torch.get_autocast_dtype(device)
        # The same arithmetic on every device (CPU autocast would keep a bf16 input in bf16, CUDA's
        # casts it to fp32); weights fp32 as they are, or from FSDP's bf16 copies.
        weight = None if self.weight is None else self.weight.float()
        bias = None if self.bias is None else self.bias.float()
        with autocast_off(device):
            return F.layer_norm(x.float(), self.normalized_shape, weight, bias, self.eps).to(dtype)


class RMSNorm(nn.Module):
    """x / sqrt(mean(x²) + eps) · weight (Zhang and Sennrich 2019; T5's norm, model.norm_type: rms):
    no mean subtracted, no bias. Computed in fp32, output in autocast's dtype (or the input's),
    as LayerNorm above; `keep_fp32`: fp32 output under autocast too (a pre-LN stack's final norm)."""

    def __init__(self, d_model: int, eps: float = 1e-6, keep_fp32: bool = False):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.eps = eps
        self.keep_fp32 = keep_fp32

    def forward(self, x: Tensor) -> Tensor:
        device = x.device.type
        dtype = x.dtype
        if torch.is_autocast_enabled(device):
            dtype = torch.float32 if self.keep_fp32 else torch.get_autocast_dtype(device)
        with autocast_off(device):
            x = x.float()
            return (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight.float()).to(dtype)


def make_norm(norm_type: str, d_model: int, final: bool = False) -> nn.Module:
    """A layer's norm for model.norm_type; `final`: a pre-LN stack's last norm, kept in fp32 (see
    Transformer)."""
    if norm_type == "rms":
        return RMSNorm(d_model, keep_fp32=final)
    return nn.LayerNorm(d_model) if final else LayerNorm(d_model)
