"""An export directory written whole or not at all, and its description read back."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from nmt.errors import NmtError
from nmt.files import cannot_write, write_failure


def write_directory_atomically(out: Path, fill: Callable[[Path], None], force: bool = False) -> None:
    """Build the directory in a hidden sibling, then rename it to `out`: a failed or interrupted
    export leaves nothing at `out` (and, with `force`, the old directory stays until the new one is whole)."""
    out = Path(out)
    if out.exists() and not force:
        raise NmtError(f"{out}: already exists (--force replaces it)")
    if out.exists() and not out.is_dir():
        raise NmtError(f"{out}: exists and is not a directory")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    except OSError as e:
        raise cannot_write(out, e) from None
    try:
        fill(scratch)
        if out.exists():  # --force: swap the new directory in, then drop the old one
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            out.rename(old)
            scratch.rename(out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            scratch.rename(out)
    except BaseException as e:
        shutil.rmtree(scratch, ignore_errors=True)
        if (failure := write_failure(e)) is not None:
            raise cannot_write(out, failure) from None
        raise


def read_description(path: Path) -> dict:
    """An export's JSON description (nmt_export.json, onnx_config.json); a one-line error naming
    the file where it cannot be read or is not a JSON object."""
    try:
        description = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise NmtError(f"{path}: not a readable export description ({e})") from None
    if not isinstance(description, dict):
        raise NmtError(f"{path}: not a readable export description (not a JSON object)")
    return description
