"""Token-based batching: length-bucketed batches of at most `max_tokens` (padding included).

The batches of an epoch are a pure function of (seed, epoch), so resuming needs only the epoch
and the position inside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from nmt.data.shards import ParallelShards
from nmt.special_tokens import BOS, EOS, PAD


class Packing(NamedTuple):
    """Packed rows (train.pack_width, nmt.data.packing): where each token's sentence is. Segments
    number the pairs of a row from 1 at their tokens (a pair's source and target share the
    number), 0 at padding; positions count from 0 at each sentence's first token."""

    src_segments: torch.Tensor  # (R, S) int64
    tgt_segments: torch.Tensor  # (R, T) int64
    src_positions: torch.Tensor  # (R, S) int64
    tgt_positions: torch.Tensor  # (R, T) int64

    def to(self, device: torch.device) -> "Packing":
        return Packing(*(to_device(t, device) for t in self))


@dataclass
class Batch:
    src: torch.Tensor  # (B, S) source ids + EOS, right-padded with PAD
    tgt_in: torch.Tensor  # (B, T) the decoder's start token (BOS) + target ids
    tgt_out: torch.Tensor  # (B, T) target ids + EOS
    n_tgt_tokens: int  # non-padding target tokens
    # The N = n_tgt_tokens real target positions, as indices into the flattened (B·T) target, and
    # their tokens. Built on the host from the lengths: the model selects its output positions
    # with them instead of a boolean mask, whose data-dependent size would need a host read on a
    # GPU and break a compiled graph.
    out_positions: torch.Tensor  # (N,) int64
    out_targets: torch.Tensor  # (N,) int64, never PAD
    # Guided alignment (nmt.data.word_alignments.alignment_targets): (B, T, S), what each target
    # position's guided attention is trained towards; None without train.guided_alignment.
    alignment: torch.Tensor | None = None
    # Packed rows: each token's sentence and position; None: one pair per row.
    packing: Packing | None = None
    # Packed rows, on the host: where each pair lies, in the order of the pass's pairs: (row,
    # source column, target column) of its first token (guided alignment places its links there).
    pair_places: np.ndarray | None = None

    def to(self, device: torch.device) -> "Batch":
        if device.type == "cpu":
            return self
        src, tgt_in, tgt_out, positions, targets = (to_device(t, device) for t in (
            self.src, self.tgt_in, self.tgt_out, self.out_positions, self.out_targets))
        alignment = None if self.alignment is None else to_device(self.alignment, device)
        packing = None if self.packing is None else self.packing.to(device)
        return Batch(src, tgt_in, tgt_out, self.n_tgt_tokens, positions, targets, alignment, packing, self.pair_places)


def to_device(tensor: torch.Tensor, device: torch.device) -> torch.Tensor:
    """A host tensor on `device`. On a GPU it is copied from pinned (page-locked) memory without
    blocking the host, which goes on preparing the next work while the device computes."""
    if device.type == "cuda":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


def pack_by_tokens(order: np.ndarray, sizes: np.ndarray, max_tokens: int) -> list[np.ndarray]:
    """Cut `order` (indices sorted by size) into runs whose len × max size stays within max_tokens.

    A single example longer than max_tokens gets a batch of its own rather than being lost.
    """
    batches, start, longest = [], 0, 0
    for pos, idx in enumerate(order):
        size = int(sizes[idx])
        if pos > start and max(longest, size) * (pos - start + 1) > max_tokens:
            batches.append(order[start:pos])
            start, longest = pos, 0
        longest = max(longest, size)
    if start < len(order):
        batches.append(order[start:])
    return batches


# (up to this width, step): the ladder of bucket widths (nmt.data.buckets)
_BUCKET_LADDER = ((64, 8), (128, 16), (256, 32), (512, 64))
_BUCKET_LAST_STEP = 128


def bucket_width(width: int) -> int:
    """The smallest width of the bucket ladder that holds `width` positions: steps of 8 up to 64,
    16 up to 128, 32 up to 256, 64 up to 512, then 128 (nmt.data.buckets)."""
    for limit, step in _BUCKET_LADDER:
        if width <= limit:
            return -(-width // step) * step
    return -(-width // _BUCKET_LAST_STEP) * _BUCKET_LAST_STEP


def epoch_batches(data: ParallelShards, max_tokens: int, seed: int, epoch: int, shuffle: bool = True,
                  selection: np.ndarray | None = None, group: int = 1, bucketed: bool = False) -> list[np.ndarray]:
    """The batches of one epoch, in the order they are trained on: of every pair once, or of
    `selection` (indices, repeats allowed: several corpora drawn by weight, nmt.data.sampling).

    `group`: batches per update (train.update_freq). Each run of `group` consecutive batches is
    cut from neighbouring lengths and the runs are shuffled as units (a short last run stays
    last), so an update's batches can be merged into fewer, larger micro-batches
    (nmt.train.micro_batches) at little extra padding: merged or not, the update holds the same
    sentences.

    `bucketed`: each pair costs its bucket's width (nmt.data.buckets), so every full batch of a
    bucket has the same number of rows."""
    src_len, tgt_len = data.src.lengths + 1, data.tgt.lengths + 1  # + EOS / BOS
    sizes = np.maximum(src_len, tgt_len)
    if bucketed:
        sizes = np.array([bucket_width(w) for w in range(int(sizes.max(initial=0)) + 1)], dtype=np.int64)[sizes]
    if not shuffle:
        order = np.lexsort((src_len, tgt_len))
        return pack_by_tokens(order, sizes, max_tokens)
    rng = np.random.default_rng([seed, epoch])
    perm = rng.permutation(len(data)) if selection is None else rng.permutation(selection)
    # Sort by target then source length; the random permutation breaks ties differently each epoch.
    order = perm[np.lexsort((src_len[perm], tgt_len[perm]))]
    batches = pack_by_tokens(order, sizes, max_tokens)
    full = len(batches) // group
    runs = [batches[i * group:(i + 1) * group] for i in rng.permutation(full)]
    return [batch for run in runs for batch in run] + batches[full * group:]


def _pad(rows: list[np.ndarray], prefix: int | None, suffix: int | None, multiple: int = 1) -> torch.Tensor:
    extra = (prefix is not None) + (suffix is not None)
    width = max(len(r) for r in rows) + extra
    out = np.full((len(rows), round_up(width, multiple)), PAD, dtype=np.int64)
    for i, row in enumerate(rows):
        start = 0
        if prefix is not None:
            out[i, 0] = prefix
            start = 1
        out[i, start:start + len(row)] = row
        if suffix is not None:
            out[i, start + len(row)] = suffix
    return torch.from_numpy(out)


def round_up(width: int, multiple: int) -> int:
    """The smallest multiple of `multiple` that is at least `width`: a padded batch width."""
    return -(-width // multiple) * multiple


def length_multiple(device_type: str, varlen_attention: bool = False) -> int:
    """Batch widths a multiple of 8 on CUDA: the (B, 1, 1, S) key-padding mask then meets the
    memory-efficient attention kernel's alignment rule (S mod 8 = 0) whatever the batch, so a
    compiled graph with dynamic shapes never recompiles or fails when the parity of S flips.
    Exact widths where no mask reaches a kernel: with `varlen_attention` (train.attention: varlen)
    the padded attentions take segments and the decoder's is causal without one, so the padding
    would only cost, as it does on a CPU (docs/gpu.md). The linear layers see B·L rows, whatever L."""
    return 8 if device_type == "cuda" and not varlen_attention else 1


def real_positions(lengths: np.ndarray, width: int, skip: int = 0) -> np.ndarray:
    """Flat indices, row by row, of the first lengths[i] positions of each row of a (B, width)
    array, less the first `skip` of each row."""
    lengths = lengths - skip
    rows = np.repeat(np.arange(len(lengths), dtype=np.int64) * width + skip, lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return rows + np.arange(int(lengths.sum()), dtype=np.int64) - starts


def collate(data: ParallelShards, indices: np.ndarray, multiple: int = 1, start: int = BOS) -> Batch:
    """The batch of pairs `indices`, each side PAD-filled to a width that is a multiple of
    `multiple` (see length_multiple). A target's forced first tokens (data.forced_target_tokens)
    are read by the decoder but not scored. `start`: the model's decoder start token (BOS, or
    EOS for model.decoder_start: eos)."""
    src = [data.src[i] for i in indices]
    tgt = [data.tgt[i] for i in indices]
    tgt_out = _pad(tgt, None, EOS, multiple)
    positions = real_positions(np.array([len(t) + 1 for t in tgt], dtype=np.int64), tgt_out.size(1),
                               data.forced_target_tokens)
    positions = torch.from_numpy(positions)
    return Batch(
        src=_pad(src, None, EOS, multiple),
        tgt_in=_pad(tgt, start, None, multiple),
        tgt_out=tgt_out,
        n_tgt_tokens=len(positions),
        out_positions=positions,
        out_targets=tgt_out.view(-1)[positions],
    )
