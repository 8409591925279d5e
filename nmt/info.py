"""`nmt info`: what a checkpoint is — its progress, shape, vocabularies, recipe and provenance."""

from __future__ import annotations

from pathlib import Path

from nmt.checkpoint import best_dev, count_parameters, frozen_reference, open_checkpoint, tokenizer_models
from nmt.config import MODEL_SHAPE_KEYS
from nmt.data.languages import listed
from nmt.data.tokenizer import load_processor
from nmt.model.guided_alignment import alignment_heads


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
        "model": {k: getattr(recipe.model, k) for k in MODEL_SHAPE_KEYS},
        "direction": f"{recipe.data.src_lang}-{recipe.data.tgt_lang}",
        "directions": [f"{s}-{t}" for s, t in recipe.data.directions()],
        "languages": recipe.data.languages,
        "control_tokens": recipe.data.control_tokens(),
        "target_control_tokens": recipe.data.target_control_tokens(),
        "vocabulary": {"joint": recipe.tokenizer.joint, "src": vocab["src"], "tgt": vocab["tgt"]},
        "best_dev": best_dev(payload, recipe),
        "averaged_from": payload.get("averaged_from"),
        "ema_decay": recipe.train.ema_decay or None,  # the weights: their moving average over training
        "imported_from": payload.get("imported_from"),
        "init_from": recipe.train.init_from,
        "frozen_weights": None if frozen is None else {"file": frozen[0], "weights": len(frozen[1])},
        # guided alignment: (decoder layer, heads) that give its word alignments, in any engine
        "alignment_heads": alignment_heads(recipe),
        "versions": payload.get("versions", {"torch": "unknown", "nmt": "unknown"}),
        "recipe": payload["recipe"],
    }


def describe(info: dict) -> list[str]:
    """The lines `nmt info` prints for a person."""
    m = info["model"]
    lines = [
        f"checkpoint   {info['checkpoint']}",
        f"direction    {info['direction']}" + (f" (trained: {', '.join(info['directions'])})"
                                                 if info["directions"] != [info["direction"]] else ""),
        f"imported     from {info['imported_from']} (`nmt import`), not trained by nmt" if info["imported_from"] else
        "progress     none recorded (imported models only, averaged)" if info["step"] is None else
        f"progress     step {info['step']:,}, epoch {info['epoch']}, {_duration(info['training_seconds'])} of training",
        f"model        {info['parameters']:,} parameters: {m['encoder_layers']}+{m['decoder_layers']} layers, "
        f"d_model {m['d_model']}, {m['heads']} heads, d_ff {m['d_ff']}, {m['norm']}-LN"
        + (", shared embeddings" if m["share_embeddings"] else "")
        + "".join(f", {text}" for key, value, text in (("positions", "relative", "relative positions"),
                                                      ("norm_type", "rms", "RMSNorm"), ("gated_ffn", True, "gated feed-forwards"))
                  if m.get(key) == value),
        f"vocabulary   {'joint ' if info['vocabulary']['joint'] else ''}{info['vocabulary']['src']:,} source, "
        f"{info['vocabulary']['tgt']:,} target pieces",
    ]
    if info["languages"]:
        lines.append(f"languages    {len(info['languages'])}, any direction between them: {listed(info['languages'], ' ')}")
    if info["control_tokens"]:
        lines.append(f"tokens       {listed(info['control_tokens'], ' ')} in front of the source (language, corpus tags)")
    if info["target_control_tokens"]:
        lines.append(f"tokens       {listed(info['target_control_tokens'], ' ')} forced first in the output (language)")
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
        layer, heads = info["alignment_heads"]
        lines.append(f"alignments   from decoder layer {layer}'s first {heads} head{'s' if heads > 1 else ''}, trained on "
                     "word alignments (train.guided_alignment): CTranslate2 exports return them too")
    v = info["versions"]
    lines.append(f"versions     nmt {v['nmt']}, torch {v['torch']}")
    lines.append(f"recipe       `nmt info {info['checkpoint']} --json` prints it whole")
    return lines


def _duration(seconds: float) -> str:
    """A training time as read at a glance: seconds, minutes or hours."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"
