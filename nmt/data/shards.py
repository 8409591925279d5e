"""Binarized, memory-mapped token shards: `{name}.bin` (token ids) + `{name}.idx` (offsets).

`.idx` holds two .npy arrays back to back: the int64 offsets (n + 1), then the token dtype.
Memory stays flat however large the corpus: the writer streams tokens and lengths to disk chunk
by chunk and turns the lengths into offsets in slices; the reader maps both files.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from nmt.errors import NmtError
from nmt.files import cannot_write

_SLICE = 1 << 16  # sentences whose offsets are computed at a time (close) or lengths (reader)


def _file(path_stem: Path, extension: str) -> Path:
    """`data/train.src` + `.bin` -> `data/train.src.bin` (with_suffix would replace `.src`)."""
    return path_stem.with_name(path_stem.name + extension)


def token_dtype(vocab_size: int) -> np.dtype:
    return np.dtype(np.uint16) if vocab_size <= np.iinfo(np.uint16).max + 1 else np.dtype(np.int32)


class ShardWriter:
    """Writes a shard under temporary names (`.tmp`), renamed into place by `close`; a write the
    system refuses (a full disk) is a one-line error naming the shard (its temporary files are
    left for the caller to remove with the rest of what it began)."""

    def __init__(self, path_stem: Path, vocab_size: int):
        self.path_stem = path_stem
        self.dtype = token_dtype(vocab_size)
        self._tmp_bin = _file(path_stem, ".bin.tmp")
        self._tmp_lengths = _file(path_stem, ".len.tmp")
        with self._refused_write():
            self._bin = open(self._tmp_bin, "wb")
            self._lengths = open(self._tmp_lengths, "wb")
        self.sentences = 0

    @contextmanager
    def _refused_write(self) -> Iterator[None]:
        try:
            yield
        except OSError as e:
            for handle in (getattr(self, "_bin", None), getattr(self, "_lengths", None)):
                try:  # closed now: its buffer's bytes, unwritable, raise no second error when collected
                    if handle is not None:
                        handle.close()
                except OSError:
                    pass
            raise cannot_write(_file(self.path_stem, ".bin"), e) from None

    def add(self, sentences: list[list[int]]) -> None:
        if not sentences:
            return
        lengths = np.fromiter((len(s) for s in sentences), dtype=np.int64, count=len(sentences))
        flat = np.fromiter((t for s in sentences for t in s), dtype=self.dtype, count=int(lengths.sum()))
        with self._refused_write():
            self._bin.write(flat.tobytes())
            self._lengths.write(lengths.tobytes())
        self.sentences += len(sentences)

    def close(self) -> int:
        """Finish both files atomically; return the number of sentences."""
        with self._refused_write():
            return self._close()

    def _close(self) -> int:
        self._bin.close()
        self._lengths.close()
        tmp_idx = _file(self.path_stem, ".idx.tmp")
        with open(tmp_idx, "wb") as f:
            np.lib.format.write_array_header_1_0(
                f, {"descr": np.lib.format.dtype_to_descr(np.dtype(np.int64)), "fortran_order": False,
                    "shape": (self.sentences + 1,)})
            f.write(np.zeros(1, dtype=np.int64).tobytes())
            total = 0
            with open(self._tmp_lengths, "rb") as lengths:  # read, not mapped: mapped pages count as RSS
                while (piece := np.fromfile(lengths, dtype=np.int64, count=_SLICE)).size:
                    offsets = np.cumsum(piece) + total
                    f.write(offsets.tobytes())
                    total = int(offsets[-1])
            np.save(f, np.array([self.dtype.str]))
        self._tmp_lengths.unlink()
        self._tmp_bin.replace(_file(self.path_stem, ".bin"))
        tmp_idx.replace(_file(self.path_stem, ".idx"))
        return self.sentences


def _map_offsets(path: Path) -> tuple[np.ndarray, np.dtype]:
    """The offsets array of an `.idx` file, memory-mapped, and the token dtype stored after it."""
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, _, dtype = read_header(f)
        start = f.tell()
        f.seek(start + shape[0] * dtype.itemsize)
        token = np.dtype(str(np.load(f, allow_pickle=False)[0]))
    return np.memmap(path, dtype=dtype, mode="r", offset=start, shape=shape), token


def damaged(path: Path, reason: str) -> NmtError:
    return NmtError(f"{path}: prepared data damaged ({reason}); run `nmt prepare` again")


class Shard:
    """Read-only view of one side of a split: shard[i] is the token ids of sentence i.

    Only `lengths` (4 bytes a sentence, for batching) is held in memory; tokens and offsets are
    read from the mapped files when indexed."""

    def __init__(self, path_stem: Path):
        # Plain ndarray views of the mappings: the file stays mapped, but slicing skips np.memmap's
        # per-slice bookkeeping, which took half of collating a GPU update's ~800 pairs.
        index, tokens = _file(path_stem, ".idx"), _file(path_stem, ".bin")
        try:
            offsets, dtype = _map_offsets(index)
        except FileNotFoundError:
            raise damaged(index, "missing") from None
        except (OSError, ValueError, EOFError, IndexError):  # cut short (a copy that stopped), or not one of ours
            raise damaged(index, "not an index `nmt prepare` wrote whole") from None
        self.offsets = offsets.view(np.ndarray)
        size = int(self.offsets[-1])
        found = tokens.stat().st_size if tokens.is_file() else None
        if found != size * dtype.itemsize:
            raise damaged(tokens, "missing" if found is None else
                          f"{found:,} bytes where its index counts {size * dtype.itemsize:,}")
        self.tokens = (np.memmap(tokens, dtype=dtype, mode="r", shape=(size,)).view(np.ndarray)
                       if size else np.zeros(0, dtype=dtype))
        self.lengths = np.empty(len(self.offsets) - 1, dtype=np.int32)
        for start in range(0, len(self.lengths), _SLICE):
            window = self.offsets[start:start + _SLICE + 1]
            self.lengths[start:start + len(window) - 1] = np.diff(window)

    def __len__(self) -> int:
        return len(self.lengths)

    def __getitem__(self, i: int) -> np.ndarray:
        return self.tokens[self.offsets[i]:self.offsets[i + 1]]


class ParallelShards:
    """The source and target shards of one split, e.g. `data/train.src` + `data/train.tgt`.
    Each target starts with `forced_target_tokens` tokens that are given, not predicted (a
    decoder-side language token, data.language_token: target or both): never scored."""

    def __init__(self, data_dir: Path, split: str, forced_target_tokens: int = 0):
        self.src = Shard(data_dir / f"{split}.src")
        self.tgt = Shard(data_dir / f"{split}.tgt")
        self.forced_target_tokens = forced_target_tokens
        if len(self.src) != len(self.tgt):
            raise damaged(data_dir / split, f"{len(self.src):,} source sentences but {len(self.tgt):,} targets")

    def __len__(self) -> int:
        return len(self.src)
