"""Files that appear only when whole: written beside their path under a hidden name, then renamed
over it, so that a failed or interrupted write leaves whatever was there before. The system's
refusals (a folder in the way, no such folder, a full disk) are one-line errors naming the path,
and an existing device or pipe (`-o /dev/null`) is written to, never replaced by a regular file.
A file named .gz, .xz or .bz2 is written compressed, as nmt reads such a file."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import lzma
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from nmt.errors import NmtError


# compressed files, by their suffix: read as their text wherever nmt reads a file of text
# (corpora, inputs to translate), and written compressed wherever it writes one so named
COMPRESSED = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}


def line_count(n: int) -> str:
    """A count of lines as a message says it: "1 line", "2,000 lines"."""
    return f"{n:,} line{'s' * (n != 1)}"


def hidden_beside(path: Path, suffix: str) -> Path:
    """A hidden file beside `path` named for it: `.big.de.SUFFIX` (`.x.SUFFIX` for a hidden `.x`)."""
    hidden = path.name if path.name.startswith(".") else f".{path.name}"
    return path.with_name(f"{hidden}.{suffix}")


def cannot_write(path: Path | str, error: OSError) -> NmtError:
    return NmtError(f"{path}: cannot write there ({error.strerror or error})")


def write_failure(error: BaseException) -> OSError | None:
    """The system's refusal behind `error`: the error itself where it is an OSError, or one it was
    raised while handling. torch.save, when a write fails (a full disk), raises a RuntimeError of
    its own as it closes the half-written archive, with the OSError as its context. None for an
    error of nmt's own (already one line) and for Ctrl-C."""
    if isinstance(error, NmtError) or not isinstance(error, Exception):
        return None
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, OSError):
            return error
        seen.add(id(error))  # (`raise ... from None` hides its context: not followed)
        error = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
    return None


@contextmanager
def replaced_whole(path: Path | str, mode: str = "w", sync: bool = False, newline: str | None = None) -> Iterator[IO]:
    """The file to write `path`'s new content into (text in UTF-8, or bytes with mode "wb"); it
    takes `path`'s place when the block ends without an error. `sync`: on disk before the rename
    (checkpoints). `newline`: open()'s, for text ("": line ends written as they are given). An
    OSError inside the block, or an error raised while handling one (write_failure), is the
    write's (cannot_write)."""
    path = Path(path)
    if path.is_dir():
        raise NmtError(f"{path}: is a directory; name a file to write")
    encoding = None if "b" in mode else "utf-8"
    if path.exists() and not path.is_file():
        try:
            with open(path, mode, encoding=encoding, newline=newline) as f:
                yield f
        except OSError as e:
            raise cannot_write(path, e) from None
        return
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _opened_to_write(tmp, path, mode, encoding, newline) as f:
            yield f
            if sync:
                f.flush()
                os.fsync(f.fileno())
        tmp.replace(path)
    except BaseException as e:
        _discard(tmp)
        if (failure := write_failure(e)) is not None:
            raise cannot_write(path, failure) from None
        raise


@contextmanager
def _opened_to_write(tmp: Path, path: Path, mode: str, encoding: str | None, newline: str | None) -> Iterator[IO]:
    """`tmp` open to write what becomes `path`: compressed where `path`'s suffix says so (a gzip
    header naming `path`'s file, not the hidden one)."""
    suffix = path.suffix.lower()
    if suffix not in COMPRESSED:
        with open(tmp, mode, encoding=encoding, newline=newline) as f:
            yield f
        return
    with contextlib.ExitStack() as stack:
        raw = stack.enter_context(open(tmp, "wb"))
        packed = stack.enter_context(gzip.GzipFile(str(path), "wb", fileobj=raw) if suffix == ".gz"
                                     else COMPRESSED[suffix](raw, "wb"))
        yield packed if "b" in mode else stack.enter_context(io.TextIOWrapper(packed, encoding, newline=newline))


def put_in_place(written: Path, path: Path) -> None:
    """`written`, a finished file of plain text, becomes `path`: renamed, or where `path`'s name
    says it is compressed, compressed into it (replaced_whole) and removed."""
    if path.suffix.lower() not in COMPRESSED:
        written.replace(path)
        return
    with open(written, "rb") as plain, replaced_whole(path, "wb") as f:
        shutil.copyfileobj(plain, f, 1 << 20)
    written.unlink()


def _discard(tmp: Path) -> None:
    try:
        tmp.unlink(missing_ok=True)
    except OSError:  # its folder was never there
        pass


def cached_record(path: Path) -> dict:
    """A JSON object nmt wrote to remember what an earlier run did, or {} where it is missing or
    unreadable (written by hand, cut short): the work it describes is then done again."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def rezipped(data: bytes, replaced: dict[str, bytes]) -> bytes:
    """The zip archive `data` (an e-book, an Office document) with the members named in `replaced`
    given that content, every other copied as it was: the same members in the same order, each
    compressed as before (an EPUB's mimetype first and stored, as its readers need)."""
    import io
    import zipfile

    source, out = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for info in source.infolist():
            archive.writestr(info, replaced[info.filename] if info.filename in replaced else source.read(info),
                             compress_type=info.compress_type)
    return out.getvalue()
