"""`make bench-cpu-settings`: which of two values of a training setting makes faster updates on
this CPU, the figures behind a CPU default (by default `train.attention`, sdpa against matmul).

    python -m bench.cpu_settings [--setting train.attention] [--values sdpa,matmul] [--windows 8] [--updates 20]

Each shape trains in fp32 unless the setting compared is train.precision (`--setting
train.precision --values fp32,bf16`). Four cases: the demo's model and batches (`make demo`) and bench-small's (`make bench`), each on
Multi30k's sentences (about 13 tokens) and on synthetic pairs of news-like lengths (about 27
tokens, up to 250); `--shapes base_width` adds the base model's shape (6+6 layers, 512 wide). In
each case one model per value, from the same initial weights, takes its updates through nmt's
TrainStep in alternating windows of the same batches, so the host's drift
falls on both alike; the first window of each warms up and is not counted. Reported per case:
milliseconds per update of each window and value, their medians, and the median over windows of
the ratio second value / first. Results: bench/results/cpu_settings.json.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch
import yaml

from bench.gpu import synthetic_shards
from bench.padding_cpu import DEMO
from bench.run import BENCH_SMALL
from nmt.config import load_recipe
from nmt.data.prepare import prepare
from nmt.data.shards import ParallelShards
from nmt.data.tokenizer import load_processor, tokenizer_paths, train_tokenizer
from nmt.host_memory import keep_freed_memory
from nmt.model.transformer import Transformer
from nmt.train.step import TrainStep
from nmt.train.training_data import run_epoch_batches
from tools.results import provenance, write_json

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
# The base model's shape (recipes/wmt14_en_de_base.yaml: 6+6 layers, 512 wide) on Multi30k's 8k vocabulary,
# 4,096-token batches: what its products cost on a CPU, at a few updates per window.
BASE_WIDTH = ["output_dir=runs/base_width", "model.encoder_layers=6", "model.decoder_layers=6", "model.d_model=512",
              "model.heads=8", "model.d_ff=2048", "model.dropout=0.1", "tokenizer.vocab_size=8000",
              "tokenizer.joint=true", "train.max_tokens=4096", "train.update_freq=1", "train.precision=fp32"]
# (each recipe's output_dir replaced by a scratch folder)
SHAPES = {"demo": DEMO, "bench_small": BENCH_SMALL, "base_width": BASE_WIDTH}


def prepared(shape: str, scratch: Path):
    """The shape's recipe on Multi30k, its tokenizer trained and its data prepared under `scratch`."""
    recipe = load_recipe(ROOT / "recipes" / "multi30k_en_de.yaml",
                         [*SHAPES[shape], f"output_dir={scratch / shape}"])
    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
    prepare(recipe.data, recipe.tokenizer, recipe.out)
    return recipe


def vocabulary_size(recipe) -> int:
    return load_processor(tokenizer_paths(recipe.out, recipe.tokenizer.joint)[1]).get_piece_size()


def compare(recipe, data: ParallelShards, vocab: int, key: str, values: list, windows: int, updates: int) -> dict:
    """Alternating windows of `updates` updates, one model per value of train.`key`."""
    steps = {}
    for value in values:
        torch.manual_seed(1)
        model = Transformer(recipe.model, vocab, vocab)
        steps[value] = TrainStep(model, recipe.train.model_copy(update={key: value}), torch.device("cpu"))
    return alternated_windows(steps, recipe.train.update_freq, data, recipe.train, windows, updates)


def alternated_windows(steps: dict, update_freq: int, data: ParallelShards, batching, windows: int,
                       updates: int) -> dict:
    """`steps` (two TrainSteps by name) take the same batches (drawn as `batching` draws them) in
    alternating windows of `updates` updates; the first window of each warms up. Milliseconds per
    update of each window, their medians, and the median of the windows' ratios second / first."""
    batches, epoch = [], 0
    while len(batches) < (windows + 1) * updates * update_freq:
        batches += run_epoch_batches(data, batching, epoch=epoch)
        epoch += 1
    groups = [batches[i * update_freq:(i + 1) * update_freq] for i in range(len(batches) // update_freq)]
    milliseconds = {value: [] for value in steps}
    for window in range(windows + 1):
        for value, step in steps.items():
            start = time.perf_counter()
            for group in groups[window * updates:(window + 1) * updates]:
                step(data, group)
            if window:  # the first window warms up
                milliseconds[value].append(round((time.perf_counter() - start) / updates * 1e3, 1))
    (a, first), (b, second) = milliseconds.items()
    return {"milliseconds_per_update": {str(v): ms for v, ms in milliseconds.items()},
            "median": {str(v): statistics.median(ms) for v, ms in milliseconds.items()},
            f"{b}_over_{a}": round(statistics.median(y / x for x, y in zip(first, second)), 3)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setting", default="train.attention", help="a train.* setting")
    parser.add_argument("--values", default="sdpa,matmul", help="its two values, comma-separated")
    parser.add_argument("--windows", type=int, default=8, help="timed windows per value and case")
    parser.add_argument("--updates", type=int, default=20, help="updates per window on Multi30k (half on news lengths)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--shapes", default="demo,bench_small")
    parser.add_argument("--out", type=Path, default=RESULTS / "cpu_settings.json")
    args = parser.parse_args(argv)
    section, _, key = args.setting.partition(".")
    if section != "train" or not key:
        parser.error(f"--setting {args.setting}: a train.* setting")
    values = [yaml.safe_load(v) for v in args.values.split(",")]
    if len(values) != 2:
        parser.error(f"--values {args.values}: two values")
    torch.set_num_threads(args.threads)
    keep_freed_memory()  # as nmt train does on a CPU: freed blocks reused, not faulted in again
    report = {"provenance": provenance(), "setting": args.setting, "values": values, "windows": args.windows,
              "cases": []}
    with tempfile.TemporaryDirectory(prefix="nmt-cpu-settings-") as scratch:
        for shape in args.shapes.split(","):
            recipe = prepared(shape, Path(scratch))
            vocab = vocabulary_size(recipe)
            news = synthetic_shards(Path(scratch) / shape / "news", vocab, pairs=20_000)
            for sentences, data, updates in (("multi30k", ParallelShards(recipe.out / "data", "train"), args.updates),
                                             ("news_lengths", news, max(1, args.updates // 2))):
                case = {"shape": shape, "sentences": sentences, "updates_per_window": updates,
                        "max_tokens": recipe.train.max_tokens, "d_model": recipe.model.d_model,
                        **compare(recipe, data, vocab, key, values, args.windows, updates)}
                print({k: case[k] for k in ("shape", "sentences", "median", f"{values[1]}_over_{values[0]}")}, flush=True)
                report["cases"].append(case)
    write_json(args.out, report)
    return report


if __name__ == "__main__":
    main()
