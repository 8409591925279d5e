"""`make bench-cpu-master-weights`: bf16 training on this CPU with bf16 linear weights in the passes
and their fp32 masters in the optimizer (nmt.train.master_weights, what train.precision bf16 runs)
against autocast over fp32 weights, which casts each weight at each use. The two make the same
updates bit for bit (tests/train/test_master_weights.py); this says which is faster here.

    python -m bench.cpu_master_weights [--windows 6] [--updates 20] [--shapes demo,bench_small]

For each shape on Multi30k (`make demo`'s and `make bench`'s models and batches), one model each
way from the same initial weights takes its updates through nmt's TrainStep in alternating windows
of the same batches (bench.cpu_settings.alternated_windows). Results:
bench/results/cpu_master_weights.json, with the CPU's bf16 arithmetic (without it bf16 is emulated
and both ways are slower than fp32).
"""

from __future__ import annotations

import argparse
import tempfile
import unittest.mock
from pathlib import Path

import torch

from bench.cpu_settings import RESULTS, alternated_windows, prepared, vocabulary_size
from nmt.data.shards import ParallelShards
from nmt.host_memory import keep_freed_memory
from nmt.model.precision import bf16_arithmetic
from nmt.model.transformer import Transformer
from nmt.train import step as step_module
from nmt.train.step import TrainStep
from tools.results import provenance, write_json


def bf16_step(recipe, vocab: int, masters: bool) -> TrainStep:
    torch.manual_seed(1)
    model = Transformer(recipe.model, vocab, vocab)
    cfg = recipe.train.model_copy(update={"precision": "bf16"})
    with unittest.mock.patch.object(step_module, "uses_master_weights", lambda cfg, device: masters):
        step = TrainStep(model, cfg, torch.device("cpu"))
    assert (step.master_weights is not None) == masters
    return step


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=6)
    parser.add_argument("--updates", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--shapes", default="demo,bench_small")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    keep_freed_memory()  # as nmt train does on a CPU
    report = {"provenance": provenance(), "cpu_bf16_arithmetic": bf16_arithmetic(torch.device("cpu")),
              "windows": args.windows, "cases": []}
    with tempfile.TemporaryDirectory(prefix="nmt-cpu-master-weights-") as scratch:
        for shape in args.shapes.split(","):
            recipe = prepared(shape, Path(scratch))
            vocab = vocabulary_size(recipe)
            steps = {"autocast": bf16_step(recipe, vocab, False), "master_weights": bf16_step(recipe, vocab, True)}
            case = {"shape": shape, "d_model": recipe.model.d_model, "max_tokens": recipe.train.max_tokens,
                    "updates_per_window": args.updates,
                    **alternated_windows(steps, recipe.train.update_freq, ParallelShards(recipe.out / "data", "train"),
                                         recipe.train, args.windows, args.updates)}
            print({k: case[k] for k in ("shape", "median", "master_weights_over_autocast")}, flush=True)
            report["cases"].append(case)
    write_json(RESULTS / "cpu_master_weights.json", report)
    return report


if __name__ == "__main__":
    main()
