"""Linear layers through oneDNN with their weights packed once, for translation on a CPU.

torch computes an fp32 CPU matmul with Intel's MKL, which on AMD processors runs at about half
of oneDNN's rate: on a 2-core AMD EPYC host, 400 × 256 by 256 × 1,024 took 1.26 ms with MKL and
0.61 ms through oneDNN with the weight packed, and 1,024³ 13.4 against 6.0 ms (docs/serving.md).
CTranslate2 takes oneDNN on any CPU that is not Intel's for the same reason. A translation
engine's weights never change, so each is packed into oneDNN's layout once, when it is loaded
(`torch.ops.mkldnn`, the operators inductor's CPU freezing uses). Products of packed weights
equal MKL's up to the order of fp32 sums. Anything that needs gradients, another dtype or
autocast (decode.precision bf16) takes `F.linear` as before, and so does a model of more than
PACKING_LIMIT_BYTES of weights, which would hold them twice.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

_PACKING_ROWS = 64  # the rows oneDNN is told to expect; products of any number of rows are right


def available() -> bool:
    """Whether this torch has oneDNN and the packed linear operator."""
    return (torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")
            and hasattr(torch.ops.mkldnn, "_reorder_linear_weight"))


def packed_weight(weight: Tensor) -> Tensor:
    return torch.ops.mkldnn._reorder_linear_weight(weight.detach(), _PACKING_ROWS)


def packed_linear(x: Tensor, weight: Tensor, bias: Tensor | None, packed: Tensor | None) -> Tensor:
    """F.linear(x, weight, bias), through `packed` (packed_weight(weight)) where it applies."""
    if packed is None or x.dtype != torch.float32 or x.device.type != "cpu" or torch.is_autocast_enabled("cpu") \
            or (torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad)):
        return F.linear(x, weight, bias)
    return torch.ops.mkldnn._linear_pointwise(x, packed, bias, "none", [], "")


class PackedLinear(nn.Module):
    """An nn.Linear's weight and bias (the same tensors) with the weight packed for oneDNN."""

    def __init__(self, linear: nn.Linear):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight, self.bias = linear.weight, linear.bias
        self.packed = packed_weight(linear.weight)

    def forward(self, x: Tensor) -> Tensor:
        return packed_linear(x, self.weight, self.bias, self.packed)


# A packed weight is a second copy beside the plain one (which state dicts, exports, gradients and
# autocast read): models whose fp32 weights pass this size keep MKL's products and one copy.
PACKING_LIMIT_BYTES = 2**30


def pack_for_cpu_inference(model: nn.Module) -> int:
    """Replace each plain nn.Linear of an fp32 model on the CPU by a PackedLinear, in place; the
    number replaced (0 where oneDNN is not available, or the weights pass PACKING_LIMIT_BYTES).
    For a model whose weights stay as they are."""
    if not available() or sum(p.numel() * p.element_size() for p in model.parameters()) > PACKING_LIMIT_BYTES:
        return 0
    replaced = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child) is nn.Linear and child.weight.device.type == "cpu" and child.weight.dtype == torch.float32:
                setattr(parent, name, PackedLinear(child))
                replaced += 1
    return replaced
