"""Matmul FLOPs of the Transformer per token, counted from its shapes (linear layers only, as the
peers' figures are: attention scores add a few percent at these sentence lengths)."""

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


def training_flops(cfg: ModelConfig, vocab: int, source_tokens: int, target_tokens: int) -> int:
    """Forward + backward ≈ 3 × forward."""
    return 3 * (source_tokens * encoder_flops_per_source_token(cfg)
                + target_tokens * decoder_flops_per_target_token(cfg, vocab))
