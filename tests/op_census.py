"""A census of the operators a piece of code runs, taken on the CPU: what a GPU's host would launch
one by one (operator calls), which of them cast a parameter to another dtype (autocast's copies
of the weights), and the largest fp32 tensor any of them made (the (tokens × vocabulary) logits
are the one that matters). A regression in any of them shows here without a GPU."""

from __future__ import annotations

from collections import Counter

import torch
from torch.utils._python_dispatch import TorchDispatchMode


class OperatorCensus(TorchDispatchMode):
    """`with OperatorCensus(model) as census: ...`; then `census.operators` (calls by operator),
    `census.parameter_casts` (casts by parameter name) and `census.largest_fp32` (elements)."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self._names = {p.data_ptr(): name for name, p in model.named_parameters()}
        self.operators: Counter[str] = Counter()
        self.parameter_casts: Counter[str] = Counter()
        self.largest_fp32 = 0

    @property
    def calls(self) -> int:
        return sum(self.operators.values())

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.operators[str(func)] += 1
        source = args[0] if args else None
        if func is torch.ops.aten._to_copy.default and isinstance(source, torch.Tensor):
            name = self._names.get(source.data_ptr())
            if name is not None:
                self.parameter_casts[name] += 1
        for tensor in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(tensor, torch.Tensor) and tensor.dtype == torch.float32:
                self.largest_fp32 = max(self.largest_fp32, tensor.numel())
        return out
