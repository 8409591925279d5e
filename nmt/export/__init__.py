"""Export a trained checkpoint to another engine's format: CTranslate2, Hugging Face transformers, ONNX, or an
Argos Translate package."""

from __future__ import annotations

from pathlib import Path

from nmt.errors import NmtError

FORMATS = ("ctranslate2", "huggingface", "onnx", "argos")


def export_checkpoint(checkpoint: Path, out: Path, format: str = "ctranslate2",
                      quantization: str | None = None, force: bool = False, shortlist: Path | None = None,
                      src_lang: str | None = None, tgt_lang: str | None = None) -> dict:
    """Convert `checkpoint` into `out`; returns what was written (for the CLI to report).
    `shortlist` (CTranslate2 only; default: the recipe's decode.shortlist) goes with the model.
    `src_lang` and `tgt_lang` choose an Argos package's direction (the others hold every direction)."""
    if format not in FORMATS:
        raise NmtError(f"--format {format}: choose one of {', '.join(FORMATS)}")
    if format != "argos" and (src_lang or tgt_lang):
        raise NmtError(f"--src-lang, --tgt-lang: an Argos package's direction; a {format} export translates every "
                       "direction of the model")
    if format == "huggingface":
        if shortlist is not None:
            raise NmtError("--shortlist: transformers has no vocabulary map; export to ctranslate2")
        if quantization is not None:
            raise NmtError("--quantization: the huggingface export is float32 (quantize in transformers if needed)")
        from nmt.export.huggingface import export_huggingface

        return export_huggingface(checkpoint, out, force)
    if format == "onnx":
        if shortlist is not None:
            raise NmtError("--shortlist: the ONNX export has the whole output layer; export to ctranslate2")
        from nmt.export.onnx import export_onnx

        return export_onnx(checkpoint, out, quantization, force)
    if format == "argos":
        if shortlist is not None:
            raise NmtError("--shortlist: Argos Translate decodes without a vocabulary map; export to ctranslate2")
        from nmt.export.argos import export_argos

        return export_argos(checkpoint, out, quantization, force, src_lang=src_lang, tgt_lang=tgt_lang)
    from nmt.export.ctranslate2 import export_ctranslate2

    return export_ctranslate2(checkpoint, out, quantization, force, shortlist)


def not_translatable(directory: Path) -> str:
    """Why `nmt translate -c DIRECTORY` cannot translate with a directory that is neither a
    CTranslate2 nor an ONNX export: a transformers model (named, with what to do) or a run's folder."""
    from nmt.checkpoint import checkpoints_inside

    if (directory / "config.json").is_file():
        return (f"{directory}: a Hugging Face transformers model; translate the checkpoint it came from, "
                f"or `nmt import {directory}` first")
    return f"{directory}: a directory, neither a checkpoint nor a CTranslate2 or ONNX export{checkpoints_inside(directory)}"


def describe_export(summary: dict, checkpoint: Path, format: str) -> list[str]:
    """The lines `nmt export` prints: what was written, how to load it, where generation differs."""
    if format == "argos":
        codes = f", as {summary['codes']}" if summary["codes"] != summary["direction"] else ""
        return [f"exported {checkpoint} ({summary['direction']}{codes}, {summary['quantization']}) to {summary['file']}: "
                f"{summary['bytes'] / 1e6:.1f} MB; install with argostranslate.package.install_from_path"
                f"(\"{summary['file']}\") and translate with ARGOS_CHUNK_TYPE=SPACY (docs/serving.md)",
                *[f"note: {note}" for note in summary["notes"]]]
    use = {"huggingface": f'AutoModelForSeq2SeqLM.from_pretrained("{summary["directory"]}")',
           "onnx": f'nmt translate -c {summary["directory"]}` or `OnnxTranslator("{summary["directory"]}")'}.get(
        format, f"nmt translate -c {summary['directory']}")
    kind = f"{summary['architecture']}, " if "architecture" in summary else ""
    kind += "with its shortlist, " if summary.get("shortlist") else ""
    lines = [f"exported {checkpoint} ({summary['direction']}, {kind}{summary['quantization']}) to "
             f"{summary['directory']}: {summary['bytes'] / 1e6:.1f} MB; load with `{use}`"]
    return lines + [f"note: {note}" for note in summary.get("generation_differences", [])]
