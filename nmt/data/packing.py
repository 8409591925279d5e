"""Packing (train.pack_width): a pass's sentence pairs laid end to end in rows of a fixed width
instead of one pair per padded row.

Token batches are cut from neighbouring target lengths, but their sources still vary: on
Multi30k a merged update of the base recipe is 19 % target and 37 % source padding once widths
are rounded to 8 for the GPU's attention kernel, and every padded position costs the work of a
real one in every layer. Packed, the pairs of the same batches fill rows of `pack_width` tokens
on each side (row r's sources in source row r, its targets in target row r), and only each row's
tail is padding. The sentences of an update, hence its loss and gradients, do not change (float
rounding aside); each token attends only within its own sentence (segments, below) and counts its
position from its sentence's start (nmt.model.packed_attention builds the masks).

Rows are filled first-fit, longest pair first: a pair goes into the first row with room for
both its sides. A pair longer than `pack_width` on either side widens that pass's rows to hold it.
"""

from __future__ import annotations

import numpy as np
import torch

from nmt.data.batching import Batch, Packing, round_up
from nmt.data.shards import ParallelShards
from nmt.special_tokens import BOS, EOS, PAD


def first_fit_rows(src_sizes: np.ndarray, tgt_sizes: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows for pairs of (src_sizes[i], tgt_sizes[i]) tokens in rows of `width` on each side:
    (each pair's row, its source offset, its target offset). Longest pair first, each into the
    first row where both its sides fit (a new row if none)."""
    n = len(src_sizes)
    free_src = np.full(n, width, dtype=np.int64)  # at most one row per pair
    free_tgt = np.full(n, width, dtype=np.int64)
    row = np.empty(n, dtype=np.int64)
    src_offset, tgt_offset = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    used = 0
    for i in np.argsort(-np.maximum(src_sizes, tgt_sizes), kind="stable"):
        s, t = int(src_sizes[i]), int(tgt_sizes[i])
        fits = (free_src[:used] >= s) & (free_tgt[:used] >= t)
        r = int(fits.argmax()) if used and fits.any() else used
        used = max(used, r + 1)
        row[i], src_offset[i], tgt_offset[i] = r, width - free_src[r], width - free_tgt[r]
        free_src[r] -= s
        free_tgt[r] -= t
    return row, src_offset, tgt_offset


def collate_packed(data: ParallelShards, indices: np.ndarray, pack_width: int, multiple: int = 1,
                   start: int = BOS) -> Batch:
    """The pairs `indices` packed into rows (module doc): the source with its EOS, the decoder's
    input with the `start` token first, the target with its EOS, each pair's sides in one row.
    Scored are each target's tokens and EOS, less its forced first tokens (as in collate). Row
    width: pack_width, or the pass's longest side where that is longer, rounded up to `multiple`."""
    src = [data.src[i] for i in indices]
    tgt = [data.tgt[i] for i in indices]
    src_sizes = np.array([len(s) + 1 for s in src], dtype=np.int64)  # + EOS
    tgt_sizes = np.array([len(t) + 1 for t in tgt], dtype=np.int64)  # + start / EOS
    width = round_up(max(pack_width, int(src_sizes.max()), int(tgt_sizes.max())), multiple)
    row, src_offset, tgt_offset = first_fit_rows(src_sizes, tgt_sizes, width)
    rows = int(row.max()) + 1
    src_ids, tgt_in, tgt_out = (np.full((rows, width), PAD, dtype=np.int64) for _ in range(3))
    src_seg, tgt_seg, src_pos, tgt_pos = (np.zeros((rows, width), dtype=np.int64) for _ in range(4))
    pairs_in_row = np.zeros(rows, dtype=np.int64)
    scored = []
    forced = data.forced_target_tokens
    for i, (s, t) in enumerate(zip(src, tgt)):
        r, a, b, ls, lt = row[i], src_offset[i], tgt_offset[i], src_sizes[i], tgt_sizes[i]
        pairs_in_row[r] += 1
        src_ids[r, a:a + ls - 1], src_ids[r, a + ls - 1] = s, EOS
        tgt_in[r, b], tgt_in[r, b + 1:b + lt] = start, t
        tgt_out[r, b:b + lt - 1], tgt_out[r, b + lt - 1] = t, EOS
        src_seg[r, a:a + ls], tgt_seg[r, b:b + lt] = pairs_in_row[r], pairs_in_row[r]
        src_pos[r, a:a + ls], tgt_pos[r, b:b + lt] = np.arange(ls), np.arange(lt)
        scored.append(np.arange(r * width + b + forced, r * width + b + lt, dtype=np.int64))
    positions = torch.from_numpy(np.concatenate(scored))
    tgt_out = torch.from_numpy(tgt_out)
    packing = Packing(*(torch.from_numpy(a) for a in (src_seg, tgt_seg, src_pos, tgt_pos)))
    return Batch(src=torch.from_numpy(src_ids), tgt_in=torch.from_numpy(tgt_in), tgt_out=tgt_out,
                 n_tgt_tokens=len(positions), out_positions=positions, out_targets=tgt_out.view(-1)[positions],
                 packing=packing)


def padding_fraction(batch: Batch) -> tuple[float, float]:
    """(source, target) fraction of a batch's positions that are padding."""
    return tuple(float((ids == PAD).float().mean()) for ids in (batch.src, batch.tgt_out))
