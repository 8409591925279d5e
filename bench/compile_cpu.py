"""Training tokens/s of bench-small on this CPU, eager against `train.compile=true` (inductor),
through `Trainer.train_step`; and, for the compiled step, dynamic shapes against a static graph.

    python -m bench.compile_cpu [--steps 20] [--threads 2] [--out bench/results/compile_cpu.json]

Reported per mode: seconds to the end of warm-up (compilation included), target tokens/s over
the timed updates, and how many graphs dynamo compiled. The static row trains every timed update
on one repeated batch (padded to one shape, the best case of bucketing: no recompilation, no
padding beyond the batch's own), beside dynamic shapes on the same batch.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import torch

from bench.run import BENCH_SMALL, ROOT, matmul_ceiling
from nmt.config import load_recipe
from nmt.data.batching import epoch_batches
from nmt.data.prepare import prepare
from nmt.data.tokenizer import train_tokenizer
from nmt.train.trainer import Trainer
from tools.results import write_json


def graphs_compiled() -> int:
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def run(recipe, compiled: bool, steps: int, warmup: int, repeat_one_batch: bool = False, dynamic=None) -> dict:
    from torch._dynamo.utils import counters

    trainer = Trainer(recipe.model_copy(update={"train": recipe.train.model_copy(update={"compile": compiled})}))
    torch._dynamo.reset()
    counters.clear()  # the step's graphs only, not the preflight's (nmt.train.compiling.compile_smoke_test)
    if compiled and dynamic is not None:  # static graphs: compile without dynamic shapes
        trainer.update.forward = torch.compile(trainer.model, dynamic=dynamic)
    batches = epoch_batches(trainer.train_data, trainer.train_cfg.max_tokens, seed=1, epoch=0)
    if repeat_one_batch:
        batches = [batches[0]] * (warmup + steps)
    start = time.perf_counter()
    for indices in batches[:warmup]:
        trainer.train_step([indices])
    warmup_seconds = time.perf_counter() - start
    start = time.perf_counter()
    tokens = sum(trainer.train_step([indices])[1] for indices in batches[warmup:warmup + steps])
    seconds = time.perf_counter() - start
    return {"compile": compiled, "dynamic": dynamic if compiled else None, "one_repeated_batch": repeat_one_batch,
            "warmup_updates": warmup, "warmup_seconds": round(warmup_seconds, 1), "updates": steps,
            "target_tokens_per_s": round(tokens / seconds), "graphs_compiled": graphs_compiled()}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--modes", default="eager,compiled,dynamic_one,static_one,eager",
                        help="in order; eager and compiled train on the epoch's batches, *_one on one repeated batch")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "compile_cpu.json")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    recipe = load_recipe(ROOT / "recipes" / "multi30k_en_de.yaml",
                         [*BENCH_SMALL, f"data.train={ROOT / 'data/multi30k/train'}",
                          f"data.valid={ROOT / 'data/multi30k/val'}", f"data.test={ROOT / 'data/multi30k/test_2016_flickr'}",
                          f"output_dir={ROOT / 'runs/bench_small'}", "train.valid_bleu_sentences=0"])
    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
    prepare(recipe.data, recipe.tokenizer, recipe.out)
    ceiling = matmul_ceiling()
    modes = {"eager": dict(compiled=False), "compiled": dict(compiled=True),
             "dynamic_one": dict(compiled=True, repeat_one_batch=True, dynamic=True),
             "static_one": dict(compiled=True, repeat_one_batch=True, dynamic=False)}
    # eager is run first and last by default: the host's drift over the run
    rows = [run(recipe, steps=args.steps, warmup=args.warmup, **modes[mode]) for mode in args.modes.split(",")]
    report = {"config": "bench-small", "torch": torch.__version__, "threads": args.threads,
              "machine": platform.machine(), "matmul_ceiling_gflop_per_s": round(ceiling, 1), "runs": rows}
    write_json(args.out, report)
    print(json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    main()
