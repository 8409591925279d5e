"""Export a trained checkpoint to another inference engine's format (today: CTranslate2)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from nmt.errors import NmtError

FORMATS = ("ctranslate2",)


def write_directory_atomically(out: Path, fill: Callable[[Path], None], force: bool = False) -> None:
    """Build the directory in a hidden sibling, then rename it to `out`: a failed or interrupted
    export leaves nothing at `out` (and, with `force`, the old directory stays until the new one is whole)."""
    out = Path(out)
    if out.exists() and not force:
        raise NmtError(f"{out}: already exists (use --force to replace it)")
    if out.exists() and not out.is_dir():
        raise NmtError(f"{out}: exists and is not a directory")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    except OSError as e:
        raise NmtError(f"{out}: cannot write there ({e.strerror or e})") from None
    try:
        fill(scratch)
        if out.exists():  # --force: swap the new directory in, then drop the old one
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            out.rename(old)
            scratch.rename(out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            scratch.rename(out)
    except OSError as e:
        shutil.rmtree(scratch, ignore_errors=True)
        raise NmtError(f"{out}: cannot write there ({e.strerror or e})") from None
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def export_checkpoint(checkpoint: Path, out: Path, format: str = "ctranslate2",
                      quantization: str | None = None, force: bool = False) -> dict:
    """Convert `checkpoint` into `out`; returns what was written (for the CLI to report)."""
    if format not in FORMATS:
        raise NmtError(f"--format {format}: choose one of {', '.join(FORMATS)}")
    from nmt.export.ctranslate2 import export_ctranslate2

    return export_ctranslate2(checkpoint, out, quantization, force)
