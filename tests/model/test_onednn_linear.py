"""Linear layers packed for oneDNN (nmt.model.onednn_linear): the same products as F.linear up to
the order of fp32 sums, in every shape a search gives them; anything with gradients or autocast
goes through F.linear; state dicts unchanged; large models left unpacked; a packed engine
translates as the unpacked model does."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from nmt.model import onednn_linear
from nmt.model.onednn_linear import PackedLinear, pack_for_cpu_inference, packed_linear, packed_weight
from tests.conftest import TINY_DATA

pytestmark = pytest.mark.skipif(not onednn_linear.available(), reason="this torch has no oneDNN")


def test_a_packed_product_equals_f_linear_for_any_rows_and_shape():
    torch.manual_seed(0)
    weight, bias = torch.randn(96, 40), torch.randn(96)
    packed = packed_weight(weight)
    for shape in ((1, 40), (37, 40), (400, 40), (3, 5, 40)):
        x = torch.randn(*shape)
        with torch.inference_mode():
            out = packed_linear(x, weight, bias, packed)
            assert out.shape == (*shape[:-1], 96)
            assert torch.allclose(out, F.linear(x, weight, bias), atol=1e-5, rtol=1e-5)
            assert torch.allclose(packed_linear(x, weight, None, packed), F.linear(x, weight), atol=1e-5, rtol=1e-5)


def test_gradients_and_autocast_take_f_linear():
    torch.manual_seed(0)
    layer = nn.Linear(16, 8)
    packed = PackedLinear(layer)
    x = torch.randn(4, 16, requires_grad=True)
    packed(x).sum().backward()
    expected = torch.autograd.grad(F.linear(x, layer.weight, layer.bias).sum(), x)[0]
    assert torch.equal(x.grad, expected) and layer.weight.grad is not None
    with torch.inference_mode():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            assert packed(x.detach()).dtype == torch.bfloat16  # autocast's cast, not oneDNN's fp32
        assert torch.allclose(packed(x.detach()), F.linear(x.detach(), layer.weight, layer.bias), atol=1e-6)


def test_packing_keeps_the_weights_and_their_names_and_leaves_other_modules():
    class WithLinears(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = nn.Linear(8, 8)
            self.inner = nn.Sequential(nn.Linear(8, 4, bias=False), nn.ReLU())
            self.wide = nn.Linear(4, 4).to(torch.float64)

    model = WithLinears()
    before = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    assert pack_for_cpu_inference(model) == 2  # the fp32 ones
    assert isinstance(model.first, PackedLinear) and isinstance(model.inner[0], PackedLinear)
    assert type(model.wide) is nn.Linear
    after = model.state_dict()
    assert list(after) == list(before) and all(torch.equal(after[k], before[k]) for k in before)


def test_a_model_past_the_size_limit_stays_unpacked(monkeypatch):
    """A packed weight is a second copy: past the limit a model keeps one copy and MKL's products."""
    model = nn.Sequential(nn.Linear(32, 32), nn.Linear(32, 32))
    size = sum(p.numel() * p.element_size() for p in model.parameters())
    monkeypatch.setattr(onednn_linear, "PACKING_LIMIT_BYTES", size - 1)
    assert pack_for_cpu_inference(model) == 0 and all(type(m) is nn.Linear for m in model)
    monkeypatch.setattr(onednn_linear, "PACKING_LIMIT_BYTES", size)
    assert pack_for_cpu_inference(model) == 2


def test_a_packed_engine_translates_as_the_unpacked_model_does(trained_tiny):
    """The torch engine packs its model on a CPU: the same n-best, scores within 1e-4, as the same
    checkpoint's model with F.linear, in beam search, greedily and with 3-best lists."""
    from nmt.checkpoint import open_checkpoint
    from nmt.decode.engines.torch_engine import Translator, _model_of, load
    from nmt.decode.translate import decode_settings, translate_lines

    checkpoint = open_checkpoint([trained_tiny.out / "checkpoints" / "best.pt"])
    packed = load(checkpoint, torch.device("cpu"))
    assert not any(type(m) is nn.Linear for m in packed.model.modules()) and packed.model.packed_output is not None
    model, src_sp, tgt_sp = _model_of(checkpoint)
    plain = Translator(model.eval(), checkpoint.recipe, src_sp, tgt_sp, torch.device("cpu"))
    lines = (TINY_DATA / "valid.en").read_text(encoding="utf-8").splitlines()
    for settings in ([], ["decode.beam_size=1"], ["decode.nbest=3"]):
        cfg = decode_settings(checkpoint.recipe, None, {}, settings)
        found, expected = translate_lines(packed, lines, cfg), translate_lines(plain, lines, cfg)
        assert [[h.tokens for h in n] for n in found] == [[h.tokens for h in n] for n in expected], settings
        for n_found, n_expected in zip(found, expected):
            for a, b in zip(n_found, n_expected):
                assert a.score == pytest.approx(b.score, abs=1e-4)
