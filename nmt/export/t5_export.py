"""A checkpoint of T5's layout (imported from MADLAD-400, or fine-tuned from such an import) as a
transformers `T5ForConditionalGeneration` directory: `nmt export --format huggingface`.

The inverse of nmt.export.t5_import, in nmt's own token ids: the vocabulary is the checkpoint's
sentencepiece model (written as `spiece.model`, its language tokens `<2xx>` made user-defined
pieces again, so the T5 tokenizer reads them in text as MADLAD's does), the decoder starts from
nmt's BOS row, and generation suppresses PAD and BOS, which nmt never predicts. The queries are
divided by sqrt(d_kv) again (T5 does not scale its scores) and the output layer is written as
its own matrix, which T5 v1.1 does not rescale.
"""

from __future__ import annotations

from pathlib import Path

import torch

from nmt.checkpoint import tokenizer_models, training_origin
from nmt.config import Recipe
from nmt.errors import NmtError
from nmt.export.directory import write_directory_atomically
from nmt.export.m2m100_export import multilingual_card
from nmt.export.t5_import import t5_names
from nmt.special_tokens import BOS, EOS, PAD

FEED_FORWARD = {"gelu_tanh": "gelu_new", "gelu": "gelu", "relu": "relu", "swish": "silu"}


def is_t5_layout(cfg) -> bool:
    return cfg.positions == "relative"


def check_t5_exportable(cfg, checkpoint: Path) -> None:
    """A one-line error naming what a T5ForConditionalGeneration cannot hold."""
    lacking = [text for wrong, text in (
        (cfg.norm != "pre", "post-LN layers (norm: post)"),
        (cfg.norm_type != "rms", "LayerNorm (norm_type: layer)"),
        (cfg.bias, "biases (bias: true)"),
        (cfg.scale_embeddings, "scaled embeddings (scale_embeddings: true)"),
        (not cfg.share_embeddings, "separate vocabularies (share_embeddings: false)"),
        (cfg.residual_free_encoder_layer is not None, "a layer without its residual connection"),
        (cfg.decoder_start != "bos", "a decoder starting from EOS"),
    ) if wrong]
    if lacking:
        raise NmtError(f"{checkpoint}: relative positions export as a T5ForConditionalGeneration, which has no "
                       + ", ".join(lacking) + "; export to CTranslate2 (`nmt export`)")


def t5_weights(state: dict[str, torch.Tensor], cfg) -> dict[str, torch.Tensor]:
    """nmt's weights under T5's names (the inverse of nmt.export.t5_import.t5_state_dict)."""
    plain, attentions = t5_names(cfg)
    out = {theirs: state[ours] for ours, theirs in plain}
    query_scale = cfg.head_width ** -0.5
    for target, source, self_attention in attentions:
        if self_attention:
            q, k, v = state[f"{target}.qkv_proj.weight"].chunk(3)
        else:
            q, (k, v) = state[f"{target}.q_proj.weight"], state[f"{target}.kv_proj.weight"].chunk(2)
        out[f"{source}.q.weight"], out[f"{source}.k.weight"], out[f"{source}.v.weight"] = q * query_scale, k, v
    out["shared.weight"] = state["src_embed.tokens.weight"]
    out["lm_head.weight"] = state["tgt_embed.tokens.weight" if cfg.tie_output else "output_proj.weight"]
    return {name: t.float().contiguous() for name, t in out.items()}


def _spiece_with_language_pieces(proto: bytes) -> bytes:
    """The sentencepiece model with its language tokens <2xx> user-defined pieces (nmt keeps them
    as control tokens, which text never produces; MADLAD's tokenizer reads them in text)."""
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    model = model_pb2.ModelProto()
    model.ParseFromString(proto)
    kinds = model_pb2.ModelProto.SentencePiece
    for piece in model.pieces:
        if piece.type == kinds.CONTROL and piece.piece.startswith("<2") and piece.piece.endswith(">"):
            piece.type = kinds.USER_DEFINED
    return model.SerializeToString()


def export_t5(payload: dict, recipe: Recipe, checkpoint: Path, out: Path, force: bool, require_transformers) -> dict:
    transformers = require_transformers()
    cfg = recipe.model
    check_t5_exportable(cfg, checkpoint)
    protos = tokenizer_models(payload)
    weights = t5_weights(payload["model"], cfg)
    vocab_size = weights["shared.weight"].size(0)
    head_dim = cfg.head_width
    config = transformers.T5Config(
        vocab_size=vocab_size, d_model=cfg.d_model, d_kv=head_dim, d_ff=cfg.d_ff, num_layers=cfg.encoder_layers,
        num_decoder_layers=cfg.decoder_layers, num_heads=cfg.heads, relative_attention_num_buckets=cfg.relative_buckets,
        relative_attention_max_distance=cfg.relative_max_distance, dropout_rate=cfg.dropout, layer_norm_epsilon=1e-6,
        feed_forward_proj=("gated-gelu" if cfg.activation == "gelu_tanh" else f"gated-{FEED_FORWARD[cfg.activation]}")
        if cfg.gated_ffn else FEED_FORWARD[cfg.activation],
        tie_word_embeddings=False, pad_token_id=PAD, eos_token_id=EOS, decoder_start_token_id=BOS,
        architectures=["T5ForConditionalGeneration"])
    data, decode = recipe.data, recipe.decode

    def fill(directory: Path) -> None:
        from safetensors.torch import save_file

        config.save_pretrained(directory)
        (directory / "spiece.model").write_bytes(_spiece_with_language_pieces(protos["tgt"]))
        tokenizer = transformers.T5Tokenizer.from_pretrained(directory, extra_ids=0)
        tokenizer.save_pretrained(directory)
        transformers.GenerationConfig(
            num_beams=max(decode.beam_size, 1), length_penalty=decode.length_penalty,
            no_repeat_ngram_size=decode.no_repeat_ngram_size, max_length=cfg.max_positions - 1,
            early_stopping=decode.beam_size > 1 and decode.length_penalty != 0, pad_token_id=PAD, eos_token_id=EOS,
            decoder_start_token_id=BOS, suppress_tokens=[PAD, BOS],  # nmt never predicts them
        ).save_pretrained(directory)
        save_file(weights, str(directory / "model.safetensors"), metadata={"format": "pt"})
        (directory / "README.md").write_text(_card(recipe, checkpoint, payload), encoding="utf-8")

    write_directory_atomically(Path(out), fill, force)
    return {"directory": str(out), "direction": f"{data.src_lang}-{data.tgt_lang}",
            "architecture": "T5ForConditionalGeneration", "quantization": "float32",
            "bytes": sum(f.stat().st_size for f in Path(out).iterdir()), "generation_differences": []}


def _card(recipe: Recipe, checkpoint: Path, payload: dict) -> str:
    tgt = recipe.data.tgt_lang
    as_text = (" The model reads it after the word boundary ▁, as sentencepiece and transformers 5.25 or later "
               f"tokenize this text (▁ <2{tgt}> ▁A ...); transformers 5.0 to 5.24 leave the ▁ out."
               if recipe.data.language_token_as_text else "")
    return multilingual_card(
        recipe, f"({training_origin(payload)}) by `nmt export --format huggingface` as a "
        "`T5ForConditionalGeneration`. Ask for a target language with its token in front of the source, as "
        f"MADLAD-400 does: `<2{tgt}> A dog runs on the beach.`{as_text}", checkpoint,
        f"<2{tgt}> A dog runs on the beach.")

