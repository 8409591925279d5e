"""Linear layers through oneDNN on a CPU: weights packed once for translation, plain weights
for training.

torch computes an fp32 CPU matmul with Intel's MKL, which on AMD processors runs at about half
of oneDNN's rate: on a 2-core AMD EPYC host, 400 × 256 by 256 × 1,024 took 1.26 ms with MKL and
0.61 ms through oneDNN with the weight packed, and 1,024³ 13.4 against 6.0 ms (docs/serving.md).
CTranslate2 takes oneDNN on any CPU that is not Intel's for the same reason.

- Translation: an engine's weights never change, so each is packed into oneDNN's layout once,
  when it is loaded (`torch.ops.mkldnn`, the operators inductor's CPU freezing uses). A model of
  more than PACKING_LIMIT_BYTES of weights keeps `F.linear`, since it would hold them twice.
  A product small enough that oneDNN's call costs more than it saves (a few rows, a narrow
  layer: a served request, an interactive line, a small model's steps) takes `F.linear` all
  the same (worth_packed_product). Under bf16 autocast (decode.precision bf16) each weight is
  packed a second time in bf16, at its first bf16 product, and the products large enough
  (worth_bf16_product) run on it; smaller ones stay fp32.
- Training (train.cpu_linear: onednn): the three products of a layer, y = x·Wᵀ + b and the
  gradients x̄ = ȳ·W and W̄ = ȳᵀ·x, go to oneDNN with the weights as they are (OneDnnLinear,
  use_onednn_for_training). MKL's W̄ is as fast as oneDNN's fed through torch's transposes, which
  are slow, so W̄ comes from oneDNN's inner-product backward, which reads ȳ and x untransposed.
  Only weights at least MIN_TRAINING_WIDTH wide on both sides: narrower products gain less than
  the calls cost. The output layer's loss (nmt.model.output_loss) computes its three products the
  same way, from MIN_OUTPUT_ELEMENTS weights: a vocabulary makes them large at any width.
  bench-small's updates (256 wide) took 0.69-0.75 of their time with MKL, the demo's (128 wide)
  0.92-0.95 (bench/results/cpu_settings_linear.json).

The products equal MKL's up to the order of fp32 sums, and their rows are padded to few counts
(padded_rows), since oneDNN builds a kernel for each shape. Anything in another dtype, under
autocast (bf16 training; in translation, autocast to anything but bf16) or under torch.compile
takes `F.linear`.
"""
from __future__ import annotations

import functools

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from nmt.model.precision import autocast_off

_PACKING_ROWS = 64  # the rows oneDNN is told to expect; products of any number of rows are right


@functools.cache  # asked on every layer's call (applies)
def available() -> bool:
    """Whether this torch has oneDNN and the operators used here."""
    return (torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")
            and hasattr(torch.ops.mkldnn, "_reorder_linear_weight")
            and hasattr(torch.ops.aten, "mkldnn_linear_backward_weights"))


def packed_weight(weight: Tensor, rows: int = _PACKING_ROWS) -> Tensor:
    """`weight` (out × in) in oneDNN's layout for products with about `rows` rows."""
    return torch.ops.mkldnn._reorder_linear_weight(weight.detach(), rows)


def _onednn_input(x: Tensor) -> bool:
    """Whether oneDNN can take `x` at all: a plain, non-empty CPU tensor (not the fake ones that
    count FLOPs or trace shapes: oneDNN has no fake kernel), with oneDNN's operators at hand."""
    return type(x) is Tensor and x.device.type == "cpu" and x.numel() > 0 and available()


def applies(x: Tensor) -> bool:
    """Whether a product with input `x` goes to oneDNN: an fp32 CPU tensor, outside autocast and
    torch.compile (which chooses its own kernels)."""
    if torch.compiler.is_compiling():
        return False
    return x.dtype == torch.float32 and _onednn_input(x) and not torch.is_autocast_enabled("cpu")


# oneDNN builds (JIT-compiles) its kernels for each shape of a product, the number of rows
# included, and keeps the last 1,024 built: a new row count cost 0.6 ms for a 1,100 × 128 by
# 128 × 384 product that then took 0.34 ms, and 2.2 ms for its weight gradient. Batches of tokens
# have a new row count nearly every update, so the rows are padded with zeros up to the next of 16
# steps per power of two (at most 1/16 more rows, 3 % on average): few shapes, each built once.
def padded_rows(rows: int) -> int:
    """The row count a product of `rows` rows is computed at: `rows` up to 16, else rounded up
    to a multiple of 2^(⌊log2 rows⌋ - 4)."""
    step = 1 << max(0, rows.bit_length() - 5)
    return -(-rows // step) * step


def with_padded_rows(x: Tensor) -> Tensor:
    """x as (rows × features), zero rows appended up to padded_rows(rows)."""
    x = x.reshape(-1, x.size(-1))
    rows, padded_count = x.size(0), padded_rows(x.size(0))
    if padded_count == rows:
        return x.contiguous()
    padded = x.new_empty(padded_count, x.size(1))  # (F.pad would write the zeros over every row first)
    padded[:rows] = x
    padded[rows:] = 0
    return padded


def product(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x·weightᵀ + bias through oneDNN; `weight` (out × in) plain or from packed_weight. A row's
    result does not depend on the rows beside it (equal bit for bit on the hosts measured), so the
    padding rows change nothing."""
    rows = x.numel() // x.size(-1)
    out = torch.ops.mkldnn._linear_pointwise(with_padded_rows(x), weight, bias, "none", [], "")
    return out[:rows].view(*x.shape[:-1], out.size(-1))


def weight_gradient(grad_output: Tensor, x: Tensor, weight: Tensor, bias: bool) -> tuple[Tensor, Tensor | None]:
    """(grad_outputᵀ·x, the column sums of grad_output where `bias`) for fp32 CPU tensors of
    (..., features), taken as (rows × features): oneDNN's inner-product backward, which reads both
    untransposed (their zero padding rows add nothing)."""
    grad_weight, grad_bias = torch.ops.aten.mkldnn_linear_backward_weights(
        with_padded_rows(grad_output).to_mkldnn(), with_padded_rows(x).to_mkldnn(), weight, bias)
    return grad_weight, (grad_bias if bias else None)


def _replace_linears(model: nn.Module, by, kinds: tuple[type, ...] = (nn.Linear,), worth=lambda weight: True) -> int:
    """Put by(layer) in place of each fp32 layer on the CPU whose type is one of `kinds` and whose
    weight is worth(weight); how many were replaced."""
    replaced = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child) in kinds and child.weight.device.type == "cpu" and child.weight.dtype == torch.float32 \
                    and worth(child.weight):
                setattr(parent, name, by(child))
                replaced += 1
    return replaced


# For translation: weights packed once.

# A oneDNN call costs about 20 µs before any arithmetic, MKL's about 5: on the 2-core AMD host
# (1 and 2 threads), a product of 16 rows by a 128 × 384 weight took 42 µs packed and 23 through
# F.linear, one of 256 rows by 256 × 256 0.96-0.98 of F.linear's time. Weights of 2^18 elements or
# more (256 × 1,024, 512 × 512, an output layer) gain from 2 rows on (4 rows by 1,024 × 256: 0.54-
# 0.67 of F.linear's time; by 128 × 6,000, 0.44-0.64), smaller ones only from 16M multiply-adds.
LARGE_PACKED_WEIGHT = 2**18


def worth_packed_product(rows: int, weight_elements: int) -> bool:
    """Whether a product of `rows` rows by a packed weight goes to oneDNN rather than F.linear."""
    return rows * weight_elements >= (2**19 if weight_elements >= LARGE_PACKED_WEIGHT else 2**24)


# Under bf16 autocast on a CPU with bf16 dot products, a bf16 product through a bf16 packed weight
# took 0.49-0.65 of the fp32 packed product's time from 16 rows on (2 threads, an AMD EPYC (Zen 4)
# host: 400 × 256 by 256 × 1,024, 0.48 against 0.94 ms), where autocast's F.linear, which casts
# the weight at every call, took 0.6-0.77. Smaller products are as fast or faster in fp32, since
# oneDNN's call costs about 20 µs: below about 1M multiply-adds with a weight of LARGE_PACKED_WEIGHT
# elements or more (2 rows by 128 × 6,000: 52 µs in fp32, 36 in bf16), below about 2M with a
# smaller one (32 rows by 128 × 384: 29 µs either way; 16 rows by 128 × 128: 8 and 20 µs).
def worth_bf16_product(rows: int, weight_elements: int) -> bool:
    """Whether a product of `rows` rows under bf16 autocast runs in bf16 rather than fp32."""
    return rows * weight_elements >= (2**20 if weight_elements >= LARGE_PACKED_WEIGHT else 2**21)


def _bf16_autocast() -> bool:
    return torch.is_autocast_enabled("cpu") and torch.get_autocast_dtype("cpu") == torch.bfloat16


class PackedWeight:
    """A layer's weight and bias (the same tensors) with the weight in oneDNN's layout: in fp32
    from the start, in bf16 (with a bf16 bias) from the first bf16 product on. (Two threads
    asking at once each pack it: the same tensor either way.)"""

    def __init__(self, weight: Tensor, bias: Tensor | None):
        self.weight, self.bias = weight, bias
        self.fp32 = packed_weight(weight)
        self._bf16: tuple[Tensor, Tensor | None] | None = None

    def bf16(self) -> tuple[Tensor, Tensor | None]:
        """The packed bf16 weight and the bf16 bias (None without one)."""
        if self._bf16 is None:
            self._bf16 = (packed_weight(self.weight.detach().to(torch.bfloat16)),
                          None if self.bias is None else self.bias.detach().to(torch.bfloat16))
        return self._bf16


def packed_linear(x: Tensor, weight: Tensor, bias: Tensor | None, packed: PackedWeight | None) -> Tensor:
    """F.linear(x, weight, bias), through `packed` (PackedWeight(weight, bias)) where it applies and
    pays: in fp32, or under bf16 autocast in bf16 where the product is large enough
    (worth_bf16_product) and in fp32 where it is not (a bf16 or fp32 result, as the choice went)."""
    if packed is None or torch.compiler.is_compiling() \
            or (torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad)):
        return F.linear(x, weight, bias)  # (compiled: inductor chooses its kernels)
    rows = x.numel() // x.size(-1)
    if _bf16_autocast() and _onednn_input(x):
        if worth_bf16_product(rows, weight.numel()):
            packed_bf16, bias_bf16 = packed.bf16()
            return product(x.to(torch.bfloat16), packed_bf16, bias_bf16)
        with autocast_off("cpu"):
            return packed_linear(x.float(), weight, bias, packed)
    if not applies(x) or not worth_packed_product(rows, weight.numel()):
        return F.linear(x, weight, bias)
    return product(x, packed.fp32, bias)


class PackedLinear(nn.Module):
    """An nn.Linear's weight and bias (the same tensors) with the weight packed for oneDNN."""

    def __init__(self, linear: nn.Linear):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight, self.bias = linear.weight, linear.bias
        self.packed = PackedWeight(linear.weight, linear.bias)

    def forward(self, x: Tensor) -> Tensor:
        return packed_linear(x, self.weight, self.bias, self.packed)


# A packed weight is a second copy beside the plain one (which state dicts, exports, gradients and
# autocast read): models whose fp32 weights pass this size keep MKL's products and one copy.
PACKING_LIMIT_BYTES = 2**30


def pack_for_cpu_inference(model: nn.Module) -> int:
    """Replace each plain nn.Linear (or a trained model's OneDnnLinear) of an fp32 model on the CPU
    by a PackedLinear, in place; the number replaced (0 where oneDNN is not available, or the
    weights pass PACKING_LIMIT_BYTES). For a model whose weights stay as they are."""
    if not available() or sum(p.numel() * p.element_size() for p in model.parameters()) > PACKING_LIMIT_BYTES:
        return 0
    return _replace_linears(model, PackedLinear, (nn.Linear, OneDnnLinear))


# For training: plain weights, which the optimizer changes.

class _OneDnnLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        return product(x, weight, bias)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_output: Tensor):
        x, weight = ctx.saved_tensors
        need_x, need_weight, need_bias = ctx.needs_input_grad
        grad_x = grad_weight = grad_bias = None
        if need_x:  # x̄ = ȳ·W: a product with Wᵀ as its weight
            grad_x = product(grad_output, weight.t().contiguous())
        need_bias = need_bias and ctx.has_bias
        if need_weight or need_bias:  # W̄ = ȳᵀ·x and b̄ from one oneDNN call, over (rows × features)
            grad_weight, grad_bias = weight_gradient(grad_output, x, weight, need_bias)
            grad_weight = grad_weight if need_weight else None
        return grad_x, grad_weight, grad_bias


def trainable_linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """F.linear(x, weight, bias) with its forward and backward products through oneDNN where it
    applies (an fp32 CPU product), else F.linear itself."""
    if not (applies(x) and weight.dtype == torch.float32):
        return F.linear(x, weight, bias)
    return _OneDnnLinearFunction.apply(x, weight, bias)


class OneDnnLinear(nn.Linear):
    """An nn.Linear's weight and bias (the same tensors) whose products, forward and backward, run
    through oneDNN on a CPU (trainable_linear): for a model in training. Still an nn.Linear to
    whatever looks for one (bf16 weights, the memory estimate, LoRA)."""

    def __init__(self, linear: nn.Linear):
        # (on the meta device: nn.Linear would draw a weight of its own, only to be replaced by linear's)
        super().__init__(linear.in_features, linear.out_features, bias=linear.bias is not None,
                         device="meta", dtype=linear.weight.dtype)
        self.weight, self.bias = linear.weight, linear.bias

    def forward(self, x: Tensor) -> Tensor:
        return trainable_linear(x, self.weight, self.bias)


# Training's products go to oneDNN where both sides of the weight are at least this wide. Below,
# the calls' own costs (padding, conversions, the autograd function, packing) eat the gain: a
# layer's forward and backward over 700-1,024 rows took 1.26 ms on oneDNN and 1.60 ms with
# F.linear at 128 → 384, 0.62 and 0.64 ms at 128 → 128, 1.20 and 1.11 ms at 256 → 128; but 6.9
# and 9.6 ms at 256 → 256 over 3,000-4,096 rows, 3.8 and 6.1 ms at 256 → 768 over 700-1,024 (2
# threads, an AMD EPYC host). Measured again with malloc as nmt.host_memory sets it, over 950-2,000
# rows: 0.94 of F.linear's time at 128 → 384, 1.34 at 128 → 128, 1.02 at 128 → 256, 1.08 at 256 → 128.
MIN_TRAINING_WIDTH = 256


def worth_training_on(weight: Tensor) -> bool:
    """Whether training's products with this (out × in) weight go to oneDNN (MIN_TRAINING_WIDTH)."""
    return min(weight.shape) >= MIN_TRAINING_WIDTH


# The output layer's loss (nmt.model.output_loss) goes to oneDNN from this many weight elements
# (64 wide over a 4,096 vocabulary): its products are large at any width, since the vocabulary is.
# Forward and backward over about 1,000 rows took 0.66 of MKL's time at 128 × 6,000 (the demo's),
# 0.69 at 128 × 2,000, 0.75 at 64 × 4,000, 0.97 at 32 × 6,000 and 1.04 at 64 × 1,000; 0.57 at
# 256 × 8,000 over 4,000 rows (2 threads, an AMD EPYC host, malloc as nmt.host_memory sets it).
MIN_OUTPUT_ELEMENTS = 64 * 4096


def worth_output_loss_on(weight: Tensor) -> bool:
    """Whether the output loss's products with this (vocabulary × width) weight go to oneDNN."""
    return weight.numel() >= MIN_OUTPUT_ELEMENTS


def use_onednn_for_training(model: nn.Module) -> int:
    """Replace each plain nn.Linear of `model` whose weight is worth it (worth_training_on) by a
    OneDnnLinear, in place; the number replaced (0 where oneDNN is not available). State dicts,
    parameters and their gradients stay as they were; on a GPU, in bf16 or under autocast the
    layers compute as nn.Linear does."""
    if not available():
        return 0
    return _replace_linears(model, OneDnnLinear, worth=worth_training_on)
