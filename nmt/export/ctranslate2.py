"""A checkpoint as a CTranslate2 model directory.

nmt's Transformer maps one to one onto CTranslate2's `TransformerSpec` (the spec OpenNMT models
convert to): fused q/k/v and k/v projections in the same order, post-LN or pre-LN with a final
LayerNorm, embeddings scaled by sqrt(d_model). Two things are written out explicitly rather than
left to CTranslate2's defaults: the position table (nmt interleaves sin and cos, CTranslate2's
own table concatenates them) and the LayerNorm epsilon (torch's 1e-5). T5's layout
(model.positions: relative, norm_type: rms, gated_ffn, bias: false, scale_embeddings: false, an
imported MADLAD-400) maps onto the same spec's relative attention bias, RMSNorm and gated FFN, as
CTranslate2's own T5 converter writes it.

The directory holds the CTranslate2 model, both sentencepiece models, and `nmt_export.json`
with the recipe (its decode section gives the engine's defaults) and where the model came from.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import nmt
from nmt.special_tokens import BOS, EOS, PAD
from nmt.data.tokenizer import load_processor
from nmt.data.vocabulary_map import read_vocabulary_map
from nmt.errors import NmtError
from nmt.export.directory import read_description, write_directory_atomically
from nmt.model.from_weights import check_weights
from nmt.model.guided_alignment import alignment_heads
from nmt.model.transformer import PositionalEncoding
from nmt.checkpoint import Checkpoint, open_checkpoint, tokenizer_models

EXPORT_INFO = "nmt_export.json"
EXPORT_FORMAT = "nmt-ctranslate2-1"
SOURCE_SPM, TARGET_SPM = "source.spm.model", "target.spm.model"
VMAP = "vmap.txt"  # where CTranslate2 keeps a model's vocabulary map (a shortlist)
QUANTIZATIONS = ("int8", "int8_float32", "int8_float16", "int8_bfloat16", "int16", "float16", "bfloat16", "float32")
# nmt never predicts padding or BOS; the projection's bias says so to CTranslate2 and transformers
# (exp(-1e4) is 0 in every precision, and -1e4 stays finite in float16).
FORBIDDEN_LOGIT = -1e4


def require_ctranslate2():
    try:
        import ctranslate2
    except ImportError:
        raise NmtError("CTranslate2 is not installed: pip install 'nmt[ctranslate2]'") from None
    return ctranslate2


def is_export_dir(path: Path) -> bool:
    return Path(path).is_dir() and (Path(path) / EXPORT_INFO).is_file()


def attention_for_alignments(recipe) -> tuple[int, int]:
    """(decoder layer from 0, its first heads) whose mean attention the export returns
    (CTranslate2's alignment_layer and alignment_heads), which the CTranslate2 engine reads word
    alignments from: a guided model's guided heads (train.guided_alignment), any other's
    penultimate layer, every head. nmt's own engine averages every layer instead, which
    CTranslate2 cannot return; on models of 4 and 6 decoder layers the penultimate one placed
    inline tags about as well as that mean, and far better than no attention
    (experiments/alignment/README.md)."""
    guided = alignment_heads(recipe)
    if guided:
        return guided
    return max(recipe.model.decoder_layers - 2, 0), recipe.model.heads


def build_spec(checkpoint: Checkpoint, src_pieces: list[str], tgt_pieces: list[str], attention: tuple[int, int]):
    """The CTranslate2 TransformerSpec holding the checkpoint's weights (float32), returning the
    mean attention of `attention`'s (decoder layer, first heads)."""
    from ctranslate2.specs import transformer_spec

    cfg = checkpoint.recipe.model
    merged = checkpoint.weights
    check_weights(cfg, merged, checkpoint.path)
    weights = {name: t.float().numpy() for name, t in merged.items()}

    from ctranslate2.specs import common_spec

    activation = {"relu": common_spec.Activation.RELU, "swish": common_spec.Activation.SWISH,
                  "gelu": common_spec.Activation.GELU, "gelu_tanh": common_spec.Activation.GELUTanh}[cfg.activation]
    relative, rms = cfg.positions == "relative", cfg.norm_type == "rms"
    layer, heads = attention  # what return_attention gives
    spec = transformer_spec.TransformerSpec.from_config(
        (cfg.encoder_layers, cfg.decoder_layers), cfg.heads, pre_norm=cfg.norm == "pre", activation=activation,
        layernorm_embedding=cfg.embedding_norm, alignment_layer=layer, alignment_heads=heads,
        relative_attention_bias=relative, ffn_glu=cfg.gated_ffn, rms_norm=rms)
    # torch.nn.LayerNorm's default, which nmt uses; its RMSNorm's (T5's)
    spec.config.layer_norm_epsilon = 1e-6 if rms else 1e-5
    spec.config.add_source_eos = True  # nmt's sources end with EOS
    spec.config.decoder_start_token = tgt_pieces[EOS if cfg.decoder_start == "eos" else BOS]
    if cfg.positions == "learned":  # a table per side
        positions = {side: weights[f"{side}_embed.positions.weight"] for side in ("src", "tgt")}
    elif relative:
        positions = None
    else:
        table = PositionalEncoding(cfg.d_model, cfg.max_positions, cfg.positions).table.numpy()
        positions = {"src": table, "tgt": table}

    def linear(target, prefix: str) -> None:
        target.weight = weights[f"{prefix}.weight"]
        if cfg.bias:
            target.bias = weights[f"{prefix}.bias"]

    def norm(target, prefix: str) -> None:
        target.gamma = weights[f"{prefix}.weight"]
        if not rms:
            target.beta = weights[f"{prefix}.bias"]

    encoder, decoder = spec.encoder, spec.decoder
    encoder.embeddings[0].weight = weights["src_embed.tokens.weight"]
    decoder.embeddings.weight = weights["tgt_embed.tokens.weight"]
    if positions is not None:
        encoder.position_encodings.encodings = positions["src"]
        decoder.position_encodings.encodings = positions["tgt"]
    encoder.scale_embeddings = decoder.scale_embeddings = cfg.scale_embeddings
    if cfg.embedding_norm:
        norm(encoder.layernorm_embedding, "src_embed.norm")
        norm(decoder.layernorm_embedding, "tgt_embed.norm")
    if cfg.norm == "pre":
        norm(encoder.layer_norm, "encoder_norm")
        norm(decoder.layer_norm, "decoder_norm")

    def self_attention(target, prefix: str, sublayer: str, side: str) -> None:
        linear(target.linear[0], f"{prefix}.self_attn.qkv_proj")
        linear(target.linear[1], f"{prefix}.self_attn.out_proj")
        norm(target.layer_norm, f"{prefix}.{sublayer}.norm")
        if cfg.head_dim:  # CTranslate2 would divide by the square root of d_model / heads
            target.queries_scale = np.dtype("float32").type(cfg.head_dim ** -0.5)
        if relative:  # the side's one table, in every layer (as CTranslate2's T5 converter shares it)
            target.relative_attention_bias = weights[f"{side}_position_bias.weight"]
            target.relative_attention_max_distance = np.dtype("int32").type(cfg.relative_max_distance)

    def feed_forward(target, prefix: str) -> None:
        linear(target.linear_0, f"{prefix}.feed_forward.w1")
        if cfg.gated_ffn:
            linear(target.linear_0_noact, f"{prefix}.feed_forward.w3")
        linear(target.linear_1, f"{prefix}.feed_forward.w2")
        norm(target.layer_norm, f"{prefix}.ff_sublayer.norm")

    for i, layer in enumerate(encoder.layer):
        self_attention(layer.self_attention, f"encoder_layers.{i}", "attn_sublayer", "encoder")
        feed_forward(layer.ffn, f"encoder_layers.{i}")
    for i, layer in enumerate(decoder.layer):
        p = f"decoder_layers.{i}"
        self_attention(layer.self_attention, p, "self_sublayer", "decoder")
        if cfg.head_dim:
            layer.attention.queries_scale = np.dtype("float32").type(cfg.head_dim ** -0.5)
        linear(layer.attention.linear[0], f"{p}.cross_attn.q_proj")
        linear(layer.attention.linear[1], f"{p}.cross_attn.kv_proj")  # keys and values, fused in this order
        linear(layer.attention.linear[2], f"{p}.cross_attn.out_proj")
        norm(layer.attention.layer_norm, f"{p}.cross_sublayer.norm")
        feed_forward(layer.ffn, p)

    output = weights["tgt_embed.tokens.weight"] if cfg.tie_output else weights["output_proj.weight"]
    decoder.projection.weight = output
    bias = np.zeros(output.shape[0], dtype=np.float32)
    bias[[PAD, BOS]] = FORBIDDEN_LOGIT
    decoder.projection.bias = bias

    spec.register_source_vocabulary(src_pieces)
    spec.register_target_vocabulary(tgt_pieces)
    return spec


def export_ctranslate2(checkpoint: Path, out: Path, quantization: str | None = None, force: bool = False,
                       shortlist: Path | None = None) -> dict:
    # mapped: an export reads each weight once, as it converts it, and keeps none
    return export_checkpoint(open_checkpoint(checkpoint, mapped=True), Path(out), quantization, force, shortlist)


def export_checkpoint(loaded: Checkpoint, out: Path, quantization: str | None = None,
                      force: bool = False, shortlist: Path | None = None, source_start: str | None = None,
                      attention: tuple[int, int] | None = None) -> dict:
    """Export a loaded checkpoint (or an average of several) to `out`; with `shortlist` (default:
    the recipe's decode.shortlist), that vocabulary map as the model's vmap.txt (nmt.decode.shortlist).
    `source_start`: a token CTranslate2 itself puts in front of every source (its config's
    add_source_bos), for a caller that gives the text alone (an Argos package's language token).
    `attention`: the (decoder layer, first heads) the export returns for alignments, for a study
    that compares them (default: attention_for_alignments)."""
    ctranslate2 = require_ctranslate2()
    if quantization is not None and quantization not in QUANTIZATIONS:
        raise NmtError(f"--quantization {quantization}: choose one of {', '.join(QUANTIZATIONS)}")
    recipe, payload, checkpoint = loaded.recipe, loaded.payload, loaded.path
    if recipe.model.residual_free_encoder_layer is not None:
        raise NmtError(f"{checkpoint}: model.residual_free_encoder_layer: CTranslate2's Transformer has a residual "
                       "connection around every sublayer; translate this model with nmt's own engine")
    protos = tokenizer_models(payload)
    pieces = {}
    for side, proto in protos.items():
        sp = load_processor(model_proto=proto)
        pieces[side] = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]

    attention = attention or attention_for_alignments(recipe)
    spec = build_spec(loaded, pieces["src"], pieces["tgt"], attention)
    if source_start is not None:
        if source_start not in pieces["src"]:
            raise NmtError(f"{checkpoint}: the source vocabulary has no {source_start} token")
        spec.config.add_source_bos, spec.config.bos_token = True, source_start
    shortlist = shortlist or recipe.decode.shortlist
    if shortlist:
        if not Path(shortlist).is_file():
            raise NmtError(f"{shortlist}: shortlist not found (--shortlist, or the recipe's decode.shortlist)")
        read_vocabulary_map(shortlist)  # a file of another kind is an error here, not in the exported model
        spec.register_vocabulary_mapping(str(shortlist))
    spec.validate()
    spec.optimize(quantization=quantization)
    info = {
        "format": EXPORT_FORMAT,
        "engine": "ctranslate2",
        "quantization": quantization or "float32",
        "checkpoint": str(checkpoint),
        "progress": {k: payload.get("progress", {}).get(k) for k in ("step", "epoch")},
        "versions": {"nmt": nmt.__version__, "ctranslate2": ctranslate2.__version__},
        "recipe": payload["recipe"],
        "shortlist": str(shortlist) if shortlist else None,
        "alignment_attention": dict(zip(("layer", "heads"), attention)),
    }

    def fill(directory: Path) -> None:
        spec.save(str(directory))
        (directory / SOURCE_SPM).write_bytes(protos["src"])
        (directory / TARGET_SPM).write_bytes(protos["tgt"])
        (directory / EXPORT_INFO).write_text(json.dumps(info, indent=2, ensure_ascii=False) + "\n")

    write_directory_atomically(out, fill, force)
    return {"directory": str(out), "quantization": info["quantization"], "shortlist": info["shortlist"],
            "direction": f"{recipe.data.src_lang}-{recipe.data.tgt_lang}",
            "bytes": sum(f.stat().st_size for f in Path(out).iterdir())}


def has_shortlist(directory: Path) -> bool:
    return (Path(directory) / VMAP).is_file()


def read_export_info(directory: Path) -> dict:
    path = Path(directory) / EXPORT_INFO
    info = read_description(path)
    if info.get("format") != EXPORT_FORMAT:
        raise NmtError(f"{path}: not an nmt CTranslate2 export (format {EXPORT_FORMAT} expected)")
    return info
