"""The layers' LayerNorm under autocast (nmt.model.layer_norm): its output in bf16, computed in fp32;
pre-LN models bit for bit as with torch's own LayerNorm, post-LN ones with a bf16 residual stream."""

import copy

import torch

from nmt.config import ModelConfig
from nmt.model.layer_norm import LayerNorm
from nmt.model.transformer import Transformer

VOCAB = 40


def model_and_batch(norm: str, seed: int = 0):
    torch.manual_seed(seed)
    cfg = ModelConfig(encoder_layers=2, decoder_layers=2, d_model=32, heads=4, d_ff=64, dropout=0.0,
                      max_positions=64, norm=norm)
    model = Transformer(cfg, VOCAB, VOCAB)
    src = torch.randint(4, VOCAB, (3, 7))
    tgt = torch.randint(4, VOCAB, (3, 6))
    src[0, 5:] = 0  # padding in one row of each side
    tgt[1, 4:] = 0
    positions = (tgt.flatten() != 0).nonzero().squeeze(1)
    targets = torch.randint(4, VOCAB, (positions.numel(),))
    return model, (src, tgt, positions, targets, 0.1)


def with_torchs_layer_norm(model: Transformer) -> Transformer:
    """A copy whose layers' norms are torch's own nn.LayerNorm, used as autocast uses it."""
    other = copy.deepcopy(model)
    for module in other.modules():
        if isinstance(module, LayerNorm):
            module.__class__ = torch.nn.LayerNorm
    return other


def loss_and_gradients(model, batch, bf16: bool = True):
    """As an update runs them: the summed loss's gradient scaled (by 1 / the update's tokens)."""
    model.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        loss = model(*batch)
    (loss * 0.0371).backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters()]


def test_its_output_is_autocasts_dtype_computed_in_fp32():
    torch.manual_seed(0)
    norm = LayerNorm(16)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-0.5, 0.5)
    x = torch.randn(5, 16) * 4 + 2
    by_hand = (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    by_hand = by_hand * norm.weight + norm.bias
    assert torch.allclose(norm(x), by_hand, atol=1e-5) and norm(x).dtype == torch.float32  # no autocast: as ever
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = norm(x)
        from_bf16 = norm(x.to(torch.bfloat16))
    assert low.dtype == from_bf16.dtype == torch.bfloat16
    assert torch.equal(low, by_hand.to(torch.bfloat16)) or (low.float() - by_hand).abs().max() <= 2 ** -7 * by_hand.abs().max()
    fp32_of_rounded = torch.nn.functional.layer_norm(x.to(torch.bfloat16).float(), (16,), norm.weight, norm.bias)
    assert torch.equal(from_bf16, fp32_of_rounded.to(torch.bfloat16))  # statistics in fp32, not bf16


def test_pre_ln_models_train_bit_for_bit_as_with_torchs_layer_norm():
    """With pre-LN a norm's output only feeds linear layers, which round it to bf16 anyway: the
    loss and every gradient are equal, not merely close."""
    model, batch = model_and_batch("pre")
    loss, grads = loss_and_gradients(model, batch)
    reference = with_torchs_layer_norm(model)
    ref_loss, ref_grads = loss_and_gradients(reference, batch)
    assert torch.equal(loss, ref_loss)
    for (name, _), a, b in zip(model.named_parameters(), grads, ref_grads):
        assert torch.equal(a, b), name


def median_relative_error(grads: list, truth: list) -> float:
    return torch.tensor([((a - b).norm() / b.norm()).item() for a, b in zip(grads, truth)]).median().item()


def test_post_ln_keeps_its_residual_stream_in_bf16_and_its_gradients_near_fp32s():
    """The residual stream between post-LN layers is bf16, its additions in fp32. Rounding it once
    per sublayer costs next to nothing: against the fp32 model's, the gradients are about as far
    as bf16's own with an fp32 stream."""
    model, batch = model_and_batch("post")
    layer_outputs = []
    for layer in [*model.encoder_layers, *model.decoder_layers]:
        layer.register_forward_hook(lambda module, args, out: layer_outputs.append(out.dtype))
    loss, grads = loss_and_gradients(model, batch)
    assert layer_outputs == [torch.bfloat16] * 4
    layer_outputs.clear()
    reference = with_torchs_layer_norm(model)
    ref_loss, ref_grads = loss_and_gradients(reference, batch)
    assert layer_outputs == [torch.float32] * 4  # torch's LayerNorm keeps the fp32 the embeddings start
    true_loss, true_grads = loss_and_gradients(model, batch, bf16=False)
    assert not torch.equal(loss, ref_loss)  # a change, and a small one
    assert (loss - true_loss).abs() <= 2e-3 * true_loss.abs()
    ours, torchs = median_relative_error(grads, true_grads), median_relative_error(ref_grads, true_grads)
    assert ours < 0.04 and ours < 1.5 * torchs
