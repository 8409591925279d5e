"""A checkpoint as a Hugging Face `transformers` model directory: `nmt export --format huggingface`.

A post-LN nmt Transformer maps one to one onto `MarianMTModel`: scaled embeddings, static
sinusoidal positions, post-LN layers with ReLU (or swish, GELU) feed-forwards, no embedding or final LayerNorm,
a tied (or separate) output layer. A pre-LN one maps onto `PegasusForConditionalGeneration`: the
same layers with the LayerNorm first, one final LayerNorm per stack, the same sinusoid table, and
one vocabulary for both sides (so pre-LN models with separate vocabularies are refused).
One difference is the layout of the position table: nmt
interleaves sin and cos, Marian and Pegasus put the sines in the first half and the cosines in the second.
Rather than writing a table Marian would recompute on load, the export permutes the model's
d_model dimensions (the residual stream: embedding columns, every projection's input or output
over it, LayerNorm weights) by the same permutation, which leaves every output of the model
exactly as it was. PAD and BOS, which nmt never predicts, get a -1e4 output bias
(`final_logits_bias`), as in the CTranslate2 export.

The directory holds config.json, generation_config.json
(the recipe's beam size, length penalty and n-gram blocking), model.safetensors, the tokenizer
files MarianTokenizer reads (source.spm, target.spm, vocab.json; a language token named as
OPUS-MT names it, `>>fra<<`, which MarianTokenizer reads in front of a text) and a model card
(README.md). Written atomically, like the CTranslate2 export.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

import nmt
from nmt.checkpoint import best_dev, count_parameters, open_checkpoint, tokenizer_models, training_origin
from nmt.config import language_token
from nmt.special_tokens import BOS, EOS, PAD, UNK
from nmt.data.languages import language_usage, target_control_ids
from nmt.data.tokenizer import CARRIED, load_processor
from nmt.export.t5_export import export_t5, is_t5_layout
from nmt.errors import NmtError
from nmt.export.ctranslate2 import FORBIDDEN_LOGIT
from nmt.export.directory import write_directory_atomically
from nmt.export.m2m100_export import export_m2m100
from nmt.model.from_weights import check_weights


def require_transformers():
    try:
        import transformers
    except ImportError:
        raise NmtError("Hugging Face transformers is not installed: pip install 'nmt[huggingface]'") from None
    return transformers


def marian_order(d_model: int) -> torch.Tensor:
    """Marian's dimension k is nmt's dimension order[k]: nmt's sines (even dimensions) first, then its cosines."""
    return torch.cat([torch.arange(0, d_model, 2), torch.arange(1, d_model, 2)])


def transformers_state_dict(weights: dict[str, torch.Tensor], cfg) -> dict[str, torch.Tensor]:
    """nmt's weights under MarianMTModel's (post-LN) or PegasusForConditionalGeneration's (pre-LN)
    names, which are the same but for Pegasus's final LayerNorms; d_model dimensions permuted (see
    the module docstring)."""
    order = marian_order(cfg.d_model)
    d = cfg.d_model
    out: dict[str, torch.Tensor] = {}

    def columns(t):  # a weight whose input is the residual stream
        return t[:, order].contiguous()

    def rows(t):  # a weight or bias whose output is the residual stream
        return t[order].contiguous()

    def norm(target: str, source: str) -> None:
        out[f"{target}.weight"], out[f"{target}.bias"] = rows(weights[f"{source}.weight"]), rows(weights[f"{source}.bias"])

    def attention(target: str, q, k, v, q_bias, k_bias, v_bias, out_proj: str) -> None:
        for name, weight, bias in (("q_proj", q, q_bias), ("k_proj", k, k_bias), ("v_proj", v, v_bias)):
            out[f"{target}.{name}.weight"], out[f"{target}.{name}.bias"] = columns(weight), bias.contiguous()
        out[f"{target}.out_proj.weight"] = rows(weights[f"{out_proj}.weight"])
        out[f"{target}.out_proj.bias"] = rows(weights[f"{out_proj}.bias"])

    def self_attention(target: str, source: str) -> None:
        q, k, v = weights[f"{source}.qkv_proj.weight"].split(d)
        qb, kb, vb = weights[f"{source}.qkv_proj.bias"].split(d)
        attention(target, q, k, v, qb, kb, vb, f"{source}.out_proj")

    def feed_forward(target: str, source: str) -> None:
        out[f"{target}.fc1.weight"], out[f"{target}.fc1.bias"] = columns(weights[f"{source}.w1.weight"]), weights[f"{source}.w1.bias"]
        out[f"{target}.fc2.weight"], out[f"{target}.fc2.bias"] = rows(weights[f"{source}.w2.weight"]), rows(weights[f"{source}.w2.bias"])

    for i in range(cfg.encoder_layers):
        t, s = f"model.encoder.layers.{i}", f"encoder_layers.{i}"
        self_attention(f"{t}.self_attn", f"{s}.self_attn")
        norm(f"{t}.self_attn_layer_norm", f"{s}.attn_sublayer.norm")
        feed_forward(t, f"{s}.feed_forward")
        norm(f"{t}.final_layer_norm", f"{s}.ff_sublayer.norm")
    for i in range(cfg.decoder_layers):
        t, s = f"model.decoder.layers.{i}", f"decoder_layers.{i}"
        self_attention(f"{t}.self_attn", f"{s}.self_attn")
        norm(f"{t}.self_attn_layer_norm", f"{s}.self_sublayer.norm")
        q, qb = weights[f"{s}.cross_attn.q_proj.weight"], weights[f"{s}.cross_attn.q_proj.bias"]
        k, v = weights[f"{s}.cross_attn.kv_proj.weight"].split(d)
        kb, vb = weights[f"{s}.cross_attn.kv_proj.bias"].split(d)
        attention(f"{t}.encoder_attn", q, k, v, qb, kb, vb, f"{s}.cross_attn.out_proj")
        norm(f"{t}.encoder_attn_layer_norm", f"{s}.cross_sublayer.norm")
        feed_forward(t, f"{s}.feed_forward")
        norm(f"{t}.final_layer_norm", f"{s}.ff_sublayer.norm")
    if cfg.norm == "pre":
        norm("model.encoder.layer_norm", "encoder_norm")
        norm("model.decoder.layer_norm", "decoder_norm")
    for side, prefix in (("encoder", "src_embed"), ("decoder", "tgt_embed")):
        if cfg.embedding_norm:  # mBART's
            norm(f"model.{side}.layernorm_embedding", f"{prefix}.norm")
        if cfg.positions == "learned":  # mBART's table has two unused rows first (fairseq's offset)
            table = columns(weights[f"{prefix}.positions.weight"])
            out[f"model.{side}.embed_positions.weight"] = torch.cat([table.new_zeros(2, d), table])

    source_embedding, target_embedding = columns(weights["src_embed.tokens.weight"]), columns(weights["tgt_embed.tokens.weight"])
    out["model.encoder.embed_tokens.weight"] = source_embedding
    out["model.decoder.embed_tokens.weight"] = target_embedding
    if cfg.share_embeddings:
        out["model.shared.weight"] = source_embedding
    out["lm_head.weight"] = target_embedding if cfg.tie_output else columns(weights["output_proj.weight"])
    bias = torch.zeros(1, target_embedding.size(0))
    bias[0, [PAD, BOS]] = FORBIDDEN_LOGIT
    out["final_logits_bias"] = bias
    return {name: t.float() for name, t in out.items()}


def position_tables(cfg) -> dict[str, torch.Tensor]:
    """The sinusoid tables as transformers computes them itself (sines, then cosines), written so
    that loading finds every weight it expects."""
    require_transformers()
    if cfg.norm == "pre":
        from transformers.models.pegasus.modeling_pegasus import PegasusSinusoidalPositionalEmbedding as Positions
    else:
        from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding as Positions
    table = Positions(cfg.max_positions, cfg.d_model).create_weight().float()
    return {f"model.{side}.embed_positions.weight": table.clone() for side in ("encoder", "decoder")}


def transformers_config(recipe, src_vocab: int, tgt_vocab: int):
    transformers = require_transformers()
    m = recipe.model
    if m.norm == "pre":
        return transformers.PegasusConfig(
            vocab_size=tgt_vocab, d_model=m.d_model, encoder_layers=m.encoder_layers, decoder_layers=m.decoder_layers,
            encoder_attention_heads=m.heads, decoder_attention_heads=m.heads,
            encoder_ffn_dim=m.d_ff, decoder_ffn_dim=m.d_ff, activation_function=m.activation,
            dropout=m.dropout, attention_dropout=m.attention_dropout, activation_dropout=m.activation_dropout,
            max_position_embeddings=m.max_positions, scale_embedding=True, tie_word_embeddings=m.tie_output,
            pad_token_id=PAD, eos_token_id=EOS, bos_token_id=BOS, decoder_start_token_id=BOS,
            forced_eos_token_id=None, architectures=["PegasusForConditionalGeneration"])
    return transformers.MarianConfig(
        vocab_size=src_vocab, decoder_vocab_size=tgt_vocab, d_model=m.d_model,
        encoder_layers=m.encoder_layers, decoder_layers=m.decoder_layers,
        encoder_attention_heads=m.heads, decoder_attention_heads=m.heads,
        encoder_ffn_dim=m.d_ff, decoder_ffn_dim=m.d_ff, activation_function=m.activation,
        dropout=m.dropout, attention_dropout=m.attention_dropout, activation_dropout=m.activation_dropout,
        max_position_embeddings=m.max_positions, scale_embedding=True, static_position_embeddings=True,
        share_encoder_decoder_embeddings=m.share_embeddings, tie_word_embeddings=m.tie_output,
        pad_token_id=PAD, eos_token_id=EOS, bos_token_id=BOS, decoder_start_token_id=BOS,
        forced_eos_token_id=None, architectures=["MarianMTModel"])


def generation_config(recipe, forced_bos_token_id: int | None = None):
    """The recipe's search as transformers' defaults (and the target's language token forced
    first, for a model with decoder-side language tokens). With early_stopping=True a beam search files
    the top-K candidates that end, ranks them by log P / |Y|^alpha (EOS counted) and stops once K
    have ended: nmt's search with patience 1. At alpha 0 nmt stops once a step's best candidate has
    ended, when nothing later can beat it; early_stopping=False (stop once no live beam can beat
    the worst kept output) finds the same output. What it cannot say is in `generation_differences`."""
    transformers = require_transformers()
    d = recipe.decode
    return transformers.GenerationConfig(
        num_beams=max(d.beam_size, 1), length_penalty=d.length_penalty, no_repeat_ngram_size=d.no_repeat_ngram_size,
        max_length=recipe.model.max_positions - 1, min_length=0, early_stopping=d.length_penalty != 0,
        pad_token_id=PAD, eos_token_id=EOS, bos_token_id=BOS, decoder_start_token_id=BOS,
        forced_bos_token_id=forced_bos_token_id)


def generation_differences(recipe) -> list[str]:
    """Where transformers' generate, with the exported defaults, searches otherwise than the recipe."""
    d, notes = recipe.decode, []
    if d.beam_size > 1 and d.patience != 1:
        notes.append(f"decode.patience {d.patience}: transformers stops a beam search once beam_size outputs "
                     "have ended (patience 1)")
    if d.beam_size > 1 and d.length_penalty_form == "gnmt":
        notes.append("decode.length_penalty_form gnmt: transformers divides by |Y|^alpha (the power form)")
    if d.no_repeat_ngram_size:
        notes.append("decode.no_repeat_ngram_size: transformers removes repeated n-grams after the softmax, "
                     "nmt before it")
    notes.append("decode.max_len_a/max_len_b: transformers has one max_length per call, not one per sentence")
    return notes


def export_huggingface(checkpoint: Path, out: Path, force: bool = False, decode=None) -> dict:
    """Write the directory; `decode` (a DecodeConfig) replaces the checkpoint's decode settings."""
    require_transformers()
    loaded = open_checkpoint(checkpoint, mapped=True)  # read once, as converted, and not kept
    payload, recipe = loaded.payload, loaded.recipe
    if decode is not None:
        recipe = recipe.model_copy(update={"decode": decode})
    if not is_t5_layout(recipe.model) and (layout := recipe.model.t5_layout()):
        raise NmtError(f"{checkpoint}: model {', '.join(layout)}: transformers' Marian, Pegasus and M2M-100 compute "
                       "the paper's layers, and T5 relative positions; this model exports to CTranslate2 (`nmt export`)")
    check_weights(recipe.model, loaded.weights, checkpoint)
    if is_t5_layout(recipe.model):  # imported from MADLAD-400 (or fine-tuned from such an import)
        return export_t5(payload, recipe, checkpoint, out, force, require_transformers)
    if CARRIED in payload["tokenizer"]:  # imported from NLLB-200/M2M-100/mBART-50 (or fine-tuned from such an import)
        return export_m2m100(payload, recipe, payload["tokenizer"][CARRIED].numpy().tobytes(), checkpoint, out,
                             force, transformers_state_dict(payload["model"], recipe.model), require_transformers)
    if recipe.model.residual_free_encoder_layer is not None:
        raise NmtError(f"{checkpoint}: model.residual_free_encoder_layer: transformers' Marian and Pegasus have a "
                       "residual connection around every sublayer")
    if recipe.model.embedding_norm:
        raise NmtError(f"{checkpoint}: model.embedding_norm: transformers' Marian and Pegasus have no LayerNorm on "
                       "the embeddings, and the checkpoint carries no imported mBART tokenizer; this model exports "
                       "to CTranslate2 (`nmt export`)")
    if recipe.model.positions != "sinusoidal":
        raise NmtError(f"{checkpoint}: model.positions {recipe.model.positions}: transformers' Marian and Pegasus "
                       "compute the paper's positions, and the checkpoint carries no imported M2M-100 tokenizer; "
                       "this model exports to CTranslate2 (`nmt export`)")
    if recipe.model.norm == "pre" and not recipe.model.share_embeddings:
        raise NmtError(f"{checkpoint}: a pre-LN model exports as a PegasusForConditionalGeneration, which has one "
                       "vocabulary for both sides; this one has separate vocabularies (model.share_embeddings: false)")
    protos = tokenizer_models(payload)
    processors = {side: load_processor(model_proto=proto) for side, proto in protos.items()}
    vocabs = {side: marian_vocabulary(sp, recipe.data) for side, sp in processors.items()}
    separate = not recipe.model.share_embeddings
    state = transformers_state_dict(payload["model"], recipe.model)

    def fill(directory: Path) -> None:
        from safetensors.torch import save_file

        transformers_config(recipe, len(vocabs["src"]), len(vocabs["tgt"])).save_pretrained(directory)
        forced = target_control_ids(processors["tgt"], recipe.data)  # a decoder-side language token
        generation_config(recipe, forced[0] if forced else None).save_pretrained(directory)
        state.update(position_tables(recipe.model))
        tied = {"lm_head.weight"} if recipe.model.tie_output else set()
        if recipe.model.share_embeddings:
            tied |= {"model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight"}
        save_file({k: v for k, v in state.items() if k not in tied}, str(directory / "model.safetensors"),
                  metadata={"format": "pt"})
        (directory / "source.spm").write_bytes(protos["src"])
        (directory / "target.spm").write_bytes(protos["tgt"])
        (directory / "vocab.json").write_text(json.dumps(vocabs["src"], ensure_ascii=False), encoding="utf-8")
        if separate:
            (directory / "target_vocab.json").write_text(json.dumps(vocabs["tgt"], ensure_ascii=False), encoding="utf-8")
        tokenizer = {"tokenizer_class": "MarianTokenizer", "source_lang": recipe.data.src_lang,
                     "target_lang": recipe.data.tgt_lang, "separate_vocabs": separate,
                     "unk_token": processors["tgt"].id_to_piece(UNK), "eos_token": processors["tgt"].id_to_piece(EOS),
                     "pad_token": processors["tgt"].id_to_piece(PAD), "bos_token": processors["tgt"].id_to_piece(BOS),
                     "model_max_length": recipe.model.max_positions - 1}
        (directory / "tokenizer_config.json").write_text(json.dumps(tokenizer, indent=1), encoding="utf-8")
        (directory / "README.md").write_text(model_card(recipe, payload, checkpoint), encoding="utf-8")

    write_directory_atomically(Path(out), fill, force)
    return {"directory": str(out), "direction": f"{recipe.data.src_lang}-{recipe.data.tgt_lang}",
            "architecture": transformers_architecture(recipe), "quantization": "float32",
            "bytes": sum(f.stat().st_size for f in Path(out).iterdir()),
            "generation_differences": generation_differences(recipe)}


def marian_code(lang: str) -> str:
    """A language token as Marian (OPUS-MT) spells it in vocab.json: MarianTokenizer reads a
    `>>fra<<` in front of a text as that token, where sentencepiece would split nmt's `<2fra>`."""
    return f">>{lang}<<"


def marian_vocabulary(processor, data) -> dict[str, int]:
    """vocab.json: each piece's id, nmt's language tokens named as Marian's."""
    languages = set(data.source_languages()) | set(data.target_languages()) if data.language_token != "none" else set()
    renamed = {language_token(lang): marian_code(lang) for lang in languages}
    pieces = (processor.id_to_piece(i) for i in range(processor.get_piece_size()))
    return {renamed.get(piece, piece): i for i, piece in enumerate(pieces)}


def transformers_architecture(recipe) -> str:
    return "PegasusForConditionalGeneration" if recipe.model.norm == "pre" else "MarianMTModel"


def model_card(recipe, payload: dict, checkpoint: Path) -> str:
    progress = payload.get("progress", {})
    best = best_dev(payload, recipe)
    scores = [f"Best validation score during training: dev {best['metric']} {best['score']} at update "
              f"{best['step']}.", ""] if best else []
    made = "trained with" if progress else "converted by"  # no progress: imported (or averaged imports)
    code = marian_code(recipe.data.tgt_lang) + " " if recipe.data.language_token in ("source", "both") else ""
    return "\n".join([
        "---", "library_name: transformers", "pipeline_tag: translation",
        f"language: [{recipe.data.src_lang}, {recipe.data.tgt_lang}]", "tags: [nmt, translation]", "---", "",
        f"# {recipe.data.src_lang}→{recipe.data.tgt_lang} Transformer {made} nmt {nmt.__version__}", "",
        f"Exported from `{checkpoint}` ({training_origin(payload)}) by `nmt export --format huggingface`: "
        f"a {recipe.model.norm}-LN Transformer of {count_parameters(payload['model']):,} parameters as a "
        f"`{transformers_architecture(recipe)}`.", "", *scores, *language_usage(recipe.data, marian_code),
        "```python", "from transformers import AutoModelForSeq2SeqLM, AutoTokenizer",
        "model = AutoModelForSeq2SeqLM.from_pretrained(\"THIS_DIRECTORY\")",
        "tokenizer = AutoTokenizer.from_pretrained(\"THIS_DIRECTORY\")",
        f"batch = tokenizer([\"{code}A dog runs on the beach.\"], return_tensors=\"pt\", padding=True)",
        "print(tokenizer.batch_decode(model.generate(**batch), skip_special_tokens=True))", "```", "",
        "## Data", "",
        f"Training data: `{recipe.data.train}`; validation: `{recipe.data.valid}`; test: `{recipe.data.test}`. "
        "See the data's own license terms (for Multi30k: its README in nmt's `data/multi30k/`).", "",
        "## Decoding", "",
        f"generation_config.json: beam {recipe.decode.beam_size}, length penalty {recipe.decode.length_penalty}, "
        f"no repeated {recipe.decode.no_repeat_ngram_size}-gram (0: allowed). Where transformers searches "
        "otherwise than nmt:", "", *[f"- {note}" for note in generation_differences(recipe)], "",
        "## Recipe", "", "```json", json.dumps(payload["recipe"], indent=1), "```", "",
    ])
