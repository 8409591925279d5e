"""What padding batch widths to a multiple of 8 (as nmt does on CUDA) would cost on a CPU, where nmt
does not: the extra positions over an epoch and the training speed with and without it, measured
alternately, on the demo's Multi30k settings.

    python -m bench.padding_cpu [--updates 40] [--rounds 2] [--threads 2]

Needs the demo's prepared data (`make demo`, or its tokenizer and prepare steps); writes
bench/results/padding_cpu.json.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from nmt.config import TrainConfig, load_recipe
from nmt.data.batching import epoch_batches, round_up
from nmt.data.shards import ParallelShards
from nmt.host_memory import keep_freed_memory
from nmt.model.transformer import Transformer
from nmt.train.step import TrainStep
from tools.results import write_json

ROOT = Path(__file__).resolve().parent.parent
# The demo's settings (bench.packing and bench.cpu_settings take them too), in fp32 as measured before
# train.precision auto, which trains in bf16 on CPUs with bf16 arithmetic
DEMO = ["output_dir=runs/demo", "model.dropout=0.1", "tokenizer.vocab_size=8000", "train.max_tokens=1024",
        "train.warmup_steps=400", "train.precision=fp32"]


def padded_positions(data: ParallelShards, batches: list[np.ndarray], multiple: int) -> int:
    """Source + target positions (padding included) that the model computes over these batches."""
    total = 0
    for idx in batches:
        src, tgt = int(data.src.lengths[idx].max()) + 1, int(data.tgt.lengths[idx].max()) + 1
        total += len(idx) * (round_up(src, multiple) + round_up(tgt, multiple))
    return total


def tokens_per_s(recipe, data: ParallelShards, batches: list[np.ndarray], multiple: int | None = None,
                 train: TrainConfig | None = None) -> float:
    """Target tokens/s of TrainStep on a CPU over `batches` (the first a warm-up), a fresh model of the
    recipe's shape; `train` in place of the recipe's settings, `multiple` the step's batch widths."""
    torch.manual_seed(1)
    model = Transformer(recipe.model, recipe.tokenizer.vocab_size, recipe.tokenizer.vocab_size)  # joint
    step = TrainStep(model, train or recipe.train, torch.device("cpu"))
    if multiple is not None:
        step.length_multiple = multiple
    step(data, batches[:1])  # warm-up
    start = time.perf_counter()
    tokens = sum(step(data, [b])[1] for b in batches[1:])
    return tokens / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    keep_freed_memory()  # as nmt train does on a CPU: freed blocks reused, not faulted in again
    recipe = load_recipe(ROOT / "recipes" / "multi30k_en_de.yaml", DEMO)
    data = ParallelShards(recipe.out / "data", "train")
    epoch = epoch_batches(data, recipe.train.max_tokens, 1, 0)
    exact, padded = padded_positions(data, epoch, 1), padded_positions(data, epoch, 8)
    speeds: dict[int, list[float]] = {1: [], 8: []}
    for _ in range(args.rounds):
        for multiple in (1, 8):
            speeds[multiple].append(round(tokens_per_s(recipe, data, epoch[:args.updates + 1], multiple)))
    result = {"threads": args.threads, "max_tokens": recipe.train.max_tokens, "updates": args.updates,
              "epoch_positions_exact": exact, "epoch_positions_padded_to_8": padded,
              "extra_positions": round(padded / exact - 1, 4),
              "target_tokens_per_s": {"exact": speeds[1], "padded_to_8": speeds[8]},
              "speed_ratio_padded_over_exact": round(sum(speeds[8]) / sum(speeds[1]), 3)}
    print(result)
    write_json(ROOT / "bench" / "results" / "padding_cpu.json", result)


if __name__ == "__main__":
    main()
