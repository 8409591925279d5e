"""T5's layout in nmt's Transformer (an imported MADLAD-400's): relative position buckets, RMSNorm,
the gated feed-forward, no biases, heads of their own size, unscaled embeddings. By hand and
against transformers' own bucket function; incremental decoding against full recomputation is in
tests/decode/test_search.py."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from nmt.config import ModelConfig, Recipe
from nmt.model.layer_norm import RMSNorm
from nmt.model.relative_positions import relative_buckets
from nmt.model.transformer import PositionwiseFeedForward, Transformer
from tests.conftest import optional_module

T5_LAYOUT = dict(encoder_layers=2, decoder_layers=2, d_model=32, heads=4, d_ff=48, dropout=0.0, max_positions=64,
                 norm="pre", positions="relative", relative_buckets=8, relative_max_distance=16, norm_type="rms",
                 gated_ffn=True, activation="gelu_tanh", bias=False, head_dim=12, scale_embeddings=False)


def test_relative_buckets_by_hand():
    # 8 buckets, 4 a side when bidirectional; offsets below 2 exact, then log-spaced up to 16
    offsets = torch.tensor([-16, -8, -4, -2, -1, 0, 1, 2, 8, 40])
    assert relative_buckets(offsets, 8, 16, bidirectional=True).tolist() == [3, 3, 2, 2, 1, 0, 5, 6, 7, 7]
    # the decoder's: every bucket for the past (exact below 4), the future in bucket 0
    assert relative_buckets(offsets, 8, 16, bidirectional=False).tolist() == [7, 6, 4, 2, 1, 0, 0, 0, 0, 0]


@pytest.mark.parametrize("buckets, distance", [(32, 128), (8, 20), (6, 7)])
@pytest.mark.parametrize("bidirectional", [True, False])
def test_relative_buckets_equal_transformers_t5(buckets, distance, bidirectional):
    transformers, _ = optional_module("transformers")
    if transformers is None:
        pytest.skip("transformers is not installed")
    from transformers.models.t5.modeling_t5 import T5Attention

    offsets = torch.arange(-300, 301)
    theirs = T5Attention._relative_position_bucket(offsets, bidirectional, buckets, distance)
    assert torch.equal(relative_buckets(offsets, buckets, distance, bidirectional), theirs)


def test_rms_norm_by_hand():
    norm = RMSNorm(2)
    with torch.no_grad():
        norm.weight.copy_(torch.tensor([2.0, -1.0]))
    rms = math.sqrt((3 ** 2 + 4 ** 2) / 2 + 1e-6)
    assert torch.allclose(norm(torch.tensor([[3.0, 4.0]])), torch.tensor([[2 * 3 / rms, -4 / rms]]))
    with torch.autocast("cpu", dtype=torch.bfloat16):  # computed in fp32, given in autocast's dtype
        assert norm(torch.tensor([[3.0, 4.0]])).dtype == torch.bfloat16


def test_the_gated_feed_forward_by_hand():
    torch.manual_seed(0)
    ffn = PositionwiseFeedForward(4, 6, 0.0, "gelu_tanh", gated=True, bias=False)
    x = torch.randn(3, 4)
    w1, w3, w2 = ffn.w1.weight, ffn.w3.weight, ffn.w2.weight
    tanh_gelu = [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))) for v in (x @ w1.T).flatten().tolist()]
    expected = (torch.tensor(tanh_gelu).view(3, 6) * (x @ w3.T)) @ w2.T
    assert torch.allclose(ffn(x), expected, atol=1e-6)
    assert ffn.w1.bias is None and ffn.w2.bias is None


def test_the_layout_has_no_biases_no_position_vectors_and_heads_of_their_own_size():
    model = Transformer(ModelConfig(**T5_LAYOUT), 40, 40)
    names = {name for name, _ in model.named_parameters()}
    assert not [n for n in names if n.endswith(".bias")]
    assert "encoder_position_bias.weight" in names and "decoder_position_bias.weight" in names
    assert model.encoder_layers[0].self_attn.qkv_proj.weight.shape == (3 * 4 * 12, 32)  # h·dh = 48 ≠ d_model
    assert model.decoder_layers[0].cross_attn.out_proj.weight.shape == (32, 48)
    ids = torch.tensor([[5, 6, 7]])
    assert torch.equal(model.src_embed(ids), model.src_embed.tokens(ids))  # unscaled, nothing added


def test_the_encoder_tells_positions_apart_and_padding_stays_hidden():
    torch.manual_seed(0)
    model = Transformer(ModelConfig(**T5_LAYOUT), 40, 40).eval()
    src, tgt = torch.tensor([[5, 6, 7, 3]]), torch.tensor([[2, 8, 9]])
    out = model(src, tgt)
    assert torch.allclose(out, model(torch.tensor([[5, 6, 7, 3, 0, 0]]), tgt), atol=1e-5)  # padding hidden
    assert not torch.allclose(out, model(torch.tensor([[7, 6, 5, 3]]), tgt), atol=1e-3)  # order matters


def test_matmul_attention_adds_the_biases_as_the_fused_kernels_do():
    torch.manual_seed(0)
    model = Transformer(ModelConfig(**T5_LAYOUT), 40, 40).train()
    src, tgt = torch.tensor([[5, 6, 7, 3], [9, 3, 0, 0]]), torch.tensor([[2, 8, 9, 10], [2, 11, 0, 0]])
    results = []
    for matmul in (False, True):
        model.use_matmul_attention(matmul)
        model.zero_grad()
        loss = F.cross_entropy(model(src, tgt).flatten(0, 1), torch.randint(4, 40, (8,), generator=torch.Generator().manual_seed(1)))
        loss.backward()
        results.append((loss.detach(), model.encoder_position_bias.weight.grad.clone(),
                        model.decoder_position_bias.weight.grad.clone()))
    for fused, by_matmul in zip(*results):
        assert torch.allclose(fused, by_matmul, atol=1e-5)
    assert results[0][1].abs().sum() > 0 and results[0][2].abs().sum() > 0  # the biases learn


def test_packing_with_relative_positions_is_refused_naming_the_key():
    with pytest.raises(ValueError, match="train.pack_width"):
        Recipe(output_dir="runs/x", model=T5_LAYOUT, train={"pack_width": 64}, data={"src_lang": "en", "tgt_lang": "de", "train": "x",
                                                                "valid": "y"})


def test_freezing_a_stack_freezes_its_position_biases():
    from nmt.train.freezing import freeze

    model = Transformer(ModelConfig(**T5_LAYOUT), 40, 40)
    freeze(model, ["encoder"])
    assert not model.encoder_position_bias.weight.requires_grad
    assert model.decoder_position_bias.weight.requires_grad


def test_t5_keys_the_export_cannot_compute_and_weights_that_do_not_fit_are_one_line_errors(trained_tiny, tmp_path):
    """A checkpoint whose model section sets T5's keys without relative positions (edited by hand,
    its weights the paper's layers'): transformers' Marian/Pegasus export names the keys it cannot
    compute; translation and the other exports, which compute them, find weights that do not fit
    (a gate missing, a norm's bias left over) and say so in one line naming the file. Nothing is
    written."""
    from typer.testing import CliRunner

    from nmt.checkpoint import load_checkpoint, save_checkpoint
    from nmt.cli import app
    from tests.conftest import TINY_DATA, one_line_error

    payload = load_checkpoint(trained_tiny.out / "checkpoints" / "best.pt")
    payload["recipe"]["model"].update(norm_type="rms", gated_ffn=True)
    rms = tmp_path / "rms.pt"
    save_checkpoint(payload, rms)
    runner = CliRunner()
    one_line_error(runner.invoke(app, ["export", str(rms), "-o", str(tmp_path / "hf"), "--format", "huggingface"]),
                   "norm_type: rms", "gated_ffn: true")
    misfit = (f"{rms}: the weights do not fit the recipe's model section: it lacks 8",
              "encoder_layers.0.feed_forward.w3.weight", "it has no place for")
    for fmt in ("ctranslate2", "onnx"):
        one_line_error(runner.invoke(app, ["export", str(rms), "-o", str(tmp_path / fmt), "--format", fmt]), *misfit)
    one_line_error(runner.invoke(app, ["translate", "-c", str(rms), "-i", str(TINY_DATA / "valid.en"), "-o",
                                       str(tmp_path / "out.de")]), *misfit)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rms.pt"]


def test_the_guided_alignment_layer_keeps_the_relative_position_biases():
    """Guided alignment reads one decoder layer's attention: that layer's output must be the one
    the plain pass computes, biases and all."""
    torch.manual_seed(0)
    model = Transformer(ModelConfig(**T5_LAYOUT), 40, 40).eval()
    model.alignment_heads = (1, 2)
    src, tgt = torch.tensor([[5, 6, 7, 3]]), torch.tensor([[2, 8, 9, 10]])
    memory, src_mask = model.encode(src)
    hidden, attention = model.decode(tgt, memory, src_mask, guided=True)
    assert torch.allclose(hidden, model.decode(tgt, memory, src_mask), atol=1e-6)
    assert attention.shape == (1, 2, 4, 4)
