"""Reading parallel text: plain or gzip files, UTF-8 (BOM and CRLF tolerated), with clear errors."""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from itertools import zip_longest
from pathlib import Path

from nmt.errors import NmtError


def split_file(prefix: str, lang: str) -> Path:
    """The file of one side of a split: `{prefix}.{lang}` or `{prefix}.{lang}.gz`."""
    for candidate in (Path(f"{prefix}.{lang}"), Path(f"{prefix}.{lang}.gz")):
        if candidate.is_file():
            return candidate
    raise NmtError(f"{prefix}.{lang}: file not found (also tried {prefix}.{lang}.gz)")


def _open_binary(path: Path):
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def read_lines(path: Path) -> Iterator[str]:
    """Yield lines without their line ending; names file and line on invalid UTF-8."""
    try:
        with _open_binary(path) as raw:
            for number, data in enumerate(io.BufferedReader(raw), start=1):
                try:
                    line = data.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise NmtError(
                        f"{path}:{number}: invalid UTF-8 at byte {e.start} of the line"
                    ) from None
                if number == 1 and line.startswith("\ufeff"):
                    line = line[1:]
                yield line.rstrip("\r\n")
    except (OSError, EOFError) as e:
        if isinstance(e, FileNotFoundError):
            raise NmtError(f"{path}: file not found") from None
        raise NmtError(f"{path}: cannot read: {e}") from None


def read_parallel(src_path: Path, tgt_path: Path) -> Iterator[tuple[str, str]]:
    """Yield (source, target) pairs; the two files must have the same number of lines."""
    src_lines, tgt_lines = read_lines(src_path), read_lines(tgt_path)
    count = 0
    for src, tgt in zip_longest(src_lines, tgt_lines):
        if src is None or tgt is None:
            longer_is_src = tgt is None
            rest = 1 + sum(1 for _ in (src_lines if longer_is_src else tgt_lines))
            n_src, n_tgt = (count + rest, count) if longer_is_src else (count, count + rest)
            raise NmtError(f"{src_path} has {n_src} lines but {tgt_path} has {n_tgt}: "
                           "parallel files must have the same number of lines")
        count += 1
        yield src, tgt
    if count == 0:
        raise NmtError(f"{src_path}: empty file (no sentence pairs)")
