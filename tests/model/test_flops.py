"""The FLOP count behind MFU: by hand on a tiny shape, and against torch's own counter on the model."""

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from nmt.model.flops import forward_flops, model_flops_per_update
from nmt.config import ModelConfig
from nmt.model.transformer import Transformer


def test_flops_of_a_tiny_shape_by_hand():
    cfg = ModelConfig(encoder_layers=1, decoder_layers=1, d_model=4, heads=2, d_ff=8)
    # One pair, source 2 tokens, target 3, vocabulary 10 (d = 4, d_ff = 8):
    # encoder per source token: 2·(4·4·4 q,k,v,out + 2·4·8 ffn) = 256, + cross-attention k,v 2·(2·16) = 64
    #   -> 320 · 2 tokens = 640
    # decoder per target token: 2·(4·16 self + 2·16 cross q,out + 2·32 ffn) = 320, + output 2·4·10 = 80
    #   -> 400 · 3 tokens = 1200
    # attention: 4·d·(enc 2·2 + dec self 3·3 + cross 3·2) = 16·19 = 304
    assert forward_flops(cfg, 10, [(2, 3)]) == 640 + 1200 + 304
    assert model_flops_per_update(cfg, 10, [(2, 3), (2, 3)]) == 3 * 2 * 2144


def test_flops_match_torch_flop_counter_on_the_model():
    cfg = ModelConfig(encoder_layers=2, decoder_layers=3, d_model=32, heads=4, d_ff=64, dropout=0.0)
    model = Transformer(cfg, 50, 50).eval()
    src = torch.randint(4, 50, (1, 7))  # one sentence: no padding, every position is real
    tgt = torch.randint(4, 50, (1, 5))
    # The math backend spells attention out as matmuls, which the counter sees (fused CPU kernels it does not).
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter, torch.no_grad():
        model(src, tgt)
    assert counter.get_total_flops() == forward_flops(cfg, 50, [(7, 5)])


def test_a_counted_update_equals_the_formula_and_frozen_embeddings_skip_what_hand_counting_says():
    """A whole update counted by torch's counter on fake tensors: with every weight trained, exactly
    `model_flops_per_update`. With the embeddings frozen (tied, so the output layer too) it skips
    the output weight's gradient, 2·d·V per target token, and the input gradient of each stack's
    first attention projection, whose input is the embeddings: 2·3d² per source and target token."""
    from functools import partial

    from nmt.model.flops import counted_training_flops, trained_work_share
    from nmt.train.freezing import freeze

    cfg = ModelConfig(encoder_layers=2, decoder_layers=2, d_model=32, heads=4, d_ff=64)
    d, vocab, rows, s, t = 32, 50, 3, 7, 5
    full = counted_training_flops(cfg, vocab, rows, s, t)
    assert full == model_flops_per_update(cfg, vocab, [(s, t)] * rows)
    frozen = counted_training_flops(cfg, vocab, rows, s, t, partial(freeze, names=["embeddings"]))
    assert full - frozen == 2 * d * vocab * rows * t + 2 * 3 * d * d * rows * (s + t)
    assert trained_work_share(cfg, vocab, partial(freeze, names=["embeddings"]), s, t, rows) == frozen / full


def test_lora_computes_the_forward_the_input_gradients_and_the_adapters_weight_gradients():
    """LoRA rank r on the attention's projections, counted against a count by hand: the forward with
    the adapters; the attention's backward; every frozen weight's input gradient but those of each
    stack's first attention projection (its input is the frozen embeddings), and no frozen weight's
    gradient; the adapters' weight gradients (their forward's FLOPs again), B's input gradients, and
    A's but in those first projections. On NLLB-200 3.3B's shape this is 0.67 of the full update."""
    from nmt.model.flops import attention_flops, counted_training_flops, forward_flops
    from nmt.config import TrainConfig
    from nmt.train.freezing import adapt_with_lora

    d, ff, vocab, r, rows, s, t = 32, 64, 50, 4, 3, 7, 5
    cfg = ModelConfig(encoder_layers=1, decoder_layers=1, d_model=d, heads=4, d_ff=ff)
    S, T = rows * s, rows * t  # source and target tokens
    counted = counted_training_flops(cfg, vocab, rows, s, t, lambda model: adapt_with_lora(model, TrainConfig(lora_rank=r)))
    # an adapter on an in→out projection: 2·r·(in + out) per token. Per source token: encoder qkv
    # (d→3d) 8rd, out 4rd, the decoder's cross-attention kv (d→2d) 6rd; per target token: qkv 8rd,
    # out, cross q and cross out 4rd each
    adapters = 18 * r * d * S + 20 * r * d * T
    # frozen input gradients, 2·in·out per token: encoder out 2d², w1 and w2 2·d·ff each, cross kv
    # 4d²; decoder out, cross q, cross out 2d² each, w1, w2, the output layer 2·d·V (no qkv)
    frozen_inputs = S * (6 * d * d + 4 * d * ff) + T * (6 * d * d + 4 * d * ff + 2 * d * vocab)
    # B's input gradients 2·r·out (as above: 6rd, 2rd, 4rd; 6rd, 2rd, 2rd, 2rd), A's 2·r·in (no qkv)
    adapter_inputs = S * (12 + 4) * r * d + T * (12 + 6) * r * d
    forward = forward_flops(cfg, vocab, [(s, t)] * rows) + adapters
    assert counted == forward + 2 * rows * attention_flops(cfg, s, t) + frozen_inputs + adapters + adapter_inputs


def test_the_flops_of_arrays_of_lengths_are_those_of_the_pairs():
    import numpy as np

    from nmt.model.flops import training_flops_of_pairs

    cfg = ModelConfig(encoder_layers=2, decoder_layers=3, d_model=32, heads=4, d_ff=64)
    rng = np.random.default_rng(0)
    source, target = rng.integers(1, 60, 50), rng.integers(1, 60, 50)
    assert training_flops_of_pairs(cfg, 70, source, target) == model_flops_per_update(cfg, 70, zip(source.tolist(), target.tolist()))


def test_the_formula_counts_every_layout_as_torchs_counter_does():
    """The T5 layout's gated feed-forward (three matrices) and head width apart from d_model / heads
    included: for each layout nmt builds, a whole update counted on the model equals the formula."""
    from nmt.model.flops import counted_training_flops
    from tests.model.test_from_weights import LAYOUTS, SMALL

    for name, layout in LAYOUTS.items():
        cfg = ModelConfig(**SMALL, **layout)
        assert counted_training_flops(cfg, 40, 2, 9, 7) == model_flops_per_update(cfg, 40, [(9, 7)] * 2), name
