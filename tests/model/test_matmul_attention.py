"""Attention by matmuls (train.attention: matmul, nmt.model.matmul_attention): by hand on a tiny
case, against scaled_dot_product_attention for every mask the model passes, in the model's
training passes only, and compiled by inductor without being rewritten back into the fused op.
And a decoding step's self-attention on a CPU (step_attention), against the fused kernel."""

import math

import pytest
import torch
import torch.nn.functional as F

from nmt.config import TrainConfig
from nmt.model.matmul_attention import (CPU_SOFTMAX_MIN_COLUMNS, STEP_MATMUL_MIN_KEYS, matmul_attention, softmax_over_keys,
                                        step_attention, step_by_matmul)
from nmt.model.transformer import MultiHeadAttention
from nmt.train.step import TrainStep, attention_by_matmul
from tests.model.test_layer_norm import loss_and_gradients, model_and_batch


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_the_softmax_over_few_keys_pads_on_a_cpu_and_equals_torchs(dtype):
    """Rows of 1 to 20 keys, some hidden (-inf): softmax_over_keys, which pads rows narrower than
    16 keys on a CPU, gives torch's probabilities and gradients (in fp32, from bf16 scores too),
    and a tensor of the rows' own width."""
    from torch.profiler import ProfilerActivity, profile

    torch.manual_seed(0)
    for keys in range(1, 21):
        scores = torch.randn(3, 2, 5, keys).to(dtype)
        if keys > 2:
            scores[0, :, :, -2:] = float("-inf")
        grad = torch.randn(3, 2, 5, keys)
        ours, theirs = scores.clone().requires_grad_(), scores.clone().requires_grad_()
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            probabilities = softmax_over_keys(ours, torch.float32)
        expected = torch.softmax(theirs, dim=-1, dtype=torch.float32)
        assert probabilities.shape == scores.shape and probabilities.dtype == torch.float32
        assert torch.allclose(probabilities, expected, atol=1e-6, rtol=1e-5)
        probabilities.backward(grad)
        expected.backward(grad)
        assert torch.allclose(ours.grad.float(), theirs.grad.float(), atol=1e-6 if dtype == torch.float32 else 1e-2)
        padded = any(event.key == "aten::constant_pad_nd" for event in prof.key_averages())
        assert padded == (keys < CPU_SOFTMAX_MIN_COLUMNS), keys


def test_one_query_by_hand():
    # dh = 2, so the scores are q·k / √2; the third key is masked out, the second scores 0
    q = torch.tensor([[[[1.0, 0.0]]]])
    k = torch.tensor([[[[2.0, 0.0], [0.0, 0.0], [4.0, 0.0]]]])
    v = torch.tensor([[[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]]])
    mask = torch.tensor([True, True, False])[None, None, None, :]
    first = math.exp(2 / math.sqrt(2)) / (math.exp(2 / math.sqrt(2)) + 1)  # softmax of (√2, 0)
    by_hand = torch.tensor([first * 1 + (1 - first) * 3, first * 2 + (1 - first) * 4])
    assert torch.allclose(matmul_attention(q, k, v, mask, False, 0.0).flatten(), by_hand, atol=1e-6)
    # causal: the first query sees the first key only, so its output is the first value
    two = torch.randn(1, 1, 2, 2)
    assert torch.allclose(matmul_attention(two, two, v[..., :2, :], None, True, 0.0)[0, 0, 0], v[0, 0, 0])



def test_a_decoding_steps_attention_by_matmuls_equals_the_fused_kernels():
    """One query per row over 1 to 40 keys, with relative positions' bias (1, h, 1, t) and without:
    step_attention gives scaled_dot_product_attention's output within fp32 rounding, and decoding
    steps take it on a CPU in fp32 from STEP_MATMUL_MIN_KEYS keys on."""
    torch.manual_seed(0)
    for keys in (1, 7, 8, 9, 40):
        q, k, v = (torch.randn(6, 4, n, 16) for n in (1, keys, keys))
        for bias in (None, torch.randn(1, 4, 1, keys)):
            ours = step_attention(q, k, v, bias)
            assert torch.allclose(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=bias), atol=1e-6, rtol=1e-5)
        assert step_by_matmul(q, keys) == (keys >= STEP_MATMUL_MIN_KEYS)
    assert not step_by_matmul(q.bfloat16(), 40)  # bf16 keeps the fused kernel's fp32 scores
    assert not step_by_matmul(torch.zeros(1, device="meta"), 40)  # so does another device


def test_attention_dropout_drops_weights_and_scales_the_rest():
    """With the identity as values, the output is the attention weights themselves: under dropout
    0.5 each one is either dropped or doubled, about half of each."""
    torch.manual_seed(0)
    S = 64
    q, k = torch.randn(1, 2, S, S), torch.randn(1, 2, S, S)
    v = torch.eye(S).expand(1, 2, S, S)
    weights = matmul_attention(q, k, v, None, False, 0.0)
    assert torch.allclose(weights.sum(-1), torch.ones(1, 2, S))
    dropped = matmul_attention(q, k, v, None, False, 0.5)
    kept = dropped != 0
    assert torch.equal(dropped[kept], 2 * weights[kept])
    assert 0.45 < kept.float().mean().item() < 0.55

@pytest.mark.parametrize("masking", ["padded keys", "causal", "packed rows"])
def test_it_equals_scaled_dot_product_attention_with_its_gradients(masking):
    torch.manual_seed(0)
    B, h, L, dh = 3, 2, 6, 8
    q, k, v = (torch.randn(B, h, L, dh, dtype=torch.float64, requires_grad=True) for _ in range(3))
    mask, causal = None, masking == "causal"
    if masking == "padded keys":
        mask = (torch.arange(L)[None, :] < torch.tensor([6, 3, 1])[:, None])[:, None, None, :]
    elif masking == "packed rows":  # (B, 1, L, L): tokens attend within their own sentence
        segments = torch.tensor([[1, 1, 2, 2, 2, 0], [1, 1, 1, 1, 1, 1], [1, 2, 3, 3, 0, 0]])
        mask = ((segments[:, :, None] == segments[:, None, :]))[:, None]
    grad = torch.randn(B, h, L, dh, dtype=torch.float64)
    results = []
    for attend in (lambda: matmul_attention(q, k, v, mask, causal, 0.0),
                   lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)):
        out = attend()
        q.grad = k.grad = v.grad = None
        out.backward(grad)
        results.append([out.detach(), q.grad, k.grad, v.grad])
    for ours, torchs in zip(*results):
        assert torch.allclose(ours, torchs, atol=1e-12)


def median_gradient_error(result, reference) -> float:
    return torch.stack([(a - b).norm() / b.norm() for a, b in zip(result[1], reference[1]) if b.norm() > 0]).median()


def test_the_models_training_passes_give_the_fused_kernels_loss_and_gradients(monkeypatch):
    model, batch = model_and_batch("post")
    fused = loss_and_gradients(model, batch, bf16=False)
    fused_bf16 = loss_and_gradients(model, batch, bf16=True)
    model.use_matmul_attention(True)
    calls = []
    monkeypatch.setattr("nmt.model.transformer.matmul_attention",
                        lambda *args: calls.append(1) or matmul_attention(*args))
    by_matmul = loss_and_gradients(model, batch, bf16=False)
    assert len(calls) == 2 + 2 * 2  # every attention of the 2 + 2 layers
    assert torch.allclose(by_matmul[0], fused[0], rtol=1e-6)
    for ours, torchs in zip(by_matmul[1], fused[1]):
        assert torch.allclose(ours, torchs, rtol=1e-4, atol=1e-6)
    # In bf16 the scores are rounded to bf16 before the softmax (as fairseq's fp16 attention
    # rounds them), where the fused kernels keep them in fp32: measured against fp32, the loss as
    # close as the fused kernels' and the gradients' error at most twice theirs (1.3-1.9 times on
    # four seeds of this model, 1.6 on this one).
    by_matmul_bf16 = loss_and_gradients(model, batch, bf16=True)
    assert abs(by_matmul_bf16[0] - fused[0]) <= abs(fused_bf16[0] - fused[0])
    assert median_gradient_error(by_matmul_bf16, fused) < 2 * median_gradient_error(fused_bf16, fused) < 0.1
    # validation and decoding keep the fused kernels
    calls.clear()
    model.eval()
    with torch.no_grad():
        model(*batch)
    assert not calls


def test_train_attention_reaches_every_attention_through_the_step():
    """matmul turns it on, sdpa off; auto, the default, is matmul on a CPU and sdpa on CUDA. (In fp32:
    bf16 would lower the model's weights for the first step, and another step refuses them.)"""
    model, _ = model_and_batch("post")
    attentions = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
    TrainStep(model, TrainConfig(max_tokens=64, attention="sdpa", precision="fp32"), torch.device("cpu"))
    assert len(attentions) == 6 and not any(m.by_matmul for m in attentions)
    TrainStep(model, TrainConfig(max_tokens=64, precision="fp32"), torch.device("cpu"))
    assert all(m.by_matmul for m in attentions)
    TrainStep(model, TrainConfig(max_tokens=64, attention="sdpa", precision="fp32"), torch.device("cpu"))
    TrainStep(model, TrainConfig(max_tokens=64, attention="matmul", precision="fp32"), torch.device("cpu"))
    assert all(m.by_matmul for m in attentions)
    assert not attention_by_matmul("auto", torch.device("cuda")) and attention_by_matmul("matmul", torch.device("cuda"))


def textbook_attention(q, k, v, mask, causal, dropout):
    """Attention as inductor's fuse_attention pass expects it (its first pattern, a constant scale
    for head width 64): the control."""
    return torch.matmul(q, k.transpose(-2, -1)).div(8.0).softmax(dim=-1).matmul(v)


def test_inductor_keeps_the_matmuls_where_it_rewrites_textbook_attention():
    """Inductor's fuse_attention pass rewrites matmul-softmax-matmul patterns back into
    scaled_dot_product_attention: train.attention: matmul would then run the fused kernels again.
    Inductor's passes on the bf16 training graph of the masked case (the recipes' attention, no
    dropout), with dynamic shapes as the step compiles, but no code generation (a minute of C++
    on a CPU; the passes are what decides): textbook attention is rewritten, nmt's is not, and the
    graph inductor would generate code from computes eager's output and gradients."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.utils import counters
    from torch._inductor.compile_fx import compile_fx

    def passes_without_code_generation(graph_module, inputs):
        return compile_fx(graph_module, inputs, inner_compile=lambda gm, *args, **kwargs: make_boxed_func(gm.forward))

    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 16, 64, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    mask = torch.ones(2, 1, 1, 16, dtype=torch.bool)
    mask[0, ..., 10:] = False
    grad = torch.randn(2, 4, 16, 64, dtype=torch.bfloat16)
    rewritten, results = {}, []
    for attend in (textbook_attention, matmul_attention, None):
        torch._dynamo.reset()
        counters.clear()
        compiled = torch.compile(attend, dynamic=True, backend=passes_without_code_generation) if attend else \
            matmul_attention  # eager
        q.grad = k.grad = v.grad = None
        out = compiled(q, k, v, mask, False, 0.0)
        out.backward(grad)
        if attend:
            rewritten[attend.__name__] = counters["inductor"]["fuse_attention"]
        if attend is not textbook_attention:
            results.append([out.detach(), q.grad, k.grad, v.grad])
    assert rewritten == {"textbook_attention": 2, "matmul_attention": 0}  # (forward and backward)
    for compiled, eager in zip(*results):
        assert torch.allclose(compiled.float(), eager.float(), rtol=2e-2, atol=2e-2)
