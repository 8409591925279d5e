"""A Transformer built around given weights (nmt.model.from_weights): what `Transformer(...)` then
`load_state_dict` gives, computed alike, but holding the given tensors themselves, with no random
weights drawn first; every layout's tensors set, none left on the meta device."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from nmt.config import ModelConfig
from nmt.errors import NmtError
from nmt.model.from_weights import check_weights, transformer_from_weights, unfilled_transformer
from nmt.model.transformer import Transformer

SMALL = dict(encoder_layers=2, decoder_layers=2, d_model=16, heads=2, d_ff=32, dropout=0.0, max_positions=32)
LAYOUTS = {
    "paper": {},
    "separate vocabularies, untied output": dict(share_embeddings=False, tie_output=False),
    "fairseq sinusoid, pre-LN": dict(positions="fairseq", norm="pre"),
    "learned positions, embedding norm": dict(positions="learned", embedding_norm=True, norm="pre"),
    "T5": dict(positions="relative", relative_buckets=8, relative_max_distance=16, norm_type="rms", gated_ffn=True,
               activation="gelu_tanh", bias=False, head_dim=6, scale_embeddings=False, norm="pre", tie_output=False),
}


def _pair(cfg: ModelConfig, vocab: int) -> tuple[Transformer, dict[str, torch.Tensor]]:
    torch.manual_seed(0)
    model = Transformer(cfg, vocab, vocab).eval()
    return model, {name: t.clone() for name, t in model.state_dict().items()}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_model_computes_what_load_state_dict_gives_and_holds_the_given_tensors(layout):
    cfg = ModelConfig(**SMALL, **LAYOUTS[layout])
    reference, weights = _pair(cfg, 40)
    model = transformer_from_weights(cfg, 40, 40, weights).eval()

    src, tgt = torch.randint(4, 40, (3, 9)), torch.randint(4, 40, (3, 7))
    with torch.no_grad():
        assert torch.equal(model(src, tgt), reference(src, tgt))
    assert not any(t.is_meta for t in [*model.parameters(), *model.buffers()])
    held = {weights[name].data_ptr() for name in weights}
    assert all(p.data_ptr() in held for p in model.parameters())  # the given tensors, not copies
    assert (model.src_embed.tokens is model.tgt_embed.tokens) == cfg.share_embeddings
    assert (model.output_proj is None) == cfg.tie_output
    assert all(p.requires_grad for p in model.parameters())
    model.train()
    model(src, tgt).sum().backward()
    assert all(p.grad is not None for p in model.parameters())


def test_weights_stored_in_another_precision_are_cast_to_the_models():
    cfg = ModelConfig(**SMALL)
    reference, weights = _pair(cfg, 40)
    model = transformer_from_weights(cfg, 40, 40, {name: t.bfloat16() for name, t in weights.items()})
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, weights[name].bfloat16().float()), name


def test_weights_that_do_not_fit_are_one_line_errors_naming_their_file():
    """A weight missing, one left over, one of another shape: an NmtError of one line naming the
    file and the weight, from the builder and (names only) from check_weights."""
    cfg = ModelConfig(**SMALL)
    _, weights = _pair(cfg, 40)
    missing = dict(weights)
    del missing["decoder_layers.1.feed_forward.w2.weight"]
    source = Path("model.pt")
    cases = [(missing, "it lacks 1 (decoder_layers.1.feed_forward.w2.weight)"),
             (weights | {"extra.weight": torch.zeros(2)}, "it has no place for 1 (extra.weight)"),
             (weights | {"decoder_layers.1.feed_forward.w2.weight": torch.zeros(3)},
              "size mismatch for decoder_layers.1.feed_forward.w2.weight")]
    for given, problem in cases:
        readers = [lambda: transformer_from_weights(cfg, 40, 40, given, source)]
        if not problem.startswith("size"):  # check_weights reads the names only
            readers.append(lambda: check_weights(cfg, given, source))
        for read in readers:
            with pytest.raises(NmtError) as raised:
                read()
            message = str(raised.value)
            assert message.startswith("model.pt: the weights do not fit the recipe's model section")
            assert problem in message and "\n" not in message
    check_weights(cfg, weights, source)  # the model's own weights fit


def test_no_initialiser_runs_and_each_is_restored_after(monkeypatch):
    """No random weights are drawn (on the meta device `normal_` alone imports torch._dynamo, a
    second of every `nmt translate`'s start), and torch.nn.init is as it was afterwards."""
    cfg = ModelConfig(**SMALL, **LAYOUTS["T5"])
    _, weights = _pair(cfg, 40)

    def drawn(tensor, *args, **kwargs):
        raise AssertionError("an initialiser ran")

    for name in ("normal_", "xavier_uniform_", "kaiming_uniform_", "uniform_", "zeros_"):
        monkeypatch.setattr(torch.nn.init, name, drawn)
    transformer_from_weights(cfg, 40, 40, weights)
    assert torch.nn.init.normal_ is drawn and torch.nn.init.zeros_ is drawn


def test_a_model_built_under_a_device_context_holds_every_tensor_there():
    """What building on a GPU (bench.gpu draws a model's weights where it runs) needs of every
    layout: no parameter or buffer made on a fixed device; the meta device stands in for the GPU."""
    for layout in LAYOUTS.values():
        with torch.device("meta"):
            model = Transformer(ModelConfig(**(SMALL | layout)), 40, 40)
        assert [name for name, t in [*model.named_parameters(), *model.named_buffers()] if not t.is_meta] == []


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_an_unfilled_model_draws_nothing_and_once_loaded_computes_as_the_drawn_one(layout):
    """A fine-tune's model (every weight loaded next from its parent): no random number drawn, its
    tensors allocated where it runs; once the weights are loaded it is the model `Transformer(...)`
    and `load_state_dict` give, the buffers no state dict holds (the sinusoid tables) included."""
    cfg = ModelConfig(**SMALL, **LAYOUTS[layout])
    reference, weights = _pair(cfg, 40)
    rng = torch.get_rng_state()
    model = unfilled_transformer(cfg, 40, 40, torch.device("cpu"))
    assert torch.equal(torch.get_rng_state(), rng)  # nothing drawn
    assert not any(t.is_meta for t in [*model.parameters(), *model.buffers()])
    assert list(model.state_dict()) == list(reference.state_dict())
    model.load_state_dict(weights)
    for (name, tensor), (_, expected) in zip(model.named_buffers(), reference.named_buffers(), strict=True):
        assert torch.equal(tensor, expected), name
    src, tgt = torch.randint(4, 40, (3, 9)), torch.randint(4, 40, (3, 7))
    with torch.no_grad():
        assert torch.equal(model.eval()(src, tgt), reference(src, tgt))
    assert len(list(model.parameters())) == len(list(reference.parameters()))  # tied weights stay tied
    assert all(t.is_meta for t in unfilled_transformer(cfg, 40, 40, torch.device("meta")).state_dict().values())
