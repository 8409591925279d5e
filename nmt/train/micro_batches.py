"""How a process's share of an update becomes forward and backward passes (micro-batches).

The recipe fixes what an update holds: `update_freq` batches of at most `max_tokens` tokens each
(nmt.data.batching cuts each update's batches from neighbouring lengths). How many passes carry
them is `train.micro_batches`: each pass merges consecutive batches into one. Merged or split,
the update's sentences, summed loss and gradients are the same (float rounding aside); only the
padding differs a little, and fewer, larger passes launch fewer kernels, which is what limits a
GPU's update (docs/gpu.md).

`auto`: on CUDA one pass per process, split further only if the device runs out of memory
(TrainStep retries the update with twice the passes); on a CPU one pass per batch, where larger
passes gain nothing and the eager output layer is tuned for cache-sized chunks.
"""

from __future__ import annotations

import numpy as np
import torch


def initial_micro_batches(setting: int | str, device: torch.device, batches_per_process: int) -> int:
    """The passes per update a run starts with: the recipe's number, or what `auto` picks."""
    if setting == "auto":
        return 1 if device.type == "cuda" else batches_per_process
    return min(int(setting), batches_per_process)


def passes_of(batches: list[np.ndarray], passes: int) -> list[list[np.ndarray]]:
    """`batches` (index arrays) dealt into `passes` runs of consecutive batches, as evenly as their
    number allows (the first runs take one batch more); never more runs than batches."""
    passes = max(1, min(passes, len(batches)))
    sizes = [len(batches) // passes + (i < len(batches) % passes) for i in range(passes)]
    starts = np.cumsum([0, *sizes])
    return [batches[start:end] for start, end in zip(starts[:-1], starts[1:])]


def merge(batches: list[np.ndarray], passes: int) -> list[np.ndarray]:
    """`batches` merged into `passes` micro-batches (passes_of), each one index array."""
    return [run[0] if len(run) == 1 else np.concatenate(run) for run in passes_of(batches, passes)]


def rank_passes(group: list[np.ndarray], rank: int, size: int, passes: int,
                same_count: bool = False) -> tuple[list[list[np.ndarray]], list[float]]:
    """Rank `rank`'s passes of an update's `group` of batches (it takes every `size`-th) and each
    pass's loss weight. A rank left without a batch (end of an epoch) still takes part, with the
    group's first batch at weight 0. `same_count` (sharded training, where each pass gathers every
    layer's shards on all ranks): every rank runs as many passes as the busiest, the extra ones
    repeating its first at weight 0. From the lengths alone: the same on every rank, no communication."""
    mine = group[rank::size]
    runs = passes_of(mine or group[:1], passes)
    weights = [1.0] * len(runs) if mine else [0.0]
    if same_count:
        most = max(len(passes_of(group[r::size] or group[:1], passes)) for r in range(size))
        runs, weights = runs + [runs[0]] * (most - len(runs)), weights + [0.0] * (most - len(weights))
    return runs, weights
