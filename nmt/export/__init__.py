"""Export a trained checkpoint to another inference engine's format (today: CTranslate2)."""

from __future__ import annotations

from pathlib import Path

from nmt.errors import NmtError

FORMATS = ("ctranslate2",)


def export_checkpoint(checkpoint: Path, out: Path, format: str = "ctranslate2",
                      quantization: str | None = None, force: bool = False) -> dict:
    """Convert `checkpoint` into `out`; returns what was written (for the CLI to report)."""
    if format not in FORMATS:
        raise NmtError(f"--format {format}: choose one of {', '.join(FORMATS)}")
    from nmt.export.ctranslate2 import export_ctranslate2

    return export_ctranslate2(checkpoint, out, quantization, force)
