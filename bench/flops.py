"""FLOPs of the Transformer, counted from its shapes (a multiply-add is 2 FLOPs).

Linear layers cost the same per token whatever the sentence, so they are counted per token; the
attention scores (Q·Kᵀ) and weighted sums (A·V) grow with the lengths, so they are counted per
sentence pair. Model FLOPs count real tokens only: padding is work the hardware does, not work
the model needs, so it lowers MFU instead of raising it. The decoder's causal self-attention is
counted in full (T² per layer), as a dense kernel computes it.
"""

from collections.abc import Iterable

from nmt.config import ModelConfig


def encoder_flops_per_source_token(cfg: ModelConfig) -> int:
    """Forward: self-attention q,k,v,out + feed-forward per encoder layer, and the decoder's
    cross-attention k,v projections of each source token."""
    d, ff = cfg.d_model, cfg.d_ff
    per_layer = 2 * (4 * d * d + 2 * d * ff)
    return cfg.encoder_layers * per_layer + cfg.decoder_layers * 2 * (2 * d * d)


def decoder_flops_per_target_token(cfg: ModelConfig, vocab: int) -> int:
    """Forward: self-attention q,k,v,out + cross-attention q,out + feed-forward, and the output layer."""
    d, ff = cfg.d_model, cfg.d_ff
    per_layer = 2 * (4 * d * d + 2 * d * d + 2 * d * ff)
    return cfg.decoder_layers * per_layer + 2 * d * vocab


def attention_flops(cfg: ModelConfig, source_length: int, target_length: int) -> int:
    """Forward: Q·Kᵀ and A·V (2 · L_q · L_k · d each) of every attention of one sentence pair."""
    s, t = source_length, target_length
    return 4 * cfg.d_model * (cfg.encoder_layers * s * s + cfg.decoder_layers * (t * t + t * s))


def training_flops(cfg: ModelConfig, vocab: int, source_tokens: int, target_tokens: int) -> int:
    """Linear layers only, forward + backward ≈ 3 × forward (the peers' convention)."""
    return 3 * (source_tokens * encoder_flops_per_source_token(cfg)
                + target_tokens * decoder_flops_per_target_token(cfg, vocab))


def forward_flops(cfg: ModelConfig, vocab: int, pairs: Iterable[tuple[int, int]]) -> int:
    """All matmuls of one forward pass over (source length, target length) pairs (EOS/BOS included)."""
    total = 0
    for s, t in pairs:
        total += s * encoder_flops_per_source_token(cfg) + t * decoder_flops_per_target_token(cfg, vocab)
        total += attention_flops(cfg, s, t)
    return total


def model_flops_per_update(cfg: ModelConfig, vocab: int, pairs: Iterable[tuple[int, int]]) -> int:
    """Forward + backward (the backward pass costs twice the forward): the numerator of MFU."""
    return 3 * forward_flops(cfg, vocab, pairs)
