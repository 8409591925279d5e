"""autocast_off (nmt.model.precision): a block without autocast inside an autocast region, as
torch.autocast(device, enabled=False) makes one, at less Python cost in eager mode."""

import pytest
import torch
import torch.nn.functional as F

from nmt.decode.translate import decode_settings, translate_lines
from nmt.model import layer_norm, matmul_attention, onednn_linear
from nmt.model.layer_norm import LayerNorm
from nmt.model.precision import autocast_off


def test_the_block_runs_in_fp32_and_autocast_is_as_it_was_after_it():
    x, w = torch.randn(3, 8), torch.randn(5, 8)
    fp32 = F.linear(x, w)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert F.linear(x, w).dtype == torch.bfloat16
        with autocast_off("cpu"):
            inside = F.linear(x, w)
            with autocast_off("cpu"):  # nested: still off, and off again after the inner block
                pass
            assert not torch.is_autocast_enabled("cpu")
        assert inside.dtype == torch.float32 and torch.equal(inside, fp32)
        assert torch.is_autocast_enabled("cpu") and torch.get_autocast_dtype("cpu") == torch.bfloat16
        assert F.linear(x, w).dtype == torch.bfloat16
        with pytest.raises(RuntimeError), autocast_off("cpu"):
            raise RuntimeError("inside the block")
        assert torch.is_autocast_enabled("cpu")  # restored after an exception too
    with autocast_off("cpu"):  # outside autocast: nothing to turn off, and nothing turned on after
        assert F.linear(x, w).dtype == torch.float32
    assert not torch.is_autocast_enabled("cpu")


def test_compiled_it_is_torch_autocast_in_one_graph():
    norm = LayerNorm(8)
    x, w = torch.randn(4, 8), torch.randn(6, 8)

    def forward(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return F.linear(norm(x), w)

    compiled = torch.compile(forward, fullgraph=True, backend="eager")  # a graph break would raise
    out = compiled(x)
    assert out.dtype == torch.bfloat16 and torch.equal(out, forward(x))


def test_bf16_decoding_finds_what_it_found_with_torch_autocast(trained_tiny, monkeypatch):
    """The same n-best lists and scores, bit for bit, as with torch.autocast(enabled=False) in each
    place that pauses autocast: the layer norms, the fp32 products, a step's attention; with every
    product in bf16 and with the small ones in fp32."""
    from nmt.checkpoint import open_checkpoint
    from nmt.decode.engines.torch_engine import load
    from tests.conftest import TINY_DATA

    checkpoint = open_checkpoint([trained_tiny.out / "checkpoints" / "best.pt"])
    translator = load(checkpoint, torch.device("cpu"))
    lines = (TINY_DATA / "valid.en").read_text(encoding="utf-8").splitlines()
    cfg = decode_settings(checkpoint.recipe, None, {}, ["decode.precision=bf16", "decode.nbest=2"])

    def n_best(every_product_in_bf16: bool):
        with monkeypatch.context() as patch:
            if every_product_in_bf16:
                patch.setattr(onednn_linear, "worth_bf16_product", lambda rows, weight_elements: True)
            return [[(h.tokens, h.score) for h in n] for n in translate_lines(translator, lines, cfg)]

    found = {every: n_best(every) for every in (True, False)}
    for module in (layer_norm, matmul_attention, onednn_linear):
        monkeypatch.setattr(module, "autocast_off", lambda device: torch.autocast(device, enabled=False))
    for every in (True, False):
        assert n_best(every) == found[every], every
    assert found[True] != found[False]  # the bf16 products changed some score
