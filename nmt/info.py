"""`nmt info`: what a checkpoint is — its progress, shape, vocabularies, recipe and provenance —
or what an export directory (CTranslate2's or ONNX's) holds and was exported from."""

from __future__ import annotations

from pathlib import Path

from nmt.checkpoint import best_dev, checkpoint_recipe, count_parameters, frozen_reference, open_checkpoint, tokenizer_models
from nmt.config import MODEL_SHAPE_KEYS, Recipe
from nmt.data.languages import listed
from nmt.data.tokenizer import load_processor
from nmt.export.ctranslate2 import SOURCE_SPM, TARGET_SPM, is_export_dir, read_export_info
from nmt.export.onnx import is_onnx_export, read_onnx_config
from nmt.model.guided_alignment import alignment_heads


def info_of(path: Path) -> dict:
    """checkpoint_info, or export_info for an export directory."""
    return export_info(path) if is_export_dir(path) or is_onnx_export(path) else checkpoint_info(path)


def checkpoint_info(path: Path) -> dict:
    checkpoint = open_checkpoint(path, mapped=True)  # counts and shapes: the weights themselves stay unread
    payload, recipe = checkpoint.payload, checkpoint.recipe
    frozen = frozen_reference(path)  # (LoRA, train.freeze) the file beside it that holds the weights not trained
    progress = payload.get("progress", {})
    vocab = {side: load_processor(model_proto=proto).get_piece_size() for side, proto in tokenizer_models(payload).items()}
    return {
        "checkpoint": str(path),
        "step": progress.get("step"),
        "epoch": progress.get("epoch"),
        "training_minutes": round(progress.get("elapsed_seconds", 0.0) / 60, 1),
        "training_seconds": round(progress.get("elapsed_seconds", 0.0), 1),
        "parameters": count_parameters(payload["model"]),
        **_recipe_facts(recipe, vocab),
        "best_dev": best_dev(payload, recipe),
        "averaged_from": payload.get("averaged_from"),
        "ema_decay": recipe.train.ema_decay or None,  # the weights: their moving average over training
        "imported_from": payload.get("imported_from"),
        "init_from": recipe.train.init_from,
        "frozen_weights": None if frozen is None else {"file": frozen[0], "weights": len(frozen[1])},
        "versions": payload.get("versions", {"torch": "unknown", "nmt": "unknown"}),
        "recipe": payload["recipe"],
    }


def export_info(directory: Path) -> dict:
    """An export directory's description: its format and weights, the checkpoint and step it was
    exported from (where the export recorded them), and its recipe's model and languages."""
    directory = Path(directory)
    if is_onnx_export(directory):
        config = read_onnx_config(directory)
        described = {"format": "onnx", "quantization": "int8" if config.get("quantized") else "float32",
                     "checkpoint": config.get("checkpoint"), "progress": config.get("progress") or {},
                     "versions": {"nmt": config.get("nmt_version")}, "recipe": config.get("recipe")}
        spm = {"src": directory / "source.spm", "tgt": directory / "target.spm"}
    else:
        exported = read_export_info(directory)
        described = {key: exported.get(key) for key in ("quantization", "checkpoint", "versions", "recipe")}
        described |= {"format": "ctranslate2", "progress": exported.get("progress") or {},
                      "shortlist": exported.get("shortlist"), "alignment_attention": exported.get("alignment_attention")}
        spm = {"src": directory / SOURCE_SPM, "tgt": directory / TARGET_SPM}
    recipe = None if described["recipe"] is None else checkpoint_recipe(described, directory)
    vocab = {side: load_processor(path).get_piece_size() for side, path in spm.items()}
    return {"export": str(directory), "format": described["format"], "quantization": described["quantization"],
            "bytes": sum(f.stat().st_size for f in directory.iterdir() if f.is_file()),
            "exported_from": described["checkpoint"], "step": described["progress"].get("step"),
            "epoch": described["progress"].get("epoch"), "shortlist": described.get("shortlist"),
            "alignment_attention": described.get("alignment_attention"),
            **(_recipe_facts(recipe, vocab) if recipe else {"vocabulary": {"src": vocab["src"], "tgt": vocab["tgt"]}}),
            "versions": described["versions"], "recipe": described["recipe"]}


def _recipe_facts(recipe: Recipe, vocab: dict[str, int]) -> dict:
    """What a checkpoint and an export say alike: the model's shape, directions, languages,
    control tokens, vocabularies, and the guided alignment heads."""
    return {
        "model": {k: getattr(recipe.model, k) for k in MODEL_SHAPE_KEYS},
        "direction": f"{recipe.data.src_lang}-{recipe.data.tgt_lang}",
        "directions": [f"{s}-{t}" for s, t in recipe.data.directions()],
        "languages": recipe.data.languages,
        "control_tokens": recipe.data.control_tokens(),
        "language_token_as_text": recipe.data.language_token_as_text,
        "target_control_tokens": recipe.data.target_control_tokens(),
        "vocabulary": {"joint": recipe.tokenizer.joint, "src": vocab["src"], "tgt": vocab["tgt"]},
        # guided alignment: (decoder layer, heads) that give its word alignments, in any engine
        "alignment_heads": alignment_heads(recipe),
    }


FORMATS = {"ctranslate2": "CTranslate2", "onnx": "ONNX (encoder and decoder-step graphs for onnxruntime)"}


def describe(info: dict) -> list[str]:
    """The lines `nmt info` prints for a person."""
    if "export" in info:
        return _describe_export(info)
    lines = [
        f"checkpoint   {info['checkpoint']}",
        *_direction(info),
        f"imported     from {info['imported_from']} (`nmt import`), not trained by nmt" if info["imported_from"] else
        "progress     none recorded (imported models only, averaged)" if info["step"] is None else
        f"progress     step {info['step']:,}, epoch {info['epoch']}, {_duration(info['training_seconds'])} of training",
        f"model        {info['parameters']:,} parameters: {_shape(info['model'])}",
        _vocabulary(info),
    ]
    lines += _languages(info)
    if info["best_dev"]:
        b = info["best_dev"]
        lines.append(f"best dev     {b['metric']} {b['score']} at step {b['step']:,}")
    if info["ema_decay"]:
        lines.append(f"weights      their exponential moving average over training (train.ema_decay {info['ema_decay']:g})")
    if info["averaged_from"]:
        lines.append(f"averaged     {len(info['averaged_from'])} checkpoints: {', '.join(info['averaged_from'])}")
    if info["init_from"]:
        lines.append(f"fine-tuned   from {info['init_from']}")
    if info["frozen_weights"]:
        f = info["frozen_weights"]
        lines.append(f"frozen       {f['weights']:,} weight tensors in {f['file']} beside it (read together; "
                     "`nmt average CKPT -o FILE` writes one whole checkpoint)")
    if info["alignment_heads"]:
        lines.append(f"alignments   from {_guided_heads(info)}, trained on "
                     "word alignments (train.guided_alignment): CTranslate2 and ONNX exports return them too")
    v = info["versions"]
    lines.append(f"versions     nmt {v['nmt']}, torch {v['torch']}")
    lines.append(f"recipe       `nmt info {info['checkpoint']} --json` prints it whole")
    return lines


def _describe_export(info: dict) -> list[str]:
    runs = f"; `nmt translate -c {info['export']}` and `nmt serve` run it" if "model" in info else ""
    lines = [f"export       {info['export']}: {FORMATS[info['format']]}, {info['quantization']}, "
             f"{info['bytes'] / 1e6:.1f} MB{runs}"]
    source = info["exported_from"] or "a checkpoint this export does not name"
    step = f" at step {info['step']:,}, epoch {info['epoch']}" if info["step"] is not None else ""
    lines.append(f"exported     from {source}{step}")
    if "model" not in info:  # an ONNX export written before it kept the recipe
        lines.append(f"vocabulary   {info['vocabulary']['src']:,} source, {info['vocabulary']['tgt']:,} target pieces")
        lines.append(f"recipe       not kept by this export (nmt {info['versions'].get('nmt')}); export it again for nmt translate")
        return lines
    lines += [*_direction(info), f"model        {_shape(info['model'])}", _vocabulary(info), *_languages(info)]
    if info.get("shortlist"):
        lines.append(f"shortlist    {info['shortlist']} (decode.shortlist)")
    if info["alignment_heads"]:
        lines.append(f"alignments   from {_guided_heads(info)} (guided alignment)")
    elif info.get("alignment_attention"):  # a CTranslate2 export of an unguided model
        layer, heads = info["alignment_attention"]["layer"], info["alignment_attention"]["heads"]
        lines.append(f"alignments   from decoder layer {layer}'s {heads} heads (the checkpoint averages every layer's)")
    versions = ", ".join(f"{name} {version}" for name, version in info["versions"].items() if version)
    lines.append(f"versions     {versions or 'not recorded'}")
    lines.append(f"recipe       `nmt info {info['export']} --json` prints it whole")
    return lines


def _guided_heads(info: dict) -> str:
    layer, heads = info["alignment_heads"]
    return f"decoder layer {layer}'s first {heads} head{'s' if heads > 1 else ''}"


def _direction(info: dict) -> list[str]:
    trained = f" (trained: {', '.join(info['directions'])})" if info["directions"] != [info["direction"]] else ""
    return [f"direction    {info['direction']}{trained}"]


def _shape(m: dict) -> str:
    return (f"{m['encoder_layers']}+{m['decoder_layers']} layers, d_model {m['d_model']}, {m['heads']} heads, "
            f"d_ff {m['d_ff']}, {m['norm']}-LN" + (", shared embeddings" if m["share_embeddings"] else "")
            + "".join(f", {text}" for key, value, text in (("positions", "relative", "relative positions"),
                                                          ("norm_type", "rms", "RMSNorm"), ("gated_ffn", True, "gated feed-forwards"))
                      if m.get(key) == value))


def _vocabulary(info: dict) -> str:
    v = info["vocabulary"]
    return f"vocabulary   {'joint ' if v['joint'] else ''}{v['src']:,} source, {v['tgt']:,} target pieces"


def _languages(info: dict) -> list[str]:
    lines = []
    if info["languages"]:
        lines.append(f"languages    {len(info['languages'])}, any direction between them: {listed(info['languages'], ' ')}")
    if info["control_tokens"]:
        where = ("in front of the source, after the word boundary ▁, as text is (`<2xx> text`)"
                 if info.get("language_token_as_text") else "in front of the source")
        lines.append(f"tokens       {listed(info['control_tokens'], ' ')} {where} (language, corpus tags)")
    if info["target_control_tokens"]:
        lines.append(f"tokens       {listed(info['target_control_tokens'], ' ')} forced first in the output (language)")
    return lines


def _duration(seconds: float) -> str:
    """A training time as read at a glance: seconds, minutes or hours."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"
