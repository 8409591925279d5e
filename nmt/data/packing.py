"""Packing (train.pack_width): sentence pairs laid end to end in rows of a fixed width instead of
one pair per padded row, each token attending only within its own sentence and counting its
position from its sentence's start (nmt.model.packed_attention builds the masks).

Why: token batches cut from neighbouring target lengths still vary in their source lengths. On
Multi30k the base recipe's passes are 45 % source and 22 % target padding once widths are rounded
to 8 for the GPU's attention kernel; on news-like lengths 25 % and 10 % (bench/packing.py). Every
padded position costs the work of a real one in every layer.

How: packing pays only where lengths mix. Sentences of one length leave the same gap at the end of
every row (four 29-token sentences in a row of 128). So a packed epoch is not cut from sorted
lengths: its pairs come in a random order (a pure function of the seed and the epoch, as resuming
needs), and each batch is `rows` rows of `width` tokens on each side (rows = train.max_tokens //
pack_width), filled first-fit: a pair goes into the first row with room for both its sides. A
pair that fits no row waits for the next batch, and a batch closes after `patience` pairs in a row
have not fitted. A row's pairs share it on both sides: row r of the source holds the sources of
the pairs whose targets are in row r of the target.

Every batch of a run has the same shape, (rows, width) on each side; a short last batch gets empty
rows. A pass that merges k batches has k · rows rows. For CUDA graphs every pass has one shape
and scores a fixed number of positions: `collate_packed(..., batches=k, score_every_position=True)`
adds empty batches to a pass of fewer (an epoch's short last update) and gives every target
position to the loss, PAD (scoring nothing) at padding and forced first tokens.
"""

from __future__ import annotations

import numpy as np
import torch

from nmt.data.batching import Batch, Packing
from nmt.data.shards import ParallelShards
from nmt.special_tokens import BOS, EOS, PAD

PATIENCE = 64  # pairs in a row that fit no row of a batch before it closes


def pair_sizes(data: ParallelShards, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's source positions (with its EOS) and target positions (with the start token or EOS)."""
    return data.src.lengths[indices].astype(np.int64) + 1, data.tgt.lengths[indices].astype(np.int64) + 1


def first_fit(src_size: int, tgt_size: int, free_src: list[int], free_tgt: list[int]) -> int | None:
    """The first row with room for both sides, taken (its free room reduced); None where none has."""
    for row, (room_src, room_tgt) in enumerate(zip(free_src, free_tgt)):
        if src_size <= room_src and tgt_size <= room_tgt:
            free_src[row], free_tgt[row] = room_src - src_size, room_tgt - tgt_size
            return row
    return None


def packed_epoch_batches(data: ParallelShards, width: int, rows: int, seed: int, epoch: int,
                         selection: np.ndarray | None = None, patience: int = PATIENCE) -> list[np.ndarray]:
    """The batches of one packed epoch (module doc): of every pair once, or of `selection` (several
    corpora drawn by weight, nmt.data.sampling), in a random order; each batch's pairs in the order
    they were placed, so that `collate_packed` places them in the same rows again."""
    src_sizes, tgt_sizes = pair_sizes(data, np.arange(len(data)))
    if len(data) and max(int(src_sizes.max()), int(tgt_sizes.max())) > width:
        raise ValueError(f"a pair of {max(int(src_sizes.max()), int(tgt_sizes.max()))} positions is wider than "
                         f"the packed rows ({width})")
    rng = np.random.default_rng([seed, epoch])
    order = (rng.permutation(len(data)) if selection is None else rng.permutation(selection)).tolist()
    src_list, tgt_list = src_sizes.tolist(), tgt_sizes.tolist()
    batches, waiting, next_new = [], [], 0
    while waiting or next_new < len(order):
        free_src, free_tgt = [width] * rows, [width] * rows
        placed, skipped, taken, misses = [], [], 0, 0
        while misses < patience:
            if taken < len(waiting):
                pair, taken = waiting[taken], taken + 1
            elif next_new < len(order):
                pair, next_new = order[next_new], next_new + 1
            else:
                break
            if first_fit(src_list[pair], tgt_list[pair], free_src, free_tgt) is None:
                skipped.append(pair)
                misses += 1
            else:
                placed.append(pair)
                misses = 0
        waiting = skipped + waiting[taken:]
        batches.append(np.array(placed, dtype=np.int64))
    return batches


def collate_packed(data: ParallelShards, run: list[np.ndarray], width: int, rows: int, start: int = BOS,
                   batches: int | None = None, score_every_position: bool = False) -> Batch:
    """One pass of packed batches (`packed_epoch_batches`'s), each placed first-fit in its order into
    `rows` rows of `width` (the rows it was cut for), the batches' rows one after the other. A pair
    holds: its source and EOS; the decoder's input, the `start` token then the target; the target
    and EOS. Scored are each target's tokens and EOS, less its forced first tokens (as in collate).
    `batches`: the pass's rows are those of this many batches, the missing ones empty;
    `score_every_position`: every target position goes to the loss (module doc)."""
    if batches is not None and len(run) > batches:
        raise ValueError(f"{len(run)} batches in a pass of {batches}")
    total = rows * (batches or len(run))
    # Where each pair goes: a first-fit pass over the lengths alone, then every array filled at once.
    indices = np.concatenate(run) if len(run) else np.zeros(0, dtype=np.int64)
    src_sizes, tgt_sizes = pair_sizes(data, indices)
    src_start, tgt_start, segment = (np.empty(len(indices), dtype=np.int64) for _ in range(3))
    k = 0
    for b, batch in enumerate(run):
        free_src, free_tgt = [width] * rows, [width] * rows
        pairs_in_row = [0] * rows
        for ls, lt in zip(src_sizes[k:k + len(batch)].tolist(), tgt_sizes[k:k + len(batch)].tolist()):
            local = first_fit(ls, lt, free_src, free_tgt)
            if local is None:
                raise ValueError(f"pair {indices[k]} fits none of the {rows} rows of {width}: not a batch cut for them")
            pairs_in_row[local] += 1
            row = local + b * rows
            src_start[k], tgt_start[k] = row * width + width - free_src[local] - ls, row * width + width - free_tgt[local] - lt
            segment[k] = pairs_in_row[local]
            k += 1
    src_seg, src_pos = _segments_and_positions(src_start, src_sizes, segment, total * width)
    tgt_seg, tgt_pos = _segments_and_positions(tgt_start, tgt_sizes, segment, total * width)
    src_ids, tgt_in, tgt_out = (np.full(total * width, PAD, dtype=np.int64) for _ in range(3))
    src_tokens = np.concatenate([data.src[i] for i in indices]) if len(indices) else []
    tgt_tokens = np.concatenate([data.tgt[i] for i in indices]) if len(indices) else []
    src_ids[_flat(src_start, src_sizes - 1)], src_ids[src_start + src_sizes - 1] = src_tokens, EOS
    tgt_out[_flat(tgt_start, tgt_sizes - 1)], tgt_out[tgt_start + tgt_sizes - 1] = tgt_tokens, EOS
    tgt_in[_flat(tgt_start + 1, tgt_sizes - 1)], tgt_in[tgt_start] = tgt_tokens, start
    src_ids, tgt_in, tgt_out, src_seg, tgt_seg, src_pos, tgt_pos = (
        a.reshape(total, width) for a in (src_ids, tgt_in, tgt_out, src_seg, tgt_seg, src_pos, tgt_pos))
    forced = data.forced_target_tokens
    positions = torch.from_numpy(_flat(tgt_start + forced, tgt_sizes - forced))
    targets = torch.from_numpy(tgt_out).view(-1)[positions]
    if score_every_position:
        every = torch.full((total * width,), PAD, dtype=torch.int64)
        every[positions] = targets
        positions, targets = torch.arange(total * width), every
    packing = Packing(*(torch.from_numpy(a) for a in (src_seg, tgt_seg, src_pos, tgt_pos)))
    places = np.stack([src_start // width, src_start % width, tgt_start % width], axis=1)
    return Batch(src=torch.from_numpy(src_ids), tgt_in=torch.from_numpy(tgt_in), tgt_out=torch.from_numpy(tgt_out),
                 n_tgt_tokens=int((targets != PAD).sum()), out_positions=positions, out_targets=targets,
                 packing=packing, pair_places=places)


def _flat(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The flat positions starts[i], ..., starts[i] + sizes[i] - 1 of every i, in order."""
    offsets = np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return np.repeat(starts, sizes) + offsets


def _segments_and_positions(starts: np.ndarray, sizes: np.ndarray, segment: np.ndarray, positions: int
                            ) -> tuple[np.ndarray, np.ndarray]:
    """Flat arrays of `positions` for sentences at `starts` of `sizes`: each position's segment (0 at
    padding) and its position within its sentence."""
    seg, pos = np.zeros(positions, dtype=np.int64), np.zeros(positions, dtype=np.int64)
    where = _flat(starts, sizes)
    seg[where] = np.repeat(segment, sizes)
    pos[where] = where - np.repeat(starts, sizes)
    return seg, pos


def packed_rows_per_batch(max_tokens: int, width: int) -> int:
    """Rows of a packed batch: as many rows of `width` as train.max_tokens holds, at least one."""
    return max(1, max_tokens // width)
