"""FLOPs of the Transformer, counted from its shapes (a multiply-add is 2 FLOPs).

Linear layers cost the same per token whatever the sentence, so they are counted per token; the
attention scores (Q·Kᵀ) and weighted sums (A·V) grow with the lengths, so they are counted per
sentence pair. Model FLOPs count real tokens only: padding is work the hardware does, not work
the model needs, so it lowers MFU instead of raising it. The decoder's causal self-attention is
counted in full (T² per layer), as a dense kernel computes it. A run that trains only some
weights (LoRA, train.freeze) computes less: `trained_work_share` counts how much less.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import torch
from torch import nn

from nmt.config import ModelConfig


def _widths(cfg: ModelConfig) -> tuple[int, int, int]:
    """(d_model, the attention's inner width: heads × head width, the feed-forward's matrices' FLOPs
    per token and layer / 2: two d × d_ff matrices, three when gated)."""
    inner = cfg.heads * cfg.head_dim if cfg.head_dim else cfg.d_model
    return cfg.d_model, inner, (3 if cfg.gated_ffn else 2) * cfg.d_model * cfg.d_ff


def encoder_flops_per_source_token(cfg: ModelConfig) -> int:
    """Forward: self-attention q,k,v,out + feed-forward per encoder layer, and the decoder's
    cross-attention k,v projections of each source token."""
    d, inner, ffn = _widths(cfg)
    per_layer = 2 * (4 * d * inner + ffn)
    return cfg.encoder_layers * per_layer + cfg.decoder_layers * 2 * (2 * d * inner)


def decoder_flops_per_target_token(cfg: ModelConfig, vocab: int) -> int:
    """Forward: self-attention q,k,v,out + cross-attention q,out + feed-forward, and the output layer."""
    d, inner, ffn = _widths(cfg)
    per_layer = 2 * (4 * d * inner + 2 * d * inner + ffn)
    return cfg.decoder_layers * per_layer + 2 * d * vocab


def attention_flops(cfg: ModelConfig, source_length: int, target_length: int) -> int:
    """Forward: Q·Kᵀ and A·V (2 · L_q · L_k · inner width each) of every attention of one sentence
    pair (elementwise, given arrays of lengths)."""
    s, t = source_length, target_length
    return 4 * _widths(cfg)[1] * (cfg.encoder_layers * s * s + cfg.decoder_layers * (t * t + t * s))


def training_flops(cfg: ModelConfig, vocab: int, source_tokens: int, target_tokens: int) -> int:
    """Linear layers only, forward + backward ≈ 3 × forward (the peers' convention)."""
    return 3 * (source_tokens * encoder_flops_per_source_token(cfg)
                + target_tokens * decoder_flops_per_target_token(cfg, vocab))


def forward_flops(cfg: ModelConfig, vocab: int, pairs: Iterable[tuple[int, int]]) -> int:
    """All matmuls of one forward pass over (source length, target length) pairs (EOS/BOS included)."""
    lengths = np.array(list(pairs), dtype=np.int64).reshape(-1, 2)
    return _forward_flops_of_lengths(cfg, vocab, lengths[:, 0], lengths[:, 1])


def _forward_flops_of_lengths(cfg: ModelConfig, vocab: int, source: np.ndarray, target: np.ndarray) -> int:
    """forward_flops of pairs given as int64 arrays of their lengths."""
    linear = source.sum() * encoder_flops_per_source_token(cfg) + target.sum() * decoder_flops_per_target_token(cfg, vocab)
    return int(linear + attention_flops(cfg, source, target).sum())


def model_flops_per_update(cfg: ModelConfig, vocab: int, pairs: Iterable[tuple[int, int]]) -> int:
    """Forward + backward (the backward pass costs twice the forward): the numerator of MFU."""
    return 3 * forward_flops(cfg, vocab, pairs)


def training_flops_of_pairs(cfg: ModelConfig, vocab: int, source_lengths: np.ndarray, target_lengths: np.ndarray) -> float:
    """`model_flops_per_update` of pairs given as arrays of their lengths (EOS/BOS included), in
    one pass over the arrays: what a training run counts per update for its MFU."""
    source, target = source_lengths.astype(np.int64), target_lengths.astype(np.int64)
    return 3.0 * _forward_flops_of_lengths(cfg, vocab, source, target)


def counted_training_flops(cfg: ModelConfig, vocab: int, rows: int, source_length: int, target_length: int,
                           set_up: Callable[[nn.Module], object] | None = None) -> int:
    """torch's FLOP counter over one forward and backward of the model on `rows` pairs of these
    lengths, after `set_up(model)` (LoRA, train.freeze, as the run sets them up): the matmuls the
    run computes, the gradients it skips left out (a frozen weight's, an activation's where
    nothing before it trains). On fake tensors: shapes only, no memory and no arithmetic, so
    NLLB-200 3.3B's shape counts in seconds on any machine. Every weight trained and no padding,
    the count equals `model_flops_per_update` (tests/model/test_flops.py)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils.flop_counter import FlopCounterMode

    from nmt.model.transformer import Transformer

    def accumulated_product(self_shape, a_shape, b_shape, out_shape=None, **kwargs) -> int:
        return 2 * a_shape[0] * a_shape[1] * b_shape[1]

    with FakeTensorMode():
        model = Transformer(cfg, vocab, vocab)
        model.use_matmul_attention(True)  # attention as the matmuls the count knows (the fused kernels' FLOPs)
        if set_up:
            set_up(model)
        source = torch.full((rows, source_length), 4)  # ids 0-3 are PAD, UNK, BOS, EOS
        target = torch.full((rows, target_length), 4)
        # the fused output loss sums its weight gradient in place (addmm_), which the counter leaves out
        with FlopCounterMode(display=False, custom_mapping={torch.ops.aten.addmm_: accumulated_product}) as counter:
            loss = model(source, target, torch.arange(rows * target_length), target.reshape(-1), 0.0, None, None)
            loss.backward()
    return counter.get_total_flops()


def trained_work_share(cfg: ModelConfig, vocab: int, set_up: Callable[[nn.Module], object],
                       source_length: int, target_length: int, rows: int = 4) -> float:
    """The share of training every weight that a run training only some (`set_up`: LoRA,
    train.freeze) computes, counted at these lengths: its model FLOPs are this share of
    `model_flops_per_update`'s. Under LoRA about two thirds (the frozen weights' gradients skipped).
    The whole update is the formula's, which equals the counter's for every layout (tests)."""
    run = counted_training_flops(cfg, vocab, rows, source_length, target_length, set_up)
    return run / model_flops_per_update(cfg, vocab, [(source_length, target_length)] * rows)
