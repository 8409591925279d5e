"""The output layer and the label-smoothed cross-entropy, fused and computed in row chunks.

The (tokens × vocabulary) logits are the largest tensor in training: 112 MB for a 4k-token batch
and an 8k vocabulary. Built whole, they, their log-softmax and its gradient are each a fresh
allocation that the C library hands out and takes back page by page on every update, and the
log-softmax backward is a pass of its own. Here each chunk of rows goes through the projection,
the loss and the gradient at once, so no (tokens × V) tensor ever exists: the gradient of a sum of
per-token losses with respect to the logits is known in the forward pass (softmax − smoothed
one-hot), and backward only scales the stored gradients by its incoming factor.
(bench/speed.md has the measurement.)

Under `torch.compile` the plain formula is traced instead (projection, then cross-entropy): the
chunk loop would make the graph depend on the number of tokens, and the compiler fuses the
softmax and its gradient itself, written so that the fused kernels read the logits once each way
(`smoothed_cross_entropy_sum`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from nmt.model import onednn_linear
from nmt.special_tokens import PAD

# Logit elements per chunk: 16 MB of fp32 on CPU stays under glibc's 32 MB mmap threshold, so
# chunk buffers are reused from the heap; on a GPU the caching allocator reuses anything.
_CPU_CHUNK_ELEMENTS = 1 << 22
_GPU_CHUNK_ELEMENTS = 1 << 26


class _OutputLayerLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden: Tensor, weight: Tensor, target: Tensor, epsilon: float, rows: int,
                onednn: bool) -> Tensor:
        device = hidden.device.type
        dtype = torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else hidden.dtype
        need_hidden, need_weight = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        vocab = weight.size(0)
        # fp32, scaled by the backward's gradient before it is rounded to a bf16 hidden's dtype
        grad_hidden = torch.empty_like(hidden, dtype=torch.float32) if need_hidden else None
        grad_weight = torch.zeros(weight.shape, dtype=torch.float32, device=weight.device) if need_weight else None
        total = torch.zeros((), dtype=torch.float32, device=hidden.device)
        # fp32 on a CPU, where large enough: the three products through oneDNN, the weight packed
        # once for each product with it. Each chunk's rows are padded as oneDNN takes them
        # (onednn_linear.padded_rows), the padding's targets PAD like any padded position: every
        # (rows × V) buffer is then the next product's input as it lies, never copied to pad it.
        on_onednn = onednn and dtype == torch.float32 and onednn_linear.applies(hidden) \
            and onednn_linear.worth_output_loss_on(weight)
        with torch.autocast(device, enabled=False):
            w = weight.to(dtype)
            if on_onednn:
                w_forward = onednn_linear.packed_weight(w, rows)
                w_backward = onednn_linear.packed_weight(w.t().contiguous(), rows) if need_hidden else None
            for start in range(0, hidden.size(0), rows):
                h = hidden[start:start + rows].to(dtype)
                t = target[start:start + rows, None]
                chunk = h.size(0)
                if on_onednn:
                    h = onednn_linear.with_padded_rows(h)
                    t = F.pad(t, (0, 0, 0, h.size(0) - chunk), value=PAD)
                real = t.ne(PAD)  # (rows, 1); PAD rows are masked in the small (rows × D) products
                z = onednn_linear.product(h, w_forward) if on_onednn else F.linear(h, w).float()
                # (1-ε)·(lse - z_t) + ε·(lse - mean z): PyTorch's label smoothing spreads ε over all V
                target_logit, mean = z.gather(1, t), z.mean(1, keepdim=True)
                # lse as torch.logsumexp computes it, but the exponentials kept for the softmax:
                # one pass of exp over the chunk instead of two (half the time on a CPU)
                top = z.amax(1, keepdim=True)
                exps = z.sub_(top).exp_()  # z is gone from here on
                sums = exps.sum(1, keepdim=True)
                token_loss = top + sums.log() - (1 - epsilon) * target_logit - epsilon * mean
                total += token_loss.masked_fill_(~real, 0).sum()
                if not (need_hidden or need_weight):
                    continue
                grad = exps.div_(sums).sub_(epsilon / vocab)  # softmax - ε/V ...
                grad.scatter_add_(1, t, grad.new_full(t.shape, epsilon - 1))  # ... - (1-ε)·one-hot
                grad = grad.to(dtype)
                if need_hidden:
                    chunk_grad = onednn_linear.product(grad, w_backward) if on_onednn else grad @ w
                    grad_hidden[start:start + chunk] = chunk_grad[:chunk].mul_(real[:chunk])
                if need_weight:
                    h = h * real
                if need_weight and on_onednn:
                    grad_weight += onednn_linear.weight_gradient(grad, h, w, bias=False)[0]
                elif need_weight and dtype == torch.float32:
                    grad_weight.addmm_(grad.t(), h)
                elif need_weight:  # bf16/fp16 products, summed in fp32
                    grad_weight += (grad.t() @ h).float()
        ctx.save_for_backward(grad_hidden, grad_weight)
        ctx.weight_dtype, ctx.hidden_dtype = weight.dtype, hidden.dtype
        return total

    @staticmethod
    def backward(ctx, grad_output: Tensor):
        grad_hidden, grad_weight = ctx.saved_tensors
        return (None if grad_hidden is None else (grad_hidden * grad_output).to(ctx.hidden_dtype),
                None if grad_weight is None else (grad_weight * grad_output).to(ctx.weight_dtype),
                None, None, None, None)


def smoothed_cross_entropy_sum(logits: Tensor, target: Tensor, epsilon: float) -> Tensor:
    """F.cross_entropy(logits, target, ignore_index=PAD, label_smoothing=epsilon, reduction="sum"),
    written for a compiler to read the (N, V) logits once in the forward and once in the backward.
    Each token's loss is lse − (1−ε)·z_t − ε·mean(z): three sums over the vocabulary with no
    order between them (F.cross_entropy's smoothing term sums the log-softmax, which needs lse
    first: a second pass), the target's logit picked by comparison with its id (gather's gradient
    would be a scatter into a fresh (N, V) tensor). Its gradient, softmax − ε/V − (1−ε)·one-hot,
    is then pointwise: no sum over the vocabulary in the backward."""
    lse = torch.logsumexp(logits, 1)
    is_target = torch.arange(logits.size(1), device=logits.device) == target[:, None]
    target_logit = torch.where(is_target, logits, 0.0).sum(1)
    loss = lse - (1 - epsilon) * target_logit - epsilon * logits.mean(1)
    return loss.masked_fill(target == PAD, 0.0).sum()


def output_layer_loss(hidden: Tensor, weight: Tensor, target: Tensor, epsilon: float,
                      rows: int | None = None, onednn: bool = True) -> Tensor:
    """Sum over tokens of the label-smoothed cross-entropy of `hidden @ weight.T` (PAD targets
    count zero): hidden (N, D), weight (V, D), target (N,). `rows` per chunk; by default as many
    as fit the chunk budget. fp32 products on a CPU through oneDNN unless `onednn` is False
    (nmt.model.onednn_linear). Backward may run once (its gradients are computed here)."""
    if torch.compiler.is_compiling():
        return smoothed_cross_entropy_sum(F.linear(hidden, weight).float(), target, epsilon)  # (N, V) logits
    if rows is None:
        budget = _CPU_CHUNK_ELEMENTS if hidden.device.type == "cpu" else _GPU_CHUNK_ELEMENTS
        rows = max(1, budget // weight.size(0))
    return _OutputLayerLoss.apply(hidden, weight, target, epsilon, rows, onednn)
