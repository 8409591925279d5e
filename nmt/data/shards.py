"""Binarized, memory-mapped token shards: `{name}.bin` (token ids) + `{name}.idx` (offsets).

Memory stays flat however large the corpus: writers append chunk by chunk, readers map the files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _file(path_stem: Path, extension: str) -> Path:
    """`data/train.src` + `.bin` -> `data/train.src.bin` (with_suffix would replace `.src`)."""
    return path_stem.with_name(path_stem.name + extension)


def token_dtype(vocab_size: int) -> np.dtype:
    return np.dtype(np.uint16) if vocab_size <= np.iinfo(np.uint16).max + 1 else np.dtype(np.int32)


class ShardWriter:
    def __init__(self, path_stem: Path, vocab_size: int):
        self.path_stem = path_stem
        self.dtype = token_dtype(vocab_size)
        self._tmp_bin = _file(path_stem, ".bin.tmp")
        self._bin = open(self._tmp_bin, "wb")
        self._lengths: list[np.ndarray] = []

    def add(self, sentences: list[list[int]]) -> None:
        if not sentences:
            return
        lengths = np.fromiter((len(s) for s in sentences), dtype=np.int64, count=len(sentences))
        flat = np.fromiter((t for s in sentences for t in s), dtype=self.dtype, count=int(lengths.sum()))
        self._bin.write(flat.tobytes())
        self._lengths.append(lengths)

    def close(self) -> int:
        """Finish both files atomically; return the number of sentences."""
        self._bin.close()
        lengths = np.concatenate(self._lengths) if self._lengths else np.zeros(0, dtype=np.int64)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        tmp_idx = _file(self.path_stem, ".idx.tmp")
        with open(tmp_idx, "wb") as f:
            np.save(f, offsets)
            np.save(f, np.array([self.dtype.str]))
        self._tmp_bin.replace(_file(self.path_stem, ".bin"))
        tmp_idx.replace(_file(self.path_stem, ".idx"))
        return len(lengths)


class Shard:
    """Read-only view of one side of a split: shard[i] is the token ids of sentence i."""

    def __init__(self, path_stem: Path):
        with open(_file(path_stem, ".idx"), "rb") as f:
            self.offsets = np.load(f, allow_pickle=False)
            dtype = np.dtype(str(np.load(f, allow_pickle=False)[0]))
        size = int(self.offsets[-1])
        self.tokens = (np.memmap(_file(path_stem, ".bin"), dtype=dtype, mode="r", shape=(size,))
                       if size else np.zeros(0, dtype=dtype))
        self.lengths = np.diff(self.offsets)

    def __len__(self) -> int:
        return len(self.lengths)

    def __getitem__(self, i: int) -> np.ndarray:
        return self.tokens[self.offsets[i]:self.offsets[i + 1]]


class ParallelShards:
    """The source and target shards of one split, e.g. `data/train.src` + `data/train.tgt`."""

    def __init__(self, data_dir: Path, split: str):
        self.src = Shard(data_dir / f"{split}.src")
        self.tgt = Shard(data_dir / f"{split}.tgt")
        assert len(self.src) == len(self.tgt), f"{data_dir}/{split}: source and target shards differ in length"

    def __len__(self) -> int:
        return len(self.src)
