"""Linear layers through oneDNN (nmt.model.onednn_linear). Packed for translation: the same
products as F.linear up to the order of fp32 sums, in every shape a search gives them, and
oneDNN's calls only where they pay (worth_packed_product); anything
with gradients or autocast goes through F.linear; state dicts unchanged; large models left
unpacked; a packed engine translates as the unpacked model does. In training: the products and
gradients of F.linear, through oneDNN's operators and no MKL product (an operator census), bf16
left to F.linear, and a training run that follows the one through F.linear."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from nmt.model import onednn_linear
from nmt.model.onednn_linear import (OneDnnLinear, PackedLinear, PackedWeight, pack_for_cpu_inference, packed_linear,
                                     padded_rows, product, trainable_linear, use_onednn_for_training)
from nmt.model.output_loss import output_layer_loss
from nmt.special_tokens import PAD
from tests.conftest import TINY_DATA, prepared_tiny
from tests.op_census import OperatorCensus

# F.linear's products and their gradients' (attention's batched products, aten.bmm, stay MKL's)
MKL_PRODUCTS = {"aten.mm.default", "aten.addmm.default"}
ONEDNN_PRODUCTS = {"mkldnn._linear_pointwise.default", "aten.mkldnn_linear_backward_weights.default"}

pytestmark = pytest.mark.skipif(not onednn_linear.available(), reason="this torch has no oneDNN")


def test_a_packed_product_equals_f_linear_for_any_rows_and_shape(monkeypatch):
    monkeypatch.setattr(onednn_linear, "worth_packed_product", lambda rows, weight_elements: True)
    torch.manual_seed(0)
    weight, bias = torch.randn(96, 40), torch.randn(96)
    packed, unbiased = PackedWeight(weight, bias), PackedWeight(weight, None)
    for shape in ((1, 40), (37, 40), (400, 40), (3, 5, 40)):
        x = torch.randn(*shape)
        with torch.inference_mode():
            out = packed_linear(x, weight, bias, packed)
            assert out.shape == (*shape[:-1], 96)
            assert torch.allclose(out, F.linear(x, weight, bias), atol=1e-5, rtol=1e-5)
            assert torch.allclose(packed_linear(x, weight, None, unbiased), F.linear(x, weight), atol=1e-5, rtol=1e-5)
            assert torch.allclose(product(x, packed.fp32, bias), out)


@pytest.mark.parametrize("rows, width, out_features, onednn", [
    (16, 128, 384, False), (1024, 128, 384, True),  # a small weight: only 16M multiply-adds pay for the call
    (256, 256, 256, True), (64, 256, 256, False),
    (1, 1024, 256, False), (2, 1024, 256, True),  # 2^18 weights: from 2 rows on
    (1, 128, 6000, True),  # an output layer, from one row
])
def test_packed_products_go_to_onednn_only_where_they_pay(rows, width, out_features, onednn):
    """A packed layer's product runs through oneDNN or, where its call would cost more than the
    arithmetic saves (worth_packed_product), through F.linear: an operator census of each."""
    layer = PackedLinear(nn.Linear(width, out_features))
    x = torch.randn(rows, width)
    with torch.inference_mode():
        operators = census_of_a_training_pass(lambda: layer(x))
        assert onednn_linear.worth_packed_product(rows, width * out_features) == onednn
        assert ("mkldnn._linear_pointwise.default" in operators) == onednn
        assert bool(operators & (MKL_PRODUCTS | {"aten.linear.default"})) != onednn  # (inference keeps aten.linear whole)
        assert torch.allclose(layer(x), F.linear(x, layer.weight, layer.bias), atol=1e-5, rtol=1e-5)


def test_gradients_and_autocast_take_f_linear():
    torch.manual_seed(0)
    layer = nn.Linear(16, 8)
    packed = PackedLinear(layer)
    x = torch.randn(4, 16, requires_grad=True)
    packed(x).sum().backward()
    expected = torch.autograd.grad(F.linear(x, layer.weight, layer.bias).sum(), x)[0]
    assert torch.equal(x.grad, expected) and layer.weight.grad is not None
    with torch.inference_mode():
        with torch.autocast("cpu", dtype=torch.float16):
            assert packed(x.detach()).dtype == torch.float16  # autocast's cast, not oneDNN's fp32
        assert torch.allclose(packed(x.detach()), F.linear(x.detach(), layer.weight, layer.bias), atol=1e-6)


@pytest.mark.parametrize("rows, width, out_features, in_bf16", [
    (400, 256, 1024, True), (2, 128, 8000, True),  # 2^21 multiply-adds and more: bf16 pays
    (16, 128, 384, False), (300, 64, 64, False),  # smaller: oneDNN's call would cost more than bf16 saves
])
def test_under_bf16_autocast_large_products_run_on_a_bf16_packed_weight_and_small_ones_in_fp32(
        rows, width, out_features, in_bf16):
    """bf16 translation on a CPU (decode.precision bf16): a product large enough
    (worth_bf16_product) runs in bf16 on a bf16 copy of the packed weight, made at the first
    such product and kept; a smaller one in fp32, as without autocast. An operator census of each,
    and the result against F.linear's in that precision."""
    torch.manual_seed(0)
    layer = PackedLinear(nn.Linear(width, out_features))
    x = torch.randn(rows, width)
    assert onednn_linear.worth_bf16_product(rows, width * out_features) == in_bf16
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
        operators = census_of_a_training_pass(lambda: layer(x))
        out = layer(x)
        if in_bf16:
            packed_bf16 = layer.packed.bf16()[0]
            assert layer(x) is not None and layer.packed.bf16()[0] is packed_bf16  # packed once
    if in_bf16:
        expected = F.linear(x.bfloat16(), layer.weight.bfloat16(), layer.bias.bfloat16())
        assert out.dtype == torch.bfloat16 and "mkldnn._linear_pointwise.default" in operators
        assert not operators & (MKL_PRODUCTS | {"aten.linear.default"})
        assert torch.allclose(out.float(), expected.float(), atol=2e-2, rtol=1e-2)
        assert not torch.allclose(out.float(), F.linear(x, layer.weight, layer.bias), atol=1e-4)  # not fp32's
    else:  # as without autocast: through oneDNN's fp32 packed weight where that pays
        assert out.dtype == torch.float32 and layer.packed._bf16 is None
        assert ("mkldnn._linear_pointwise.default" in operators) == onednn_linear.worth_packed_product(
            rows, width * out_features)
        assert torch.allclose(out, F.linear(x, layer.weight, layer.bias), atol=1e-5, rtol=1e-5)


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


def test_a_packed_engine_translates_as_the_unpacked_model_does(trained_tiny, monkeypatch):
    """The torch engine packs its model on a CPU: the same n-best, scores within 1e-4, as the same
    checkpoint's model with F.linear, in beam search, greedily and with 3-best lists (every product
    through oneDNN: the tiny model's are too small to go there otherwise)."""
    from nmt.checkpoint import open_checkpoint
    from nmt.decode.engines.torch_engine import Translator, _model_of, load
    from nmt.decode.translate import decode_settings, translate_lines

    checkpoint = open_checkpoint([trained_tiny.out / "checkpoints" / "best.pt"])
    packed = load(checkpoint, torch.device("cpu"))
    assert not any(type(m) is nn.Linear for m in packed.model.modules()) and packed.model.packed_output is not None
    model, src_sp, tgt_sp = _model_of(checkpoint)
    plain = Translator(model.eval(), checkpoint.recipe, src_sp, tgt_sp, torch.device("cpu"))
    lines = (TINY_DATA / "valid.en").read_text(encoding="utf-8").splitlines()
    monkeypatch.setattr(onednn_linear, "worth_packed_product", lambda rows, weight_elements: True)
    for settings in ([], ["decode.beam_size=1"], ["decode.nbest=3"]):
        cfg = decode_settings(checkpoint.recipe, None, {}, settings)
        found, expected = translate_lines(packed, lines, cfg), translate_lines(plain, lines, cfg)
        assert [[h.tokens for h in n] for n in found] == [[h.tokens for h in n] for n in expected], settings
        for n_found, n_expected in zip(found, expected):
            for a, b in zip(n_found, n_expected):
                assert a.score == pytest.approx(b.score, abs=1e-4)


@pytest.mark.parametrize("shape", [(1, 40), (37, 40), (3, 5, 40)])
@pytest.mark.parametrize("bias", [True, False])
def test_a_trainable_product_and_its_gradients_equal_f_linears(shape, bias):
    torch.manual_seed(0)
    weight, x = torch.randn(96, 40), torch.randn(*shape)
    b = torch.randn(96) if bias else None
    grad_output = torch.randn(*shape[:-1], 96)
    results = []
    for linear in (trainable_linear, F.linear):
        inputs = [t.clone().requires_grad_() for t in (x, weight) + ((b,) if bias else ())]
        out = linear(inputs[0], inputs[1], inputs[2] if bias else None)
        results.append([out, *torch.autograd.grad(out, inputs, grad_output)])
    for ours, expected in zip(*results):
        assert ours.shape == expected.shape and ours.is_contiguous()
        assert torch.allclose(ours, expected, atol=1e-5, rtol=1e-5)


def test_only_the_gradients_asked_for_are_computed():
    """A frozen weight gets none (train.freeze), an input that needs none gets none."""
    torch.manual_seed(0)
    weight, bias, x = torch.randn(8, 6), torch.randn(8, requires_grad=True), torch.randn(5, 6, requires_grad=True)
    trainable_linear(x, weight, bias).sum().backward()
    assert weight.grad is None and torch.allclose(x.grad, weight.sum(0).expand(5, 6), atol=1e-6)
    assert torch.allclose(bias.grad, torch.full((8,), 5.0))
    weight.requires_grad_()
    trainable_linear(x.detach(), weight, None).sum().backward()
    assert torch.allclose(weight.grad, x.detach().sum(0).expand(8, 6), atol=1e-5)


def census_of_a_training_pass(run) -> set[str]:
    with OperatorCensus(nn.Module()) as census:
        run()
    return set(census.operators)


def test_training_products_run_on_onednn_and_autocast_on_f_linear(monkeypatch):
    """fp32 forward and backward products of a layer through oneDNN, no MKL product among them; the
    output layer's three products too; under bf16 autocast, F.linear's products as before."""
    monkeypatch.setattr(onednn_linear, "MIN_TRAINING_WIDTH", 0)
    monkeypatch.setattr(onednn_linear, "MIN_OUTPUT_ELEMENTS", 0)
    torch.manual_seed(0)
    layer = OneDnnLinear(nn.Linear(16, 12))
    weight = torch.randn(30, 12, requires_grad=True)
    target = torch.randint(1, 30, (20,))
    target[3] = PAD
    x = torch.randn(20, 16, requires_grad=True)

    operators = census_of_a_training_pass(lambda: layer(x).sum().backward())
    assert ONEDNN_PRODUCTS <= operators and not operators & (MKL_PRODUCTS | {"aten.addmm_.default"})
    operators = census_of_a_training_pass(lambda: output_layer_loss(layer(x), weight, target, 0.1, rows=7).backward())
    assert ONEDNN_PRODUCTS <= operators and not operators & (MKL_PRODUCTS | {"aten.addmm_.default"})
    with torch.autocast("cpu", dtype=torch.bfloat16):
        operators = census_of_a_training_pass(lambda: output_layer_loss(layer(x), weight, target, 0.1).backward())
    assert not operators & ONEDNN_PRODUCTS and operators & MKL_PRODUCTS


@pytest.mark.parametrize("rows", [37, 13, None])
def test_the_output_loss_on_onednn_equals_pytorchs_with_its_chunks_rows_padded(rows, monkeypatch):
    """The fused output loss through oneDNN, chunks of 37 rows padded to padded_rows(37) = 38 with
    PAD targets (and 90 rows, the last chunk of 16, unpadded; 13 rows, none padded): the loss and
    both gradients of F.cross_entropy, PAD targets counting zero."""
    monkeypatch.setattr(onednn_linear, "MIN_OUTPUT_ELEMENTS", 0)
    assert padded_rows(37) == 38 and padded_rows(13) == 13
    torch.manual_seed(0)
    hidden, weight = torch.randn(90, 24), torch.randn(70, 24) * 0.3
    target = torch.randint(1, 70, (90,))
    target[[2, 40, 89]] = PAD
    h1, w1 = hidden.clone().requires_grad_(), weight.clone().requires_grad_()
    reference = F.cross_entropy(F.linear(h1, w1), target, ignore_index=PAD, label_smoothing=0.1, reduction="sum")
    (reference * 0.5).backward()
    h2, w2 = hidden.clone().requires_grad_(), weight.clone().requires_grad_()
    operators = census_of_a_training_pass(lambda: (output_layer_loss(h2, w2, target, 0.1, rows) * 0.5).backward())
    assert ONEDNN_PRODUCTS <= operators and not operators & (MKL_PRODUCTS | {"aten.addmm_.default"})
    assert output_layer_loss(hidden, weight, target, 0.1, rows).item() == pytest.approx(reference.item(), rel=1e-5)
    assert torch.allclose(h2.grad, h1.grad, atol=1e-5) and torch.allclose(w2.grad, w1.grad, atol=1e-5)
    assert not h2.grad[[2, 40, 89]].any()


def test_small_output_layers_keep_mkls_products():
    """An output layer of fewer than MIN_OUTPUT_ELEMENTS weights (64 wide over 1,000 pieces)
    computes as before; the demo's (128 wide over 6,000) through oneDNN."""
    assert onednn_linear.MIN_OUTPUT_ELEMENTS > 64 * 1000
    hidden, weight = torch.randn(20, 64, requires_grad=True), torch.randn(1000, 64, requires_grad=True)
    target = torch.randint(1, 1000, (20,))
    operators = census_of_a_training_pass(lambda: output_layer_loss(hidden, weight, target, 0.1).backward())
    assert not operators & ONEDNN_PRODUCTS and "aten.mm.default" in operators
    demo = torch.randn(20, 128, requires_grad=True), torch.randn(6000, 128, requires_grad=True)
    operators = census_of_a_training_pass(lambda: output_layer_loss(*demo, target, 0.1).backward())
    assert ONEDNN_PRODUCTS <= operators and not operators & (MKL_PRODUCTS | {"aten.addmm_.default"})


def test_use_onednn_for_training_keeps_parameters_and_their_names_and_small_layers():
    """Layers at least 256 wide on both sides go to oneDNN; narrower ones, whose products gain less
    than the calls cost, keep nn.Linear (MIN_TRAINING_WIDTH)."""
    model = nn.Sequential(nn.Linear(256, 256), nn.Sequential(nn.Linear(256, 512, bias=False)), nn.Linear(4, 4).double(),
                          nn.Linear(128, 384))
    parameters = dict(model.named_parameters())
    assert use_onednn_for_training(model) == 2
    assert isinstance(model[0], OneDnnLinear) and isinstance(model[1][0], OneDnnLinear)
    assert type(model[2]) is nn.Linear and type(model[3]) is nn.Linear  # fp64; 128 wide
    assert {name: id(p) for name, p in model.named_parameters()} == {name: id(p) for name, p in parameters.items()}
    assert pack_for_cpu_inference(model) == 3  # a trained model, turned to translation
    assert isinstance(model[0], PackedLinear) and isinstance(model[1][0], PackedLinear)


def test_training_on_onednn_follows_training_on_f_linear(tmp_path, monkeypatch):
    """A CPU run puts its layers on oneDNN (here every layer, however small), and
    train.cpu_linear=mkl keeps F.linear (no oneDNN product in an update); 6 updates of the tiny
    model give the same losses and weights either way, up to the order of fp32 sums."""
    from nmt.data.batching import epoch_batches
    from nmt.train.trainer import Trainer

    monkeypatch.setattr(onednn_linear, "MIN_TRAINING_WIDTH", 0)
    monkeypatch.setattr(onednn_linear, "MIN_OUTPUT_ELEMENTS", 0)
    runs = {}
    for library in ("onednn", "mkl"):
        trainer = Trainer(prepared_tiny(tmp_path / library, "train.valid_bleu_sentences=0", f"train.cpu_linear={library}"))
        layers = {type(m) for m in trainer.model.modules()}
        assert (OneDnnLinear in layers) == (library == "onednn") and (nn.Linear in layers) == (library == "mkl")
        batches = epoch_batches(trainer.train_data, trainer.train_cfg.max_tokens, trainer.train_cfg.seed, 0)[:6]
        with OperatorCensus(trainer.model) as census:
            losses = [trainer.train_step([batches[0]])[0].item()]
        assert bool(set(census.operators) & ONEDNN_PRODUCTS) == (library == "onednn")
        assert bool(set(census.operators) & MKL_PRODUCTS) == (library == "mkl")
        losses += [trainer.train_step([indices])[0].item() for indices in batches[1:]]
        runs[library] = losses, trainer.model.state_dict()
    (losses, weights), (expected_losses, expected_weights) = runs["onednn"], runs["mkl"]
    assert losses == pytest.approx(expected_losses, rel=1e-5)
    for name, tensor in expected_weights.items():
        ours = weights[name]
        if name.endswith(("qkv_proj.bias", "kv_proj.bias")):
            # Not the keys' biases: softmax ignores a shift shared by a query's scores, so their
            # gradient is 0 up to rounding, and Adam scales rounding noise up to a full step.
            n = tensor.numel()
            keys = slice(n // 3, 2 * n // 3) if "qkv" in name else slice(0, n // 2)
            ours, tensor = ours.clone(), tensor.clone()
            ours[keys] = tensor[keys] = 0
        assert torch.allclose(ours, tensor, atol=1e-5, rtol=1e-4), name


def test_products_are_computed_at_few_row_counts_and_padding_changes_no_row():
    """oneDNN builds a kernel per shape: rows are padded to 16 counts per power of two, at most
    1/16 more; a row's product is the same alone, padded, or among others."""
    padded = [padded_rows(rows) for rows in range(1, 5000)]
    assert all(rows <= p <= rows * 17 / 16 for rows, p in zip(range(1, 5000), padded))
    assert padded[:16] == list(range(1, 17)) and len(set(padded[1023:2047])) == 17  # 1,024 up to 2,048
    torch.manual_seed(0)
    x, weight, bias = torch.randn(1100, 48), torch.randn(40, 48), torch.randn(40)
    assert padded_rows(1100) == 1152 and padded_rows(37) == 38
    whole = product(x, weight, bias)
    assert whole.shape == (1100, 40) and whole.is_contiguous()
    assert torch.allclose(product(x[:37], weight, bias), whole[:37], atol=1e-6, rtol=0)
    assert torch.allclose(whole, F.linear(x, weight, bias), atol=1e-5, rtol=1e-5)
