"""LoRA (Hu et al., 2021): a linear layer's frozen weight W plus a trained low-rank update,
y = x Wᵀ + b + (alpha / r) · x Aᵀ Bᵀ, A (r × in) and B (out × r), B starting at zero so that the
adapted model starts as the base model. Applied to the attention projections by default
(train.lora_targets). A checkpoint keeps W, A and B apart (training resumes exactly); every
reader gets the merged W + (alpha / r) · B A (nmt.checkpoint.merge_lora), so
translation, averaging and every export need no adapter support.

Written here rather than taken from peft: peft wraps transformers models and pulls in accelerate,
while this is one module over nmt's own nn.Linear layers, merged by one matmul per layer."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

DEFAULT_TARGETS = ("qkv_proj", "q_proj", "kv_proj", "out_proj")


class LoraLinear(nn.Linear):
    """nn.Linear with a trained low-rank update beside its frozen weight and bias (the same
    parameters, under the same names: lora_a and lora_b are added)."""

    def __init__(self, base: nn.Linear, rank: int, alpha: float):
        # (on the meta device: nn.Linear would draw a weight of its own, only to be replaced by base's)
        super().__init__(base.in_features, base.out_features, bias=base.bias is not None,
                         device="meta", dtype=base.weight.dtype)
        self.weight, self.bias = base.weight, base.bias
        self.weight.requires_grad_(False)
        if self.bias is not None:
            self.bias.requires_grad_(False)
        self.lora_a = nn.Parameter(torch.empty(rank, base.in_features, device=base.weight.device))
        nn.init.kaiming_uniform_(self.lora_a, a=math.sqrt(5))
        self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank, device=base.weight.device))
        self.scale = alpha / rank

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias) + F.linear(F.linear(x, self.lora_a), self.lora_b) * self.scale


def add_lora(model: nn.Module, rank: int, alpha: float, targets: list[str]) -> int:
    """Freeze every parameter and put a LoraLinear in place of each nn.Linear named in `targets`;
    returns how many layers were adapted (0 is an error for the caller to name)."""
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    adapted = 0
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if name in targets and isinstance(child, nn.Linear) and not isinstance(child, LoraLinear):
                setattr(module, name, LoraLinear(child, rank, alpha))
                adapted += 1
    return adapted
