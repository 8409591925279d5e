"""What packing (train.pack_width) saves: the padded positions of an epoch's passes, one pair per
row against packed rows of several widths, on each side; and the training speed of both on a CPU,
measured alternately.

    python -m bench.packing [--updates 30] [--rounds 2] [--threads 2] [--widths 64,128,256]

Positions are counted on two corpora: the demo's prepared Multi30k (`make demo`, or its tokenizer
and prepare steps), in the demo's batches (1,024 tokens, exact widths, as on a CPU) and in the base
recipe's passes (2 × 12,500 tokens merged into one, widths rounded to 8, as on CUDA); and
bench.gpu's news-like synthetic pairs (lengths of WMT14 en-de's pieces) in the base recipe's passes.
Packed batches hold max_tokens // width rows; a width narrower than the corpus's longest pair is
left out. The speed is the demo's (eager, fp32; target tokens per second), plain and packed at
the first width; and the host's time to collate one of the base recipe's passes, plain and packed
at the last width. Writes
bench/results/packing.json.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from bench.gpu import synthetic_shards
from bench.padding_cpu import DEMO, tokens_per_s
from nmt.config import load_recipe
from nmt.data.batching import collate, epoch_batches, round_up
from nmt.data.packing import collate_packed, pair_sizes, packed_epoch_batches, packed_rows_per_batch
from nmt.data.shards import ParallelShards
from nmt.train.micro_batches import merge
from nmt.train.training_data import run_epoch_batches
from tools.results import write_json

ROOT = Path(__file__).resolve().parent.parent
BASE_PASS = {"max_tokens": 12_500, "update_freq": 2, "multiple": 8}  # the base recipe's update in one CUDA pass


def plain_positions(data: ParallelShards, passes: list[np.ndarray], multiple: int) -> tuple[int, int, int, int]:
    """(real source, real target, computed source, computed target) positions of plain passes."""
    real_src = real_tgt = padded_src = padded_tgt = 0
    for idx in passes:
        src, tgt = pair_sizes(data, idx)
        real_src, real_tgt = real_src + int(src.sum()), real_tgt + int(tgt.sum())
        padded_src += len(idx) * round_up(int(src.max()), multiple)
        padded_tgt += len(idx) * round_up(int(tgt.max()), multiple)
    return real_src, real_tgt, padded_src, padded_tgt


def fractions(real_src: int, real_tgt: int, padded_src: int, padded_tgt: int) -> dict:
    return {"source_padding_fraction": round(1 - real_src / padded_src, 4),
            "target_padding_fraction": round(1 - real_tgt / padded_tgt, 4),
            "computed_positions": padded_src + padded_tgt, "real_positions": real_src + real_tgt}


def census(data: ParallelShards, max_tokens: int, update_freq: int, multiple: int, widths: list[int]) -> dict:
    """An epoch's real and computed positions: plain (each update's batches merged into one pass,
    widths rounded to `multiple`) and packed at each width (max_tokens // width rows per batch)."""
    batches = epoch_batches(data, max_tokens, 1, 0, group=update_freq)
    passes = [merge(batches[i:i + update_freq], 1)[0] for i in range(0, len(batches), update_freq)]
    plain = fractions(*plain_positions(data, passes, multiple))
    result = {"pairs": len(data), "max_tokens": max_tokens, "update_freq": update_freq, "length_multiple": multiple,
              "one_pair_per_row": plain | {"batches": len(batches)}}
    longest = int(max(data.src.lengths.max(), data.tgt.lengths.max())) + 1
    src, tgt = pair_sizes(data, np.arange(len(data)))
    for width in widths:
        if width < longest:
            continue
        rows = packed_rows_per_batch(max_tokens, width)
        packed = packed_epoch_batches(data, width, rows, 1, 0)
        computed = len(packed) * rows * width
        result[f"packed_{width}"] = fractions(int(src.sum()), int(tgt.sum()), computed, computed) | {
            "rows_per_batch": rows, "batches": len(packed),
            "computed_positions_vs_one_pair_per_row": round(2 * computed / plain["computed_positions"], 4)}
    return result


def collate_milliseconds(data: ParallelShards, width: int, passes: int = 30, rounds: int = 3) -> dict:
    """The host's time to collate one pass of the base recipe's update (2 batches merged), plain and
    packed, alternately: on a GPU it is part of every update's host time."""
    plain = epoch_batches(data, BASE_PASS["max_tokens"], 1, 0, group=2)
    rows = packed_rows_per_batch(BASE_PASS["max_tokens"], width)
    packed = packed_epoch_batches(data, width, rows, 1, 0)
    times: dict[str, list[float]] = {"one_pair_per_row": [], f"packed_{width}": []}
    for _ in range(rounds):
        start = time.perf_counter()
        for i in range(passes):
            collate(data, np.concatenate(plain[2 * i:2 * i + 2]), BASE_PASS["multiple"])
        times["one_pair_per_row"].append(round((time.perf_counter() - start) / passes * 1e3, 2))
        start = time.perf_counter()
        for i in range(passes):
            collate_packed(data, packed[2 * i:2 * i + 2], width, rows)
        times[f"packed_{width}"].append(round((time.perf_counter() - start) / passes * 1e3, 2))
    return {"passes": passes, "milliseconds_per_pass": times}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--widths", default="64,128,256")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    widths = [int(w) for w in args.widths.split(",")]
    recipe = load_recipe(ROOT / "recipes" / "multi30k_en_de.yaml", DEMO)
    multi30k = ParallelShards(recipe.out / "data", "train")
    with tempfile.TemporaryDirectory() as scratch:
        news = synthetic_shards(Path(scratch), vocab=1000, pairs=200_000)
        counts = {
            "multi30k_demo_batches": census(multi30k, recipe.train.max_tokens, 1, 1, widths),
            "multi30k_base_recipe_passes": census(multi30k, **BASE_PASS, widths=widths),
            "news_like_base_recipe_passes": census(news, **BASE_PASS, widths=widths),
        }
        collating = collate_milliseconds(news, widths[-1])
    speeds: dict[str, list[float]] = {"one_pair_per_row": [], f"packed_{widths[0]}": []}
    for _ in range(args.rounds):
        for name, width in (("one_pair_per_row", None), (f"packed_{widths[0]}", widths[0])):
            cfg = recipe.train.model_copy(update={"pack_width": width})
            epoch = run_epoch_batches(multi30k, cfg, 0)[:args.updates + 1]
            speeds[name].append(round(tokens_per_s(recipe, multi30k, epoch, train=cfg)))
    result = {"positions": counts, "collate_news_like_base_recipe_pass": collating, "cpu_speed": {
        "threads": args.threads, "max_tokens": recipe.train.max_tokens, "updates": args.updates,
        "target_tokens_per_s": speeds,
        "speed_ratio_packed_over_plain": round(sum(speeds[f"packed_{widths[0]}"]) / sum(speeds["one_pair_per_row"]), 3)}}
    print(result)
    write_json(ROOT / "bench" / "results" / "packing.json", result)


if __name__ == "__main__":
    main()
