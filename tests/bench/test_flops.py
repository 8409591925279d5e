"""The FLOP count behind MFU: by hand on a tiny shape, and against torch's own counter on the model."""

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from bench.flops import forward_flops, model_flops_per_update
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
