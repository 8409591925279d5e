"""Exact-duplicate detection for corpora too large to keep a hash set in memory.

A first pass hashes every pair (16-byte blake2b) and appends (hash, line) records to one of 256
bucket files on disk, chosen by the hash's first byte. Each bucket is then sorted on its own:
equal hashes become neighbours, and every line after the first of a run repeats an earlier pair.
Memory is one bucket (24 B × pairs / 256) plus one bit per line, not a set entry (~100 B) per pair.
"""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
from collections.abc import Iterable
from itertools import chain, islice
from pathlib import Path

import numpy as np

from nmt.files import cannot_write

BUCKETS = 256
_CHUNK = 50_000


def pair_digests(pairs: list[tuple[str, str]]) -> np.ndarray:
    """(n, 2) uint64: a 128-bit hash per pair, first column the high half. The source's length
    leads, so that no split of the same characters between the sides hashes alike."""
    joined = b"".join(hashlib.blake2b(f"{len(s)}:{s}{t}".encode(), digest_size=16).digest() for s, t in pairs)
    return np.frombuffer(joined, dtype=">u8").reshape(-1, 2).astype(np.uint64)


class DuplicateLines:
    """The set of line numbers that repeat an earlier line's pair, one bit per line."""

    def __init__(self, lines: int):
        self.lines = lines
        self._bits = np.zeros((lines + 7) // 8, dtype=np.uint8)

    def mark(self, line_numbers: np.ndarray) -> None:
        np.bitwise_or.at(self._bits, line_numbers >> 3, (1 << (line_numbers & 7)).astype(np.uint8))

    def __contains__(self, line: int) -> bool:
        return line < self.lines and bool(self._bits[line >> 3] >> (line & 7) & 1)

    def __len__(self) -> int:
        return int(np.unpackbits(self._bits).sum())


def find_duplicates(pairs: Iterable[tuple[str, str]], workdir: Path) -> DuplicateLines:
    """Which lines of `pairs` (numbered from 0) repeat an earlier pair exactly. A corpus of one
    chunk is sorted in memory; a larger one goes through bucket files, which live in a temporary
    folder under `workdir` and are removed afterwards."""
    iterator = iter(pairs)
    first = list(islice(iterator, _CHUNK))
    second = list(islice(iterator, _CHUNK))
    if not second:  # 50k pairs' records take 1.2 MB: no disk needed
        duplicates = DuplicateLines(len(first))
        _mark_repeats(_records(first, 0), duplicates)
        return duplicates
    try:
        return _duplicates_through_buckets(chain((first, second), iter(lambda: list(islice(iterator, _CHUNK)), [])),
                                           workdir)
    except OSError as e:  # the bucket files' writes (a full disk)
        raise cannot_write(workdir, e) from None


def _duplicates_through_buckets(chunks: Iterable[list[tuple[str, str]]], workdir: Path) -> DuplicateLines:
    with tempfile.TemporaryDirectory(dir=workdir, prefix="dedup.") as tmp:
        buckets = [Path(tmp) / f"{b:03d}.u64" for b in range(BUCKETS)]
        with contextlib.ExitStack() as stack:
            handles = [stack.enter_context(open(path, "wb")) for path in buckets]
            lines = 0
            for chunk in chunks:  # one at a time: the whole corpus's text is never held at once
                records = _records(chunk, lines)
                lines += len(chunk)
                bucket_of = (records[:, 0] >> np.uint64(56)).astype(np.intp)
                order = np.argsort(bucket_of, kind="stable")
                starts = np.searchsorted(bucket_of[order], np.arange(BUCKETS + 1))
                for b in np.flatnonzero(np.diff(starts)):
                    handles[b].write(records[order[starts[b]:starts[b + 1]]].tobytes())

        duplicates = DuplicateLines(lines)
        for path in buckets:
            _mark_repeats(np.fromfile(path, dtype=np.uint64).reshape(-1, 3), duplicates)
        return duplicates


def _records(chunk: list[tuple[str, str]], first_line: int) -> np.ndarray:
    """(n, 3) uint64: each pair's two hash halves and its line number."""
    records = np.empty((len(chunk), 3), dtype=np.uint64)
    records[:, :2] = pair_digests(chunk)
    records[:, 2] = np.arange(first_line, first_line + len(chunk), dtype=np.uint64)
    return records


def _mark_repeats(records: np.ndarray, duplicates: DuplicateLines) -> None:
    """Marks every line after the first of each run of equal hashes among `records`."""
    if len(records) < 2:
        return
    records = records[np.lexsort((records[:, 2], records[:, 1], records[:, 0]))]  # by hash, then line
    repeats = (records[1:, 0] == records[:-1, 0]) & (records[1:, 1] == records[:-1, 1])
    duplicates.mark(records[1:, 2][repeats].astype(np.int64))
