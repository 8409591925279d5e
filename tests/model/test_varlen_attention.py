"""Key padding as FlashAttention's variable-length segments (train.attention: varlen,
nmt.model.varlen_attention): the segments by hand, what they compute against the boolean
key-padding mask, the model's training passes through them, and the settings it refuses. The
CUDA kernel itself: tests/train/test_cuda.py."""

import sys

import pytest
import torch
import torch.nn.functional as F

from nmt.config import Recipe, TrainConfig
from nmt.errors import NmtError
from nmt.model.varlen_attention import flash_varlen_available, key_padding_segments, varlen_attention
from nmt.train.step import TrainStep
from tests.model.test_layer_norm import loss_and_gradients, model_and_batch


def padding_mask(real: list[int], keys: int) -> torch.Tensor:  # (B, 1, 1, S), True at real keys
    return (torch.arange(keys)[None, :] < torch.tensor(real)[:, None])[:, None, None, :]


def test_segments_by_hand():
    """Sentences with 4, 1 and 3 of 4 keys real, 5 queries each: segment 2i holds sentence i's
    queries and real keys, segment 2i+1 no query and its padding keys (none for the full one)."""
    segments = key_padding_segments(padding_mask([4, 1, 3], 4), queries=5)
    assert segments.cu_queries.tolist() == [0, 5, 5, 10, 10, 15, 15]
    assert segments.cu_keys.tolist() == [0, 4, 4, 5, 8, 11, 12]
    assert segments.cu_queries.dtype == segments.cu_keys.dtype == torch.int32  # as FlashAttention takes them
    assert (segments.max_queries, segments.max_keys) == (5, 4)


@pytest.mark.parametrize("queries", [4, 6], ids=["self-attention", "cross-attention"])
def test_the_segments_attend_as_the_key_padding_mask(queries):
    """Output and gradients of attention through the segments equal scaled_dot_product_attention's
    under the boolean mask, padding queries included, for a full row, a one-key row and others."""
    torch.manual_seed(0)
    real, keys, heads, width = [4, 1, 3, 2], 4, 2, 8
    q = torch.randn(len(real), heads, queries, width, requires_grad=True)
    k, v = (torch.randn(len(real), heads, keys, width, requires_grad=True) for _ in range(2))
    mask = padding_mask(real, keys)
    grad = torch.randn(len(real), queries, heads * width)
    ours = varlen_attention(q, k, v, key_padding_segments(mask, queries))
    theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(1, 2).reshape(grad.shape)
    assert torch.allclose(ours, theirs, atol=1e-6)
    ours_grads = torch.autograd.grad(ours, (q, k, v), grad)
    theirs_grads = torch.autograd.grad(theirs, (q, k, v), grad)
    for a, b in zip(ours_grads, theirs_grads):
        assert torch.allclose(a, b, atol=1e-6)
    assert ours_grads[1][1, :, 1:].abs().max() == 0  # a padding key gets no gradient


@pytest.mark.parametrize("checkpointed", [False, True], ids=["kept", "checkpointed"])
def test_the_models_training_passes_through_segments_give_the_masks_loss_and_gradients(monkeypatch, checkpointed):
    """The encoder's self-attention and the encoder-decoder attention of every layer attend
    through the segments in training (the CPU computes them by the reference), with the loss and
    gradients of the boolean masks, also with each layer recomputed in the backward
    (train.checkpoint_activations); the decoder's causal self-attention, validation and decoding
    do not use them."""
    model, batch = model_and_batch("post")
    masked = loss_and_gradients(model, batch, bf16=False)
    model.checkpoint_layers = checkpointed
    model.use_varlen_attention(True)
    calls = []
    monkeypatch.setattr("nmt.model.transformer.varlen_attention",
                        lambda *args: calls.append(args[0].shape) or varlen_attention(*args))
    segmented = loss_and_gradients(model, batch, bf16=False)
    src, tgt = batch[0], batch[1]
    # 2 encoder self-attentions (src.size(1) queries a sentence), 2 cross-attentions (tgt.size(1)),
    # each run again in the backward where the layers are recomputed
    passes = 2 if checkpointed else 1
    assert sorted(shape[2] for shape in calls) == sorted([src.size(1)] * 2 * passes + [tgt.size(1)] * 2 * passes)
    assert torch.allclose(segmented[0], masked[0], rtol=1e-6)
    for ours, theirs in zip(segmented[1], masked[1]):
        assert torch.allclose(ours, theirs, rtol=1e-4, atol=1e-6)
    calls.clear()
    model.eval()
    with torch.no_grad():
        model(*batch)
    assert not calls


def test_varlen_attention_is_refused_where_flash_attention_cannot_run_it(monkeypatch):
    base = {"output_dir": "out", "data": {"src_lang": "en", "tgt_lang": "de", "train": "t", "valid": "v"},
            "train": {"attention": "varlen", "precision": "bf16"}}

    def problem(model: dict | None = None, train: dict | None = None) -> str:
        raw = {**base, "model": model or {}, "train": {**base["train"], **(train or {})}}
        with pytest.raises(ValueError) as error:
            Recipe.model_validate(raw)
        return str(error.value)

    Recipe.model_validate(base)  # bf16, absolute positions, heads 64 wide: accepted
    assert "takes no dropout" in problem(model={"attention_dropout": 0.1})
    assert "relative" in problem(model={"positions": "relative"})
    assert "multiple of 8" in problem(model={"d_model": 60, "heads": 5})
    assert "bf16 or fp16" in problem(train={"precision": "fp32"})
    assert "packed rows" in problem(train={"pack_width": 64})
    model, _ = model_and_batch("post")
    monkeypatch.setattr("nmt.train.step.flash_varlen_available", lambda: True)  # as from torch 2.10
    with pytest.raises(NmtError, match="needs a CUDA device"):
        TrainStep(model, TrainConfig(max_tokens=64, attention="varlen", precision="bf16"), torch.device("cpu"))


def test_a_torch_without_varlen_attn_is_named_before_training(monkeypatch):
    """torch 2.9, which nmt supports, has no torch.nn.attention.varlen: the step says which torch
    it needs instead of failing at the first attention (a None in sys.modules fails the import)."""
    monkeypatch.setitem(sys.modules, "torch.nn.attention.varlen", None)
    assert not flash_varlen_available()
    model, _ = model_and_batch("post")
    with pytest.raises(NmtError, match=r"needs torch 2\.10 or later.*this is torch 2\."):
        TrainStep(model, TrainConfig(max_tokens=64, attention="varlen", precision="bf16"), torch.device("cpu"))
