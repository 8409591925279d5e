"""Shape buckets: a bounded set of batch shapes, for CUDA graphs (train.cuda_graphs).

A CUDA graph replays the kernels it recorded for one shape, so every new (rows, source width,
target width) costs a recording, and token batching brings a new shape with almost every batch.
With buckets a batch is padded to a bucket's shape instead:

- widths are rounded up to a ladder whose steps grow with the width (8 to 64 by 8, then by 16 to
  128, by 32 to 256, by 64 to 512, then by 128), so padding stays under about a quarter of a
  width and an epoch meets a few dozen widths;
- the epoch's batches are cut with each pair costing its bucket's width (`epoch_batches(...,
  bucketed=True)`), so a
  full batch of a bucket always has the same number of rows, and a batch is padded with empty
  rows (an EOS source, a BOS target, nothing scored) to its bucket's rows;
- every target position is passed to the loss, padding with a PAD target that scores nothing, so
  the number of scored positions is fixed by the shape too.

Padded positions cost the work of real ones: `epoch_shapes` counts the shapes of an epoch and
the padding they add (tests/data/test_buckets.py); bench.gpu reports that padding too.
"""

from __future__ import annotations

import numpy as np
import torch

from nmt.data.batching import Batch, bucket_width
from nmt.data.shards import ParallelShards
from nmt.special_tokens import EOS, PAD


def bucket_rows(data: ParallelShards, batches: list[np.ndarray], max_tokens: int) -> int:
    """Rows of the pass merging `batches`: each batch's bucket's full count of rows
    (max_tokens // its bucket width; at least its own rows, for a pair longer than max_tokens)."""
    rows = 0
    for idx in batches:
        width = bucket_width(max(int(data.src.lengths[idx].max()), int(data.tgt.lengths[idx].max())) + 1)
        rows += max(max_tokens // width, len(idx))
    return rows


def collate_bucketed(data: ParallelShards, indices: np.ndarray, rows: int, start: int) -> Batch:
    """The batch of pairs `indices` padded to a bucket's shape: `rows` rows, bucket widths on each
    side; every target position is scored (padding and forced first tokens with a PAD target, which
    the loss skips). Empty rows are an EOS source and a `start` target: real keys to attend to, so
    no attention row is all masked."""
    src = [data.src[i] for i in indices]
    tgt = [data.tgt[i] for i in indices]
    src_width = bucket_width(max(len(s) for s in src) + 1)
    tgt_width = bucket_width(max(len(t) for t in tgt) + 1)
    src_ids = np.full((rows, src_width), PAD, dtype=np.int64)
    tgt_in = np.full((rows, tgt_width), PAD, dtype=np.int64)
    tgt_out = np.full((rows, tgt_width), PAD, dtype=np.int64)
    src_ids[:, 0], tgt_in[:, 0] = EOS, start  # the empty rows; real rows overwrite theirs
    for row, (s, t) in enumerate(zip(src, tgt)):
        src_ids[row, :len(s)], src_ids[row, len(s)] = s, EOS
        tgt_in[row, 1:len(t) + 1] = t
        tgt_out[row, :len(t)], tgt_out[row, len(t)] = t, EOS
    targets = tgt_out.copy()
    targets[:, :data.forced_target_tokens] = PAD  # given to the decoder, not scored
    return Batch(src=torch.from_numpy(src_ids), tgt_in=torch.from_numpy(tgt_in), tgt_out=torch.from_numpy(tgt_out),
                 n_tgt_tokens=int((targets != PAD).sum()), out_positions=torch.arange(rows * tgt_width),
                 out_targets=torch.from_numpy(targets).view(-1))


def bucket_shape(data: ParallelShards, batches: list[np.ndarray], max_tokens: int) -> tuple[int, int, int]:
    """(rows, source width, target width) of the pass merging `batches`, padded to its bucket."""
    idx = np.concatenate(batches)
    return (bucket_rows(data, batches, max_tokens), bucket_width(int(data.src.lengths[idx].max()) + 1),
            bucket_width(int(data.tgt.lengths[idx].max()) + 1))


def epoch_shapes(data: ParallelShards, passes: list[list[np.ndarray]], max_tokens: int) -> dict:
    """The distinct (rows, source width, target width) shapes of an epoch's passes (each a list of
    batches merged into one) under buckets (`distinct`, and how many: `shapes`), and the share of
    padded target positions."""
    shapes, positions, real = set(), 0, 0
    for batches in passes:
        rows, _, tgt_width = shape = bucket_shape(data, batches, max_tokens)
        shapes.add(shape)
        positions += rows * tgt_width
        real += sum(int(data.tgt.lengths[idx].sum()) + len(idx) for idx in batches)
    return {"shapes": len(shapes), "passes": len(passes), "target_padding_fraction": round(1 - real / positions, 3),
            "distinct": shapes}
