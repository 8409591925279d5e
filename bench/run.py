"""`make bench`: training and decoding speed on the bench-small shape, on this machine's CPU.

bench-small (as ../shared/peers/README.md): 3+3 layers, d_model 256, 4 heads, d_ff 1024, post-LN,
tied embeddings, joint 8k BPE on Multi30k en-de, fp32, 4096-token batches, 2 threads.
Decoding: the first 100 sentences of test_2016_flickr, beam 4, every output exactly 20 tokens.
Writes bench/results/bench_small.json.

    python -m bench.run [--steps 20] [--threads 2] [--profile]
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import time
from pathlib import Path

import torch

from nmt.model import onednn_linear
from nmt.model.flops import decoder_flops_per_target_token, training_flops
from nmt.config import load_recipe
from nmt.data.batching import epoch_batches
from nmt.data.corpus import read_lines
from nmt.data.prepare import prepare
from nmt.data.tokenizer import train_tokenizer
from nmt.decode.engines.torch_engine import for_inference
from nmt.decode.search import beam_search, greedy_search
from nmt.special_tokens import EOS, PAD
from nmt.train.trainer import Trainer
from tools.results import write_json

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
BENCH_SMALL = [
    "output_dir=runs/bench_small", "model.encoder_layers=3", "model.decoder_layers=3", "model.d_model=256",
    "model.heads=4", "model.d_ff=1024", "model.norm=post", "model.dropout=0.1", "model.attention_dropout=0.1",
    "tokenizer.vocab_size=8000", "tokenizer.joint=true", "train.max_tokens=4096", "train.update_freq=1",
    "train.precision=fp32", "train.lr_schedule=inverse_sqrt", f"train.lr={2.0 * (256 * 4000) ** -0.5}",
    "train.warmup_steps=4000",  # the peers' noam factor 2: a peak of 2 · d_model^-0.5 · warmup^-0.5
    "train.label_smoothing=0.1",
]


def matmul_ceiling(size: int = 2048, repeats: int = 3, trials: int = 5) -> float:
    """fp32 GFLOP/s of one large square matmul, the best of several trials (a shared host's
    speed drifts from second to second) through either of torch's CPU libraries, MKL (`a @ b`)
    or oneDNN (which nmt trains and translates with, nmt.model.onednn_linear): the ceiling for the
    training figures."""
    return max(matmul_rates(size, repeats, trials).values())


def matmul_rates(size: int = 2048, repeats: int = 3, trials: int = 5) -> dict[str, float]:
    """matmul_ceiling's figure for each library ({"mkl": ..., "onednn": ...}; oneDNN where torch has
    it). Their ratio depends on the processor: two hosts both called "AMD EPYC" gave oneDNN 2.2
    times MKL's rate and 1.14 times (the second a Zen 4: family 25, model 17), and a peer computing
    with MKL (eole) gains or loses against nmt with it (bench/speed.md)."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    products = {"mkl": lambda: a @ b}
    if onednn_linear.available():
        b_transposed = b.t().contiguous()
        products["onednn"] = lambda: onednn_linear.product(a, b_transposed)
    rates = {}
    for name, product in products.items():
        product()
        best = 0.0
        for _ in range(trials):
            start = time.perf_counter()
            for _ in range(repeats):
                product()
            best = max(best, 2 * size ** 3 * repeats / (time.perf_counter() - start) / 1e9)
        rates[name] = round(best, 1)
    return rates


def bench_training(trainer: Trainer, steps: int, warmup: int = 3) -> dict:
    data = trainer.train_data
    batches = epoch_batches(data, trainer.train_cfg.max_tokens, seed=1, epoch=0)
    for indices in batches[:warmup]:
        trainer.train_step([indices])
    timed = batches[warmup:warmup + steps]
    src_tokens = sum(int(data.src.lengths[idx].sum()) + len(idx) for idx in timed)
    start = time.perf_counter()
    tgt_tokens = sum(trainer.train_step([indices])[1] for indices in timed)
    seconds = time.perf_counter() - start
    flops = training_flops(trainer.recipe.model, trainer.tgt_tokenizer.get_piece_size(), src_tokens, tgt_tokens)
    return {"updates": steps, "seconds": round(seconds, 2),
            "target_tokens_per_update": round(tgt_tokens / steps), "target_tokens_per_s": round(tgt_tokens / seconds),
            "matmul_gflop_per_s": round(flops / seconds / 1e9, 1)}


def bench_decoding(trainer: Trainer, recipe_test_prefix: str, n: int = 100, repeats: int = 3) -> dict:
    """Beam 4 and greedy over `n` test sentences, every output 20 tokens: the best of `repeats`
    timings each (one timing of a second or less on a shared host varied by 15 %)."""
    model = for_inference(trainer.model, torch.device("cpu"))  # as `nmt translate` loads it: packed for oneDNN
    lines = [line for _, line in zip(range(n), read_lines(Path(f"{recipe_test_prefix}.en.gz")))]
    ids = [trainer.src_tokenizer.encode(line) + [EOS] for line in lines]
    src = torch.full((len(ids), max(map(len, ids))), PAD)
    for i, row in enumerate(ids):
        src[i, : len(row)] = torch.tensor(row)
    order = src.ne(PAD).sum(1).argsort()
    src = src[order]
    results = {}
    for name, search in (("beam4", lambda s: beam_search(model, s, 4, 0.6, 0.0, 20, min_len=20)),
                         ("greedy", lambda s: greedy_search(model, s, 0.0, 20, min_len=20))):
        search(src[:8])  # warm-up
        timings = []
        for _ in range(repeats):
            start = time.perf_counter()
            search(src)  # one batch of all 100 sentences, as the peers decode them (2048-token batches)
            timings.append(round(time.perf_counter() - start, 3))
        seconds = min(timings)
        results[name] = {"seconds": seconds, "timings": timings, "sentences_per_s": round(n / seconds, 1),
                         "target_tokens_per_s": round(n * 20 / seconds)}
    # Matmul work of beam 4: 4 beams × 20 steps (the 20th files the beams, no EOS step) × decoder FLOPs per token
    # (encoder and cross-k/v are small).
    dec = decoder_flops_per_target_token(trainer.recipe.model, trainer.tgt_tokenizer.get_piece_size())
    results["beam4"]["matmul_gflop_per_s"] = round(n * 4 * 20 * dec / results["beam4"]["seconds"] / 1e9, 1)
    return results


def profile_training(trainer: Trainer, steps: int = 3) -> str:
    from torch.profiler import ProfilerActivity, profile

    data = trainer.train_data
    batches = epoch_batches(data, trainer.train_cfg.max_tokens, seed=1, epoch=0)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for indices in batches[:steps]:
            trainer.train_step([indices])
    return prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=20)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    recipe = load_recipe(ROOT / "recipes" / "multi30k_en_de.yaml", BENCH_SMALL)
    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
    prepare(recipe.data, recipe.tokenizer, recipe.out)
    trainer = Trainer(recipe)

    rates = matmul_rates()
    before = max(rates.values())
    training = bench_training(trainer, args.steps)
    after = matmul_ceiling()
    ceiling = (before + after) / 2  # measured on both sides of the training run: the host drifts
    training["fraction_of_matmul_ceiling"] = round(training["matmul_gflop_per_s"] / ceiling, 3)
    # before decoding, which packs the same model's layers for inference (their training products
    # would then go to MKL, not oneDNN as they do in a run)
    profile = profile_training(trainer) if args.profile else None
    decoding = bench_decoding(trainer, recipe.data.test)
    report = {
        "config": "bench-small", "torch": torch.__version__, "threads": args.threads,
        "machine": platform.machine(), "matmul_ceiling_gflop_per_s": round(ceiling, 1),
        "matmul_ceiling_before_after_training": [round(before, 1), round(after, 1)],
        "matmul_gflop_per_s_by_library": rates,  # before training
        "training": training, "decoding_100_sentences_20_tokens": decoding,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_json(RESULTS / "bench_small.json", report)
    print(json.dumps(report, indent=1))
    if profile:
        print(profile)


if __name__ == "__main__":
    main()
