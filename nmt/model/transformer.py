"""The Transformer of "Attention Is All You Need" (Vaswani et al., 2017), module by module.

Section references are to the paper. Shapes: B batch, S source length, T target length,
D d_model, h heads, dh = D / h (model.head_dim where set), V vocabulary. T5's layout (an imported
MADLAD-400's: relative positions, RMSNorm, gated feed-forwards, no biases) is a set of model keys
(nmt.config.ModelConfig, docs/huggingface.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
import torch.utils.checkpoint
from torch import Tensor, nn

from nmt.config import ModelConfig
from nmt.data.batching import Packing
from nmt.special_tokens import BOS, EOS, PAD
from nmt.model.compiled_decoding import CompiledSteps, compiled_steps
from nmt.model.dropout import Dropout
from nmt.model.guided_alignment import guided_alignment_loss
from nmt.model.layer_norm import make_norm
from nmt.model.matmul_attention import (CPU_SOFTMAX_MIN_COLUMNS, attention_in_fp32, autocast_on_cpu, matmul_attention,
                                        step_attention, step_by_matmul)
from nmt.model.onednn_linear import PackedWeight, pack_for_cpu_inference, packed_linear, use_onednn_for_training
from nmt.model.output_loss import output_layer_loss
from nmt.model.packed_attention import dense_cross_mask, flex_attend, packed_masks, use_flex
from nmt.model.varlen_attention import KeySegments, key_padding_segments, varlen_attention
from nmt.model.relative_positions import RelativePositionBias


def sinusoid_table(d_model: int, max_positions: int, style: str, device: torch.device | None = None) -> Tensor:
    """PositionalEncoding's (max_positions, d_model) table, computed in float64 and kept in fp32."""
    if torch.device(device or torch.get_default_device()).type == "meta":
        # only its shape: the arithmetic on the meta device imports torch._dynamo, a second of start-up
        return torch.empty(max_positions, d_model, device=device)
    first = 2 if style == "fairseq" else 0
    position = torch.arange(first, first + max_positions, dtype=torch.float64, device=device).unsqueeze(1)
    if style == "fairseq":
        inv_freq = torch.exp(torch.arange(d_model // 2, dtype=torch.float64, device=device)
                             * (-math.log(10000.0) / (d_model // 2 - 1)))
    else:
        inv_freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64, device=device) * (-math.log(10000.0) / d_model))
    table = torch.zeros(max_positions, d_model, dtype=torch.float64, device=device)
    table[:, 0::2] = torch.sin(position * inv_freq)
    table[:, 1::2] = torch.cos(position * inv_freq)
    return table.float()


class PositionalEncoding(nn.Module):
    """Sinusoidal positions (3.5): PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(...).

    `style` "fairseq" is fairseq's variant (imported NLLB-200 and M2M-100 models): frequencies
    10000^(-i/(D/2 - 1)) and positions counted from 2 (its padding index + 1), kept interleaved."""

    def __init__(self, d_model: int, max_positions: int, style: str = "sinusoidal"):
        super().__init__()
        self.style = style
        self.register_buffer("table", sinusoid_table(d_model, max_positions, style), persistent=False)  # (max_positions, D)

    def remake_table(self, device: torch.device) -> None:
        """The table computed again on `device`: a model built on the meta device
        (nmt.model.from_weights) gets no table from its state dict."""
        self.table = sinusoid_table(self.table.size(1), self.table.size(0), self.style, device)

    def forward(self, length: int, offset: int = 0) -> Tensor:
        return positions_slice(self.table, length, offset)

    def rows(self, index: Tensor) -> Tensor:  # (L,) positions -> (L, D)
        return self.table.index_select(0, index)


class LearnedPositions(nn.Module):
    """A learned row per position (`model.positions: learned`, as mBART's, imported without its
    two unused leading rows): one table per side."""

    def __init__(self, d_model: int, max_positions: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(max_positions, d_model))

    def forward(self, length: int, offset: int = 0) -> Tensor:
        return positions_slice(self.weight, length, offset)

    def rows(self, index: Tensor) -> Tensor:
        return self.weight.index_select(0, index)


def positions_slice(table: Tensor, length: int, offset: int) -> Tensor:  # (length, D)
    if offset + length > table.size(0):
        raise ValueError(f"sequence of {offset + length} positions exceeds max_positions {table.size(0)}")
    return table[offset:offset + length]


class Embeddings(nn.Module):
    """Token embeddings scaled by sqrt(D), plus positions, then dropout (3.4, 3.5, 5.4); with
    `norm` (model.embedding_norm, mBART's layernorm_embedding) a LayerNorm before the dropout.
    T5's layout: `scale` False (model.scale_embeddings) and no `positions` (model.positions:
    relative, which the self-attentions add)."""

    def __init__(self, tokens: nn.Embedding, positions: nn.Module | None, dropout: float, norm: bool = False,
                 scale: bool = True):
        super().__init__()
        self.tokens = tokens
        self.positions = positions
        self.scale = math.sqrt(tokens.embedding_dim) if scale else 1.0
        self.norm = nn.LayerNorm(tokens.embedding_dim) if norm else nn.Identity()
        self.dropout = Dropout(dropout)

    def _scaled(self, ids: Tensor) -> Tensor:
        x = self.tokens(ids)
        return x if self.scale == 1.0 else x * self.scale

    def forward(self, ids: Tensor, offset: int = 0, positions: Tensor | None = None) -> Tensor:  # (B, L) -> (B, L, D)
        """`positions` (B, L): each token's own position (packed rows), instead of offset + column."""
        if self.positions is None:
            return self.dropout(self._scaled(ids))
        if positions is None:
            where = self.positions(ids.size(1), offset)
        else:
            where = self.positions.rows(positions.flatten()).view(*positions.shape, -1)
        return self.dropout(self.norm(self._scaled(ids) + where))

    def at_positions(self, ids: Tensor, positions: Tensor) -> Tensor:
        """ids (B, L) at the positions (L,) given as a tensor (the ONNX decoder's step), no dropout;
        without positions of their own (relative ones, which the self-attentions add), the tokens'."""
        if self.positions is None:
            return self._scaled(ids)
        return self.norm(self._scaled(ids) + self.positions.rows(positions))


def _split_heads(x: Tensor, heads: int) -> Tensor:  # (B, L, h·dh) -> (B, h, L, dh)
    b, length, d = x.shape
    return x.view(b, length, heads, d // heads).transpose(1, 2)


def _merge_heads(x: Tensor) -> Tensor:  # (B, h, L, dh) -> (B, L, D)
    b, h, length, dh = x.shape
    return x.transpose(1, 2).reshape(b, length, h * dh)


class SelfAttentionCache:
    """One decoder layer's past self-attention keys and values, (N, h, t, dh) each, for
    incremental decoding. A reorder of the rows (beam search keeping its best extensions,
    finished sentences dropped) is recorded, not carried out: the next `append` gathers the past
    rows straight into the tensor that also takes the new position, so a step copies the past
    once instead of twice (a reorder, then a concatenation)."""

    def __init__(self, keys: Tensor | None = None, values: Tensor | None = None, rows: Tensor | None = None):
        self.keys, self.values = keys, values
        self.rows = rows  # the past rows each row continues, in order; None: the rows as they are

    def select(self, rows: Tensor) -> "SelfAttentionCache":
        """The cache with its rows reordered (or dropped): `rows` indexes the current rows."""
        pending = rows if self.rows is None else self.rows.index_select(0, rows)
        return SelfAttentionCache(self.keys, self.values, pending)

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add one position, k and v (N, h, 1, dh); returns all keys and values (N, h, t+1, dh)."""
        if self.keys is None:  # no past: k and v already come in the rows' current order
            self.keys, self.values = k, v
        else:
            self.keys, self.values = self._gathered(self.keys, k), self._gathered(self.values, v)
        self.rows = None
        return self.keys, self.values

    def _gathered(self, past: Tensor, new: Tensor) -> Tensor:
        if torch.compiler.is_compiling():  # no out= in a graph; the compiler fuses the gather into the copy
            return torch.cat([past if self.rows is None else past.index_select(0, self.rows), new], dim=2)
        rows, heads, t, dh = new.size(0), past.size(1), past.size(2), past.size(3)
        out = past.new_empty((rows, heads, t + 1, dh))
        if self.rows is None:
            out[:, :, :t] = past
        elif past.requires_grad:  # out= has no gradient: gather, then copy
            out[:, :, :t] = past.index_select(0, self.rows)
        else:
            torch.index_select(past, 0, self.rows, out=out[:, :, :t])
        out[:, :, t:] = new
        return out


class MultiHeadAttention(nn.Module):
    """Multi-head scaled dot-product attention (3.2). Self-attention projects q, k, v in one matmul;
    encoder-decoder attention projects q from the decoder and k, v from the encoder output."""

    def __init__(self, d_model: int, heads: int, attention_dropout: float, self_attention: bool,
                 head_dim: int | None = None, bias: bool = True):
        super().__init__()
        self.heads = heads
        self.inner = heads * (head_dim or d_model // heads)  # h·dh: d_model unless model.head_dim says otherwise
        self.attention_dropout = attention_dropout
        self.self_attention = self_attention
        self.by_matmul = False  # train.attention: matmul (Transformer.use_matmul_attention)
        if self_attention:
            self.qkv_proj = nn.Linear(d_model, 3 * self.inner, bias=bias)
        else:
            self.q_proj = nn.Linear(d_model, self.inner, bias=bias)
            self.kv_proj = nn.Linear(d_model, 2 * self.inner, bias=bias)
        self.out_proj = nn.Linear(self.inner, d_model, bias=bias)

    def project_kv(self, memory: Tensor) -> tuple[Tensor, Tensor]:
        """Encoder-side keys and values, (B, h, S, dh) each: computed once per sentence."""
        k, v = self.kv_proj(memory).chunk(2, dim=-1)
        return _split_heads(k, self.heads), _split_heads(v, self.heads)

    def step_memory(self, memory: Tensor) -> tuple[Tensor, Tensor]:
        """project_kv laid out for step_cross: keys (B, h, dh, S) and values, contiguous."""
        k, v = self.project_kv(memory)
        if autocast_on_cpu(k):  # (attention_in_fp32)
            k, v = k.float(), v.float()
        return k.transpose(-1, -2).contiguous(), v.contiguous()

    def _attend(self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, causal: bool) -> Tensor:
        if isinstance(mask, KeySegments):  # key padding as FlashAttention's segments (train.attention: varlen)
            return self.out_proj(varlen_attention(q, k, v, mask))
        if mask is not None and not isinstance(mask, Tensor):  # a FlexAttention block mask (packed rows)
            return self.out_proj(_merge_heads(flex_attend(q, k, v, mask)))
        dropout = self.attention_dropout if self.training else 0.0
        if self.by_matmul and self.training:
            out = matmul_attention(q, k, v, mask, causal, dropout)
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout, is_causal=causal)
        return self.out_proj(_merge_heads(out))

    def forward(self, x: Tensor, mask: Tensor | None = None, causal: bool = False,
                kv: tuple[Tensor, Tensor] | None = None) -> Tensor:
        """x: (B, L, D). mask: (B, 1, 1, S) True where a key may be attended, or a packed batch's
        (B, 1, L, S) or block mask (nmt.model.packed_attention), or a float bias added to the
        scores (B or 1, h, L, S): relative positions, -inf where a key is hidden, or the key padding
        as variable-length segments (nmt.model.varlen_attention). kv:
        cross-attention keys/values."""
        if self.self_attention:
            q, k, v = (_split_heads(t, self.heads) for t in self.qkv_proj(x).chunk(3, dim=-1))
        else:
            q = _split_heads(self.q_proj(x), self.heads)
            k, v = kv
        return self._attend(q, k, v, mask, causal)

    def step_cross(self, x: Tensor, kv: tuple[Tensor, Tensor], bias: Tensor,
                   weights: list[Tensor] | None = None) -> Tensor:
        """Encoder-decoder attention for one new position of each of K beams per sentence.

        x: (B·K, 1, D), the K beams of a sentence in consecutive rows; kv: keys transposed
        (B, h, dh, S) and values (B, h, S, dh), contiguous, once per sentence (`step_memory`);
        bias: (B, 1, 1, S), 0 at real source tokens and -inf at padding. A sentence's beams share
        its encoder keys and values, so its K queries attend in one (K × S) matmul instead of K
        separate ones over K copies: K times less memory traffic per step. `weights`, if given,
        gets the attention probabilities (B, h, K, S) (the ONNX export's alignments).
        """
        k_t, v = kv
        sentences, heads, dh, _ = k_t.shape
        q = self.q_proj(x).view(sentences, -1, heads, dh).transpose(1, 2)  # (B, h, K, dh)
        with attention_in_fp32(q):
            q = q.to(k_t.dtype)
            scores = torch.matmul(q, k_t).mul_(dh ** -0.5).add_(bias)  # (B, h, K, S)
            probabilities = scores.softmax(dim=-1)
            if weights is not None:
                weights.append(probabilities)
            out = torch.matmul(probabilities, v)  # (B, h, K, dh)
        return self.out_proj(out.transpose(1, 2).reshape(x.size(0), x.size(1), -1))

    def weights(self, x: Tensor, kv: tuple[Tensor, Tensor], mask: Tensor) -> Tensor:
        """Encoder-decoder attention probabilities (B, h, T, S), written out (SDPA returns none)."""
        return self._scores(x, kv, mask, self.heads).softmax(dim=-1)

    def log_weights(self, x: Tensor, kv: tuple[Tensor, Tensor], mask: Tensor, heads: int) -> Tensor:
        """The log-probabilities (B, heads, T, S) of the first `heads` heads' encoder-decoder
        attention: what guided alignment trains (-inf at padding)."""
        return self._scores(x, kv, mask, heads).float().log_softmax(dim=-1)

    def _scores(self, x: Tensor, kv: tuple[Tensor, Tensor], mask: Tensor, heads: int) -> Tensor:
        q = _split_heads(self.q_proj(x), self.heads)[:, :heads]
        k = kv[0][:, :heads]
        scores = torch.matmul(q, k.transpose(-1, -2)) * q.size(-1) ** -0.5
        return scores.masked_fill(~mask, float("-inf"))

    def step(self, x: Tensor, cache: SelfAttentionCache, bias: Tensor | None = None) -> Tensor:
        """Self-attention for one new position: x (N, 1, D); appends its k, v to `cache`. bias:
        relative positions' (1, h, 1, t+1), or None."""
        q, k, v = (_split_heads(t, self.heads) for t in self.qkv_proj(x).chunk(3, dim=-1))
        if autocast_on_cpu(q):  # (attention_in_fp32)
            q, k, v = q.float(), k.float(), v.float()
        with attention_in_fp32(q):
            k, v = cache.append(k, v)  # (N, h, t+1, dh)
            if step_by_matmul(q, k.size(2)):
                out = step_attention(q, k, v, bias)
            else:  # the cache holds only the past: no mask needed
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        return self.out_proj(_merge_heads(out))


def _gelu_tanh(x: Tensor) -> Tensor:
    return F.gelu(x, approximate="tanh")


ACTIVATIONS = {"relu": F.relu, "swish": F.silu, "gelu": F.gelu, "gelu_tanh": _gelu_tanh}


class PositionwiseFeedForward(nn.Module):
    """FFN(x) = max(0, x W1 + b1) W2 + b2 (3.3); swish (SiLU) or GELU in place of the max on request.
    `gated` (model.gated_ffn, T5 v1.1's): FFN(x) = (act(x W1) * x W3) W2."""

    def __init__(self, d_model: int, d_ff: int, activation_dropout: float, activation: str = "relu",
                 gated: bool = False, bias: bool = True):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, bias=bias)
        self.w3 = nn.Linear(d_model, d_ff, bias=bias) if gated else None
        self.w2 = nn.Linear(d_ff, d_model, bias=bias)
        self.dropout = Dropout(activation_dropout)
        self.activation = ACTIVATIONS[activation]

    def forward(self, x: Tensor) -> Tensor:
        hidden = self.activation(self.w1(x))
        if self.w3 is not None:
            hidden = hidden * self.w3(x)
        return self.w2(self.dropout(hidden))


class SublayerConnection(nn.Module):
    """Residual connection around a sublayer with LayerNorm (3.1) and dropout on its output (5.4).
    post-LN (paper): LayerNorm(x + Dropout(f(x))); pre-LN: x + Dropout(f(LayerNorm(x))).
    Without `residual`, the x + is left out (model.residual_free_encoder_layer)."""

    def __init__(self, d_model: int, dropout: float, pre_norm: bool, residual: bool = True,
                 norm_type: str = "layer"):
        super().__init__()
        self.norm = make_norm(norm_type, d_model)
        self.dropout = Dropout(dropout)
        self.pre_norm = pre_norm
        self.residual = residual

    def sublayer_input(self, x: Tensor) -> Tensor:
        """What the sublayer is given: x, normalized first with pre-LN."""
        return self.norm(x) if self.pre_norm else x

    def forward(self, x: Tensor, sublayer) -> Tensor:
        if self.pre_norm:
            return (x if self.residual else 0.0) + self.dropout(sublayer(self.norm(x)))
        # The sum in fp32 whatever the stream's dtype (bf16 under autocast: nmt.model.layer_norm),
        # so that it is rounded once, where the norm writes it (a compiled step fuses all three).
        skip = x.float() if self.residual else 0.0
        return self.norm(skip + self.dropout(sublayer(x)))


def _attention(cfg: ModelConfig, self_attention: bool) -> MultiHeadAttention:
    return MultiHeadAttention(cfg.d_model, cfg.heads, cfg.attention_dropout, self_attention, cfg.head_dim, cfg.bias)


def _feed_forward(cfg: ModelConfig) -> PositionwiseFeedForward:
    return PositionwiseFeedForward(cfg.d_model, cfg.d_ff, cfg.activation_dropout, cfg.activation, cfg.gated_ffn,
                                   cfg.bias)


def _sublayer(cfg: ModelConfig, residual: bool = True) -> SublayerConnection:
    return SublayerConnection(cfg.d_model, cfg.dropout, cfg.norm == "pre", residual, cfg.norm_type)


class EncoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig, residual_attention: bool = True):
        super().__init__()
        self.self_attn = _attention(cfg, self_attention=True)
        self.feed_forward = _feed_forward(cfg)
        self.attn_sublayer = _sublayer(cfg, residual_attention)
        self.ff_sublayer = _sublayer(cfg)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.attn_sublayer(x, lambda y: self.self_attn(y, mask=src_mask))
        return self.ff_sublayer(x, self.feed_forward)


class DecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.self_attn = _attention(cfg, self_attention=True)
        self.cross_attn = _attention(cfg, self_attention=False)
        self.feed_forward = _feed_forward(cfg)
        self.self_sublayer = _sublayer(cfg)
        self.cross_sublayer = _sublayer(cfg)
        self.ff_sublayer = _sublayer(cfg)

    def forward(self, x: Tensor, memory: Tensor, src_mask: Tensor, guided_heads: int = 0,
                self_mask: Tensor | None = None, cross_mask: KeySegments | None = None) -> Tensor | tuple[Tensor, Tensor]:
        """The whole target x (B, T, D) at once: the causal mask hides the future (3.2.3). memory:
        the encoder's output (B, S, D), projected to keys and values here (inside the layer's own
        forward, where a sharded layer has its weights gathered); src_mask: (B, 1, 1, S), True at
        real source tokens. With `guided_heads` > 0, also the log-probabilities of the first
        guided_heads heads' encoder-decoder attention (B, guided_heads, T, S), for guided alignment.
        Packed rows (nmt.model.packed_attention): src_mask is the cross-attention mask and
        `self_mask` the self-attention's, in place of the causal mask; with relative positions,
        `self_mask` is their bias, -inf over the future (Transformer.decoder_self_bias).
        `cross_mask`: src_mask as variable-length segments for the cross-attention (train.attention:
        varlen); guided heads still read src_mask."""
        kv = self.cross_attn.project_kv(memory)
        x = self.self_sublayer(x, lambda y: self.self_attn(y, mask=self_mask, causal=self_mask is None))
        guided = None
        if guided_heads:
            guided = self.cross_attn.log_weights(self.cross_sublayer.sublayer_input(x), kv, src_mask, guided_heads)
        x = self.cross_sublayer(x, lambda y: self.cross_attn(y, mask=src_mask if cross_mask is None else cross_mask,
                                                             kv=kv))
        x = self.ff_sublayer(x, self.feed_forward)
        return x if guided is None else (x, guided)

    def step(self, x: Tensor, memory_kv: tuple[Tensor, Tensor], src_bias: Tensor, cache: SelfAttentionCache,
             self_bias: Tensor | None = None) -> Tensor:
        """One new position x (N, 1, D) of each row, attending to the past in `cache` (its keys and
        values appended) and to the encoder side laid out for stepping (`step_memory`, `step_cross`):
        memory_kv once per sentence, src_bias (B, 1, 1, S) 0 at real source tokens, -inf at padding.
        self_bias: relative positions' bias over the past (1, h, 1, t+1), or None."""
        x = self.self_sublayer(x, lambda y: self.self_attn.step(y, cache, self_bias))
        x = self.cross_sublayer(x, lambda y: self.cross_attn.step_cross(y, memory_kv, src_bias))
        return self.ff_sublayer(x, self.feed_forward)

    def cross_attention_weights(self, x: Tensor, kv: tuple[Tensor, Tensor], src_mask: Tensor,
                                self_mask: Tensor | None = None) -> Tensor:
        """The layer's encoder-decoder attention probabilities (B, h, T, S) for its input x (B, T, D)."""
        x = self.self_sublayer(x, lambda y: self.self_attn(y, mask=self_mask, causal=self_mask is None))
        return self.cross_attn.weights(self.cross_sublayer.sublayer_input(x), kv, src_mask)


@dataclass
class DecoderState:
    """What incremental decoding carries between steps, for N = B·K rows (K beams per sentence,
    in consecutive rows). The encoder side is kept once per sentence, shared by its beams."""

    memory_kv: list[tuple[Tensor, Tensor]]  # per decoder layer: encoder keys (B, h, dh, S), values (B, h, S, dh)
    src_bias: Tensor  # (B, 1, 1, S): 0 at real source tokens, -inf at padding
    self_cache: list[SelfAttentionCache]  # per decoder layer: past keys/values (N, h, t, dh)
    beams: int = 1  # rows per sentence
    length: int = 0  # positions decoded so far
    # A lexical shortlist (nmt.decode.shortlist): the target ids (C,) the batch may output, and
    # their rows of the output layer (C, D) and its bias (C,): -inf for PAD and BOS, 0 for the rest,
    # so no step has to mask them; None: the whole vocabulary.
    vocabulary: Tensor | None = None
    vocabulary_weight: Tensor | None = None
    vocabulary_bias: Tensor | None = None
    # Relative positions: the decoder's self-attention bias by distance, farthest first
    # (1, h, 1, max_positions), made once per batch; position t's row is its last t+1 columns.
    self_bias: Tensor | None = None
    # decode.compile: the decoder layers' part of a step runs compiled (nmt.model.compiled_decoding)
    compiled: bool = False

    def select(self, rows: Tensor, same_sentences: bool = False) -> "DecoderState":
        """Keep (and reorder) rows: beam reordering and dropping finished sentences. `rows` comes
        in blocks of `beams`, each block the beams of one sentence.

        same_sentences: every sentence stays (beams reordered within it), so the encoder side
        needs no change.
        """
        memory_kv, src_bias = self.memory_kv, self.src_bias
        if not same_sentences:
            sentences = rows.view(-1, self.beams)[:, 0] // self.beams
            memory_kv = [(k.index_select(0, sentences), v.index_select(0, sentences)) for k, v in memory_kv]
            src_bias = src_bias.index_select(0, sentences)
        return DecoderState(
            memory_kv=memory_kv, src_bias=src_bias,
            self_cache=[cache.select(rows) for cache in self.self_cache],
            beams=self.beams, length=self.length, vocabulary=self.vocabulary, vocabulary_weight=self.vocabulary_weight,
            vocabulary_bias=self.vocabulary_bias, self_bias=self.self_bias, compiled=self.compiled,
        )


def next_token_log_probs(logits: Tensor, forbid: Callable[[Tensor], None] | None = None,
                         shortlisted: bool = False) -> Tensor:
    """Logits (..., V) -> log-probabilities in fp32, PAD and BOS (never predicted) taken out
    before the softmax, as the CTranslate2 export's output bias does, so both engines score alike.
    `shortlisted`: the logits are a shortlist's (..., C), PAD and BOS already out (its output bias).
    `forbid` sets the fp32 logits of whatever else may not come next to -inf in place (a search's
    rules: EOS below min_len, repeated n-grams), before the one softmax."""
    logits = logits.float()
    if not shortlisted:
        logits[..., PAD] = float("-inf")
        logits[..., BOS] = float("-inf")
    if forbid is not None:
        forbid(logits)
    return F.log_softmax(logits, dim=-1)


def start_token_of(cfg: ModelConfig) -> int:
    """The token the decoder reads first (model.decoder_start)."""
    return EOS if cfg.decoder_start == "eos" else BOS


class Transformer(nn.Module):
    def __init__(self, cfg: ModelConfig, src_vocab_size: int, tgt_vocab_size: int):
        super().__init__()
        if cfg.share_embeddings and src_vocab_size != tgt_vocab_size:
            raise ValueError("shared embeddings need one joint vocabulary")
        self.cfg = cfg
        self.encoder_position_bias = self.decoder_position_bias = None
        if cfg.positions == "learned":  # a table per side
            src_positions, tgt_positions = (LearnedPositions(cfg.d_model, cfg.max_positions) for _ in range(2))
        elif cfg.positions == "relative":  # T5's: biases in the self-attentions, a table per side
            src_positions = tgt_positions = None
            self.encoder_position_bias, self.decoder_position_bias = (
                RelativePositionBias(cfg.relative_buckets, cfg.heads, cfg.relative_max_distance, bidirectional)
                for bidirectional in (True, False))
        else:  # one fixed table, shared
            src_positions = tgt_positions = PositionalEncoding(cfg.d_model, cfg.max_positions, cfg.positions)
        tgt_tokens = nn.Embedding(tgt_vocab_size, cfg.d_model, padding_idx=PAD)
        src_tokens = tgt_tokens if cfg.share_embeddings else nn.Embedding(src_vocab_size, cfg.d_model, padding_idx=PAD)
        self.src_embed = Embeddings(src_tokens, src_positions, cfg.dropout, cfg.embedding_norm, cfg.scale_embeddings)
        self.tgt_embed = Embeddings(tgt_tokens, tgt_positions, cfg.dropout, cfg.embedding_norm, cfg.scale_embeddings)
        self.encoder_layers = nn.ModuleList(EncoderLayer(cfg, i != cfg.residual_free_encoder_layer)
                                            for i in range(cfg.encoder_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.decoder_layers))
        # pre-LN leaves the last residual stream un-normalized: one final LayerNorm on each side,
        # torch's (fp32 under autocast, as the stream they end): the encoder's output feeds every
        # decoder layer, whose gradients then sum in fp32, and the decoder's gets the loss's scaled
        # gradient, which bf16 would round.
        self.encoder_norm = make_norm(cfg.norm_type, cfg.d_model, final=True) if cfg.norm == "pre" else nn.Identity()
        self.decoder_norm = make_norm(cfg.norm_type, cfg.d_model, final=True) if cfg.norm == "pre" else nn.Identity()
        self.output_proj = None if cfg.tie_output else nn.Linear(cfg.d_model, tgt_vocab_size, bias=False)
        self.packed_output: PackedWeight | None = None  # the output weight packed for oneDNN (pack_for_cpu_inference)
        self.checkpoint_layers = False  # train.checkpoint_activations: recompute each layer in backward
        self.varlen_attention = False  # train.attention: varlen (use_varlen_attention)
        self.output_on_onednn = True  # the fused output loss's fp32 CPU products (use_onednn_in_training)
        # (decoder layer, heads): the first heads of that layer give the model's word alignments
        # and are trained on them (train.guided_alignment; nmt.model.guided_alignment); None: the
        # alignments come from the mean of every layer's heads.
        self.alignment_heads: tuple[int, int] | None = None
        self.compiled_decoding: CompiledSteps | None = None  # decode.compile's, made on first use
        self._init_weights()

    def _init_weights(self) -> None:
        """Xavier-uniform linear weights (per d×d block for fused projections), zero biases,
        N(0, D^-0.5) embeddings so that embedding × sqrt(D) has unit scale (N(0, 1) unscaled);
        the PAD row is zero. Relative position biases N(0, D^-0.5), as T5 starts them."""
        d = self.cfg.d_model
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, mean=0.0, std=d ** -0.5 if self.cfg.scale_embeddings else 1.0)
                with torch.no_grad():
                    module.weight[PAD].zero_()
            elif isinstance(module, RelativePositionBias):
                nn.init.normal_(module.weight, mean=0.0, std=d ** -0.5)
        for module in self.modules():  # fused q/k/v projections: as if each were its own d×d matrix
            if isinstance(module, MultiHeadAttention):
                fused = module.qkv_proj if module.self_attention else module.kv_proj
                for block in fused.weight.data.split(module.inner, dim=0):
                    nn.init.xavier_uniform_(block)
        if self.output_proj is not None:
            nn.init.normal_(self.output_proj.weight, mean=0.0, std=d ** -0.5)
        for module in self.modules():  # learned positions at the scale of a scaled embedding
            if isinstance(module, LearnedPositions):
                nn.init.normal_(module.weight, mean=0.0, std=1.0)

    @property
    def aligner(self) -> "Transformer":
        """The model whose cross-attention gives word alignments (nmt.decode.text.alignment): itself."""
        return self

    @property
    def start_token(self) -> int:
        return start_token_of(self.cfg)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())  # shared tensors are counted once

    def use_matmul_attention(self, on: bool) -> None:
        """train.attention: matmul: the training passes compute attention by matmuls and a softmax
        (nmt.model.matmul_attention) instead of scaled_dot_product_attention's fused kernels;
        validation and decoding keep the fused kernels."""
        for module in self.modules():
            if isinstance(module, MultiHeadAttention):
                module.by_matmul = on

    def use_onednn_in_training(self, on: bool) -> None:
        """train.cpu_linear: the training passes' fp32 products on a CPU, forward and backward,
        through oneDNN (on: every linear layer becomes a OneDnnLinear, nmt.model.onednn_linear) or
        through F.linear, which torch gives to MKL (off, on a model whose layers were not turned)."""
        if on:
            use_onednn_for_training(self)
        self.output_on_onednn = on

    def use_varlen_attention(self, on: bool) -> None:
        """train.attention: varlen: the training passes' key-padding masks (the encoder's
        self-attention, the encoder-decoder attention) become FlashAttention's variable-length
        segments (nmt.model.varlen_attention); the causal decoder self-attention needs no mask and
        keeps scaled_dot_product_attention, as do validation and decoding."""
        self.varlen_attention = on

    def _varlen_segments(self, src_mask: Tensor, queries: int) -> KeySegments | None:
        """src_mask (B, 1, 1, S) as segments for `queries` queries per sentence, where the
        training passes attend by them (use_varlen_attention); else None. Its callers ask only for
        padded batches without relative positions (packed rows bring masks of their own)."""
        if self.varlen_attention and self.training:
            return key_padding_segments(src_mask, queries)
        return None

    # --- encoder --------------------------------------------------------------------------
    def _layer(self, function, *inputs: Tensor) -> Tensor:
        """A layer's forward; with `checkpoint_layers` while training, its activations are not kept
        but recomputed in the backward pass (the same dropout masks: the RNG state is replayed)."""
        if self.checkpoint_layers and self.training and torch.is_grad_enabled():
            return torch.utils.checkpoint.checkpoint(function, *inputs, use_reentrant=False)
        return function(*inputs)

    def encode(self, src: Tensor, mask: Tensor | None = None, positions: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """src (B, S) -> memory (B, S, D), src_mask (B, 1, 1, S) True at real tokens. Packed rows
        (`forward`) give the self-attention `mask` and each token's position."""
        src_mask = (src != PAD)[:, None, None, :]
        x = self.src_embed(src, positions=positions)
        if mask is None:
            mask = src_mask
            if self.encoder_position_bias is not None:  # (B, h, S, S): the biases, -inf at padding
                mask = self.encoder_position_bias(src.size(1), src.size(1)).masked_fill(~src_mask, float("-inf"))
            elif (segments := self._varlen_segments(src_mask, src.size(1))) is not None:
                mask = segments
        for layer in self.encoder_layers:
            x = self._layer(layer, x, mask)
        return self.encoder_norm(x), src_mask

    def decoder_self_bias(self, length: int) -> Tensor | None:
        """Relative positions' (1, h, T, T) bias for the decoder's self-attention, -inf over the
        future (its causal mask), or None without them."""
        if self.decoder_position_bias is None:
            return None
        future = torch.ones(length, length, dtype=torch.bool, device=self.decoder_position_bias.weight.device).triu(1)
        return self.decoder_position_bias(length, length).masked_fill(future, float("-inf"))

    # --- decoder, whole target (training, scoring) ------------------------------------------
    def decode(self, tgt_in: Tensor, memory: Tensor, src_mask: Tensor, guided: bool = False,
               self_mask: Tensor | None = None, positions: Tensor | None = None,
               cross_mask: object = None) -> Tensor | tuple[Tensor, Tensor]:
        """tgt_in (B, T) -> hidden states (B, T, D); `guided`: also the alignment heads' attention
        log-probabilities (B, heads, T, S) (see `alignment_heads`). Packed rows (`forward`) give
        the cross-attention mask as src_mask (dense, as the alignment heads read it), the
        self-attention's and each token's position, and `cross_mask`, the cross-attention's
        FlexAttention block mask where it runs."""
        x, attention = self.tgt_embed(tgt_in, positions=positions), None
        if self_mask is None:
            self_mask = self.decoder_self_bias(tgt_in.size(1))
        guided_layer, heads = self.alignment_heads if guided else (-1, 0)
        cross = self._varlen_segments(src_mask, tgt_in.size(1)) if self_mask is None else cross_mask
        for i, layer in enumerate(self.decoder_layers):
            if i == guided_layer:
                x, attention = self._layer(lambda y, m, layer=layer: layer(y, m, src_mask, heads, self_mask, cross),
                                           x, memory)
            else:
                x = self._layer(lambda y, m, layer=layer: layer(y, m, src_mask, 0, self_mask, cross), x, memory)
        x = self.decoder_norm(x)
        return (x, attention) if guided else x

    @property
    def output_weight(self) -> Tensor:  # (V, D): the target embedding when tied
        return self.tgt_embed.tokens.weight if self.output_proj is None else self.output_proj.weight

    def output_logits(self, hidden: Tensor) -> Tensor:  # (..., D) -> (..., V)
        return packed_linear(hidden, self.output_weight, None, self.packed_output)

    def pack_for_cpu_inference(self) -> None:
        """Every linear layer and the output layer through oneDNN with packed weights
        (nmt.model.onednn_linear), for a model on the CPU whose weights stay as they are."""
        if pack_for_cpu_inference(self) and self.output_weight.dtype == torch.float32:
            self.packed_output = PackedWeight(self.output_weight, None)

    def forward(self, src: Tensor, tgt_in: Tensor, output_positions: Tensor | None = None,
                targets: Tensor | None = None, label_smoothing: float = 0.0,
                alignment: Tensor | None = None, packing: Packing | None = None) -> Tensor | tuple[Tensor, Tensor]:
        """Logits (B, T, V); with output_positions (N,), indices into the flattened (B·T) target
        positions, only there: (N, V). With `targets` (N,), the tokens at those positions, the
        summed label-smoothed cross-entropy instead, from the fused output layer (nmt.model.output_loss);
        with `alignment` (B, T, S) as well (guided alignment, `alignment_heads` set), the pair
        (that cross-entropy, the alignment heads' summed cross-entropy against `alignment`).

        `packing`: src and tgt_in are packed rows (nmt.data.packing), each token attending within
        its own sentence (nmt.model.packed_attention).

        Training passes the non-padding positions (`Batch.out_positions`, built on the host), so
        padding never reaches the (large) output layer, and nothing here depends on tensor values:
        no host sync, and one compiled graph for every batch shape.
        """
        guided = alignment is not None
        if guided and self.alignment_heads is None:
            raise ValueError("an alignment to train towards, but no alignment heads "
                             "(Transformer.alignment_heads, from train.guided_alignment)")
        if packing is None:
            memory, src_mask = self.encode(src)
            hidden = self.decode(tgt_in, memory, src_mask, guided)
        else:
            if self.encoder_position_bias is not None:
                raise ValueError("packed rows with model.positions: relative (the biases would cross sentences)")
            flex = use_flex(src.device, self.cfg.attention_dropout, self.training)
            masks = packed_masks(packing, flex)
            memory, _ = self.encode(src, masks.encoder, packing.src_positions)
            # the alignment heads' attention is written out: it reads the dense cross mask
            cross, flex_cross = (dense_cross_mask(packing), masks.cross) if guided and flex else (masks.cross, None)
            hidden = self.decode(tgt_in, memory, cross, guided, self_mask=masks.decoder,
                                 positions=packing.tgt_positions, cross_mask=flex_cross)
        if guided:
            hidden, attention = hidden
        if output_positions is not None:
            hidden = hidden.flatten(0, 1).index_select(0, output_positions)  # (N, D)
        if targets is not None:
            loss = output_layer_loss(hidden, self.output_weight, targets, label_smoothing, onednn=self.output_on_onednn)
            return (loss, guided_alignment_loss(attention, alignment)) if guided else loss
        return self.output_logits(hidden)

    # --- decoder, one position at a time (translation) ----------------------------------------
    def start_decoding(self, memory: Tensor, src_mask: Tensor, beams: int = 1,
                       vocabulary: Tensor | None = None, compiled: bool = False) -> DecoderState:
        """State for incremental decoding of `beams` rows per sentence; the encoder-side keys and
        values are projected and kept once per sentence. `vocabulary`: the target ids (C,) the
        outputs may use (a shortlist), or None for all. `compiled`: the steps' decoder layers run
        compiled (decode.compile, nmt.model.compiled_decoding)."""
        if memory.device.type == "cpu" and memory.size(1) < CPU_SOFTMAX_MIN_COLUMNS:
            # torch's CPU softmax over fewer columns than one vector register holds is ~10x
            # slower (nmt.model.matmul_attention): a short batch of sources gets masked columns,
            # which change no probability.
            missing = CPU_SOFTMAX_MIN_COLUMNS - memory.size(1)
            memory, src_mask = F.pad(memory, (0, 0, 0, missing)), F.pad(src_mask, (0, missing), value=False)
        memory_kv = [layer.cross_attn.step_memory(memory) for layer in self.decoder_layers]
        src_bias = torch.zeros(src_mask.shape, dtype=memory.dtype, device=memory.device)
        src_bias.masked_fill_(~src_mask, float("-inf"))
        weight = bias = None
        if vocabulary is not None:
            weight = self.output_weight.index_select(0, vocabulary)
            bias = torch.zeros(vocabulary.shape, dtype=weight.dtype, device=weight.device)
            bias.masked_fill_((vocabulary == PAD) | (vocabulary == BOS), float("-inf"))
        self_bias = None
        if self.decoder_position_bias is not None:  # the last position's row: every distance, farthest first
            last = self.cfg.max_positions - 1
            self_bias = self.decoder_position_bias(1, last + 1, offset=last)
        return DecoderState(memory_kv, src_bias, [SelfAttentionCache() for _ in self.decoder_layers], beams, 0,
                            vocabulary, weight, bias, self_bias, compiled)

    def decode_step(self, tokens: Tensor, state: DecoderState, forbid: Callable[[Tensor], None] | None = None) -> Tensor:
        """tokens (N,) at position state.length -> log-probabilities (N, V) of the next token
        (next_token_log_probs, `forbid` applied before its softmax), or (N, C) over a shortlist's
        state.vocabulary (column j: token vocabulary[j]); advances the state."""
        x = self.tgt_embed(tokens.unsqueeze(1), offset=state.length)  # (N, 1, D)
        self_bias = None
        if state.self_bias is not None:  # the new position's row over the past and itself: a view
            first = state.self_bias.size(-1) - 1 - state.length
            if first < 0:
                raise ValueError(f"sequence of {state.length + 1} positions exceeds max_positions {state.self_bias.size(-1)}")
            self_bias = state.self_bias[..., first:]
        layers = compiled_steps(self) if state.compiled and CompiledSteps.applies(state) else self.step_layers
        hidden = layers(x, state, self_bias)
        state.length += 1
        if state.vocabulary is None:
            return next_token_log_probs(self.output_logits(hidden), forbid=forbid)
        # The output layer and the softmax over the shortlist only: column j is token vocabulary[j].
        logits = F.linear(hidden, state.vocabulary_weight, state.vocabulary_bias)
        return next_token_log_probs(logits, forbid, shortlisted=True)

    def step_layers(self, x: Tensor, state: DecoderState, self_bias: Tensor | None) -> Tensor:
        """A decoding step's new position x (N, 1, D), embedded, through every decoder layer (each
        layer's self-attention cache in `state` appended) and the final norm: hidden (N, D)."""
        for layer, kv, cache in zip(self.decoder_layers, state.memory_kv, state.self_cache):
            x = layer.step(x, kv, state.src_bias, cache, self_bias)
        return self.decoder_norm(x[:, 0])

    def cross_attention(self, src: Tensor, tgt_in: Tensor) -> list[Tensor]:
        """Each decoder layer's encoder-decoder attention probabilities (B, h, T, S) under
        teacher forcing: row t attends for the token predicted after tgt_in[:, t]."""
        memory, src_mask = self.encode(src)
        x, weights = self.tgt_embed(tgt_in), []
        self_mask = self.decoder_self_bias(tgt_in.size(1))
        for decoder_layer in self.decoder_layers:
            kv = decoder_layer.cross_attn.project_kv(memory)
            weights.append(decoder_layer.cross_attention_weights(x, kv, src_mask, self_mask))
            x = decoder_layer(x, memory, src_mask, self_mask=self_mask)
        return weights

    def teacher_forced_log_probs(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        """Log-probabilities (B, T, V) of the token after each position of tgt_in (B, T), as
        decode_step gives them one position at a time: forced decoding, in one pass."""
        return next_token_log_probs(self(src, tgt_in))
