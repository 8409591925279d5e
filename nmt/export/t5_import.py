"""What `nmt import` reads from a transformers `T5ForConditionalGeneration` directory: MADLAD-400's
layout (T5 v1.1), a many-to-many model asked for its target language by a `<2xx>` token in front
of the source, which is nmt's own language token (data.language_token: source).

T5 differs from the paper's Transformer in six ways, each a key of nmt's model section: relative
position buckets in the self-attentions and no position vectors (`positions: relative`), RMSNorm
(`norm_type: rms`, pre-LN), gated feed-forwards (`gated_ffn`, `activation: gelu_tanh` for
`gelu_new`), no biases (`bias: false`), heads of their own size (`head_dim`, T5's d_kv) and
unscaled embeddings (`scale_embeddings: false`). Two more fold into the weights: T5 does not scale
its attention scores by 1/sqrt(d_kv), so its query projections are multiplied by sqrt(d_kv) here
(nmt's attention divides it back out); T5 v1.0, whose output layer is its embedding, scales the
decoder's output by d_model^-0.5 first, so the output layer is written as its own matrix, the
embedding times d_model^-0.5 (tie_output: false; MADLAD-400's is its own matrix anyway).

The vocabulary is the sentencepiece model's (`spiece.model` or `sentencepiece.model`), whose ids
are the model's rows; T5 starts its decoder from the pad token, whose row becomes nmt's BOS row
too. Pieces `<2xx>` are the language codes: each becomes a control token of the checkpoint and xx
one of its languages; where the sentencepiece model reads them in text (MADLAD-400's), the source
starts with the word boundary "▁" before the code, as `<2de> text` is tokenized
(data.language_token_as_text). The tokenizer's added tokens (`<extra_id_N>`) keep their rows under their
names (those past the model's rows, which it can never read or write, are left out), and rows no
token has become `<unused:N>`, so the output layer keeps every row.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import torch

from nmt.errors import NmtError
from nmt.export.m2m100_vocabulary import with_every_row
from nmt.special_tokens import WORD_START

SPM_FILES = ("spiece.model", "sentencepiece.model")
LANGUAGE_PIECE = re.compile(r"^<2([^<>\s]+)>$")
ACTIVATION_OF = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu", "relu": "relu",
                 "silu": "swish", "swish": "swish"}
RMS_EPS = 1e-6  # nmt's RMSNorm (nmt.model.layer_norm)


def spm_path(directory: Path) -> Path:
    for name in SPM_FILES:
        if (directory / name).is_file():
            return directory / name
    raise NmtError(f"{directory}: no {' or '.join(SPM_FILES)} (T5 directories carry their sentencepiece model; "
                   "nmt's tokenizer is sentencepiece)")


def check_t5_config(config, directory: Path) -> None:
    """A one-line error naming what nmt's Transformer lacks for this T5 configuration."""
    lacking = []
    activation = getattr(config, "dense_act_fn", None)
    if activation not in ACTIVATION_OF:
        lacking.append(f"the feed-forward activation {activation!r} (feed_forward_proj {config.feed_forward_proj})")
    if not math.isclose(config.layer_norm_epsilon, RMS_EPS):
        lacking.append(f"layer_norm_epsilon {config.layer_norm_epsilon} (nmt's RMSNorm has {RMS_EPS})")
    if not config.is_encoder_decoder:
        lacking.append("a decoder-only layout")
    if lacking:
        raise NmtError(f"{directory}/config.json: nmt's Transformer lacks " + "; ".join(lacking))


def t5_vocabulary(transformers, directory: Path, vocab_size: int) -> tuple[dict[str, int], dict[str, str]]:
    """({piece: the model's row} covering every row, {code: its piece <2code>}); a one-line error
    where the directory's tokenizer reads a piece otherwise."""
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    path = spm_path(directory)
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    except (OSError, ValueError, TypeError) as e:
        raise NmtError(f"{directory}: transformers cannot load the tokenizer ({str(e).strip().splitlines()[0]})") from None
    proto = model_pb2.ModelProto()
    proto.ParseFromString(path.read_bytes())
    kinds = model_pb2.ModelProto.SentencePiece
    vocab: dict[str, int] = {}
    for row, piece in enumerate(proto.pieces):
        # (a language piece may be a control piece, which T5 tokenizers read in text all the same)
        if piece.type in (kinds.NORMAL, kinds.USER_DEFINED, kinds.BYTE) or LANGUAGE_PIECE.match(piece.piece):
            if tokenizer.convert_tokens_to_ids(piece.piece) != row:
                raise NmtError(f"{directory}: the tokenizer reads the piece {piece.piece!r} of {path.name} as id "
                               f"{tokenizer.convert_tokens_to_ids(piece.piece)}, not its row {row}")
            vocab[piece.piece] = row
    specials = {"<pad>": tokenizer.pad_token_id, "<unk>": tokenizer.unk_token_id, "</s>": tokenizer.eos_token_id}
    vocab |= {piece: token_id for piece, token_id in specials.items() if token_id is not None}
    codes = {match.group(1): piece for piece in vocab if (match := LANGUAGE_PIECE.match(piece))}
    if not codes:
        raise NmtError(f"{directory}: {path.name} has no language pieces <2xx> (MADLAD-400's <2de>); nmt imports "
                       "T5 models that translate into the language such a piece names")
    return with_every_row(vocab, tokenizer, vocab_size, directory, rowless_added=True), codes


def codes_read_as_text(path: Path, codes: dict[str, str]) -> bool:
    """Whether the sentencepiece model at `path` reads its language pieces in text, after the word
    boundary "▁" it puts in front of a text: `<2de> A dog` is ▁ <2de> ▁A ▁dog, as MADLAD-400 was
    trained (T5X tokenizes with sentencepiece itself; transformers' T5Tokenizer agrees from 5.25 on,
    and did in 4.x, but not in 5.0-5.24 nor 4.x's T5TokenizerFast). Codes that
    are control pieces are never read from text: tokenizers split them off first, with no ▁."""
    from sentencepiece import SentencePieceProcessor

    piece = next(iter(codes.values()))
    return SentencePieceProcessor(model_proto=path.read_bytes()).encode(piece, out_type=str) == [WORD_START, piece]


def t5_model_section(config, share: bool) -> dict:
    """The recipe's model section for a T5 configuration (check_t5_config passed)."""
    heads_size = config.num_heads * config.d_kv
    return {"encoder_layers": config.num_layers, "decoder_layers": config.num_decoder_layers,
            "d_model": config.d_model, "heads": config.num_heads, "d_ff": config.d_ff,
            "dropout": config.dropout_rate, "attention_dropout": config.dropout_rate,
            "activation_dropout": config.dropout_rate, "norm": "pre", "norm_type": "rms",
            "activation": ACTIVATION_OF[config.dense_act_fn], "gated_ffn": bool(config.is_gated_act),
            "bias": False, "head_dim": None if heads_size == config.d_model else config.d_kv,
            "scale_embeddings": False, "positions": "relative",
            "relative_buckets": config.relative_attention_num_buckets,
            "relative_max_distance": config.relative_attention_max_distance,
            "share_embeddings": share, "tie_output": False, "decoder_start": "bos"}


def scales_output(config) -> bool:
    """Whether the model multiplies the decoder's output by d_model^-0.5 before its output layer: T5
    v1.0's, whose output layer is its embedding (transformers 5 says so as scale_decoder_outputs,
    earlier versions as tie_word_embeddings)."""
    return bool(getattr(config, "scale_decoder_outputs", config.tie_word_embeddings))


def t5_names(cfg) -> tuple[list[tuple[str, str]], list[tuple[str, str, bool]]]:
    """How nmt's tensors and T5's correspond, for the import and the export (nmt.export.t5_export):
    (nmt's name, T5's) of each tensor that maps one to one, and (nmt's attention, T5's, whether a
    self-attention) of each attention, whose q, k and v nmt fuses."""
    plain, attentions = [], []

    def feed_forward(target: str, source: str) -> None:
        pairs = (("w1", "wi_0"), ("w3", "wi_1"), ("w2", "wo")) if cfg.gated_ffn else (("w1", "wi"), ("w2", "wo"))
        plain.extend((f"{target}.{ours}.weight", f"{source}.{theirs}.weight") for ours, theirs in pairs)

    for side, layers, sublayers in (("encoder", cfg.encoder_layers, ("attn_sublayer", "ff_sublayer")),
                                    ("decoder", cfg.decoder_layers, ("self_sublayer", "cross_sublayer", "ff_sublayer"))):
        for i in range(layers):
            t, s = f"{side}_layers.{i}", f"{side}.block.{i}.layer"
            attentions.append((f"{t}.self_attn", f"{s}.0.SelfAttention", True))
            if side == "decoder":
                attentions.append((f"{t}.cross_attn", f"{s}.1.EncDecAttention", False))
            feed_forward(f"{t}.feed_forward", f"{s}.{len(sublayers) - 1}.DenseReluDense")
            plain.extend((f"{t}.{sublayer}.norm.weight", f"{s}.{j}.layer_norm.weight") for j, sublayer in enumerate(sublayers))
        plain.append((f"{side}_norm.weight", f"{side}.final_layer_norm.weight"))
        plain.append((f"{side}_position_bias.weight", f"{side}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"))
    plain.extend((f"{target}.out_proj.weight", f"{source}.o.weight") for target, source, _ in attentions)
    return plain, attentions


def t5_state_dict(hf: dict[str, torch.Tensor], cfg, config, index: list[int]) -> dict[str, torch.Tensor]:
    """transformers' T5 weights under nmt's names (nmt.model.transformer). Each tensor read is
    popped from `hf`, so that it is freed once converted (where nothing else holds it)."""
    plain, attentions = t5_names(cfg)
    out = {ours: hf.pop(theirs).float().contiguous() for ours, theirs in plain}
    query_scale = math.sqrt(config.d_kv)  # T5's unscaled scores, as nmt's attention scales them
    for target, source, self_attention in attentions:
        q, k, v = (hf.pop(f"{source}.{name}.weight").float() for name in ("q", "k", "v"))
        q = q * query_scale
        if self_attention:
            out[f"{target}.qkv_proj.weight"] = torch.cat([q, k, v])
        else:
            out[f"{target}.q_proj.weight"], out[f"{target}.kv_proj.weight"] = q, torch.cat([k, v])
    rows = torch.tensor(index)
    out["tgt_embed.tokens.weight"] = hf.pop("decoder.embed_tokens.weight")[rows].float()
    out["src_embed.tokens.weight"] = (out["tgt_embed.tokens.weight"] if cfg.share_embeddings  # one table, made once
                                      else hf.pop("encoder.embed_tokens.weight")[rows].float())
    out["output_proj.weight"] = hf.pop("lm_head.weight")[rows].float() * (config.d_model ** -0.5 if scales_output(config) else 1.0)
    return out
