"""Decoding speed of nmt's own search beside CTranslate2, on the bench-small shape (part of `make bench`).

The peers' decoding task: the first 100 sentences of test_2016_flickr, beam 4, every output
exactly 20 tokens (min = max length), so every engine does the same work. Measured, each the
best of several alternating rounds (a shared host drifts):
- nmt (torch fp32): beam_search on one batch of the 100 sentences, as `make bench` times it;
- nmt translate_lines: the same through nmt's text interface (tokenize, sort, batch, detokenize);
- both again in bf16 (decode.precision bf16: fast on a CPU with AVX512-BF16 or AMX, which the
  JSON names; emulated, and slow, on others);
- CTranslate2 called directly (fp32, int8) on the exported model, tokens prepared beforehand;
- nmt's CTranslate2 engine (fp32, int8): translate_lines through nmt, as `nmt translate -c EXPORT` runs.
Rounds alternate: nmt's runs, then CTranslate2's in a process of their own (the two slow each
other down once both have run in one process), so that both see the same drift of a shared host.
The wrapper overhead is nmt-through-CTranslate2 over CTranslate2 called directly.
Writes bench/results/decode_engines.json.

    python -m bench.decode_engines [--threads 2] [--rounds 5] [--profile]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import platform
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch

from nmt.model.flops import decoder_flops_per_target_token
from bench.run import BENCH_SMALL, matmul_ceiling
from nmt.checkpoint import checkpoint_of
from nmt.config import load_recipe, recipe_to_dict
from nmt.data.corpus import read_lines
from nmt.data.prepare import prepare
from nmt.data.tokenizer import train_tokenizer
from nmt.decode.engines import ctranslate2_engine
from nmt.decode.engines.torch_engine import Translator, decode_autocast, for_inference
from nmt.decode.search import beam_search
from nmt.decode.translate import translate_lines
from nmt.export.ctranslate2 import export_checkpoint
from nmt.host_memory import keep_freed_memory
from nmt.model.precision import bf16_arithmetic
from nmt.model.transformer import Transformer
from nmt.special_tokens import EOS, PAD
from tools.results import write_json

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
N, LENGTH, BEAM, ALPHA = 100, 20, 4, 0.6


def bench_model(threads: int):
    """The bench-small model (seeded initial weights: forced-length decoding costs the same
    whatever the weights) as a checkpoint payload, and nmt's own translator for it."""
    recipe = load_recipe(ROOT / "recipes" / "multi30k_en_de.yaml", BENCH_SMALL)
    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
    prepare(recipe.data, recipe.tokenizer, recipe.out)
    from nmt.data.tokenizer import load_processor, tokenizer_paths

    src_path, tgt_path = tokenizer_paths(recipe.out, recipe.tokenizer.joint)
    sp = load_processor(src_path)
    keep_freed_memory()  # as load_engine does for `nmt translate`
    torch.manual_seed(1)
    model = Transformer(recipe.model, sp.get_piece_size(), sp.get_piece_size()).eval()
    proto = torch.frombuffer(bytearray(src_path.read_bytes()), dtype=torch.uint8)
    payload = {"recipe": recipe_to_dict(recipe), "model": model.state_dict(), "tokenizer": {"src": proto, "tgt": proto}}
    cpu = torch.device("cpu")  # as load_engine sets it up: linear layers packed for oneDNN
    return recipe, payload, Translator(for_inference(model, cpu), recipe, sp, load_processor(tgt_path), cpu)


def timed_once(runs: dict) -> dict[str, float]:
    """Each function run once, in order: its seconds."""
    seconds = {}
    for name, fn in runs.items():
        start = time.perf_counter()
        fn()
        seconds[name] = time.perf_counter() - start
    return seconds


_CTRANSLATE2_RUNS: dict = {}  # in the CTranslate2 worker process: its engines, loaded once


def ctranslate2_round(exports: dict[str, Path], pieces: list[list[str]], lines: list[str], cfg,
                      threads: int) -> dict[str, float]:
    """One round in the worker process: CTranslate2 called directly and through nmt's engine,
    fp32 and int8, each once (the first call loads the engines and warms them up)."""
    if not _CTRANSLATE2_RUNS:
        torch.set_num_threads(threads)
        engines = {q: ctranslate2_engine.load(path, threads=threads) for q, path in exports.items()}

        def raw(quantization: str):
            return lambda: engines[quantization].translator.translate_batch(
                pieces, beam_size=BEAM, length_penalty=ALPHA, min_decoding_length=LENGTH,
                max_decoding_length=LENGTH, max_batch_size=2048, batch_type="tokens")

        _CTRANSLATE2_RUNS.update({
            "ctranslate2_fp32_direct": raw("float32"),
            "nmt_ctranslate2_fp32": lambda: translate_lines(engines["float32"], lines, cfg),
            "ctranslate2_int8_direct": raw("int8"),
            "nmt_ctranslate2_int8": lambda: translate_lines(engines["int8"], lines, cfg),
        })
        timed_once(_CTRANSLATE2_RUNS)  # warm-up
    return timed_once(_CTRANSLATE2_RUNS)


def alternated_best(rounds: int, torch_runs: dict, ctranslate2: Callable[[], dict[str, float]]) -> dict[str, float]:
    """Rounds of nmt's runs then CTranslate2's, alternating (a shared host drifts, and a ratio
    needs both measured under the same drift): the best seconds of each run over the rounds."""
    timed_once(torch_runs)  # warm-up (CTranslate2's first round warms up in its worker)
    best: dict[str, float] = {}
    for _ in range(rounds):
        for name, seconds in (timed_once(torch_runs) | ctranslate2()).items():
            best[name] = min(best.get(name, float("inf")), seconds)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    recipe, payload, own = bench_model(args.threads)
    lines = [line for _, line in zip(range(N), read_lines(Path(f"{recipe.data.test}.en.gz")))]
    cfg = recipe.decode.model_copy(update={"beam_size": BEAM, "length_penalty": ALPHA, "max_len_a": 0.0,
                                           "max_len_b": LENGTH, "min_len": LENGTH, "max_tokens": 2048})

    ids = sorted((own.src_tokenizer.encode(line) + [EOS] for line in lines), key=len)
    src = torch.full((len(ids), max(map(len, ids))), PAD)
    for i, row in enumerate(ids):
        src[i, : len(row)] = torch.tensor(row)

    exports = {}
    for quantization in ("float32", "int8"):
        exports[quantization] = recipe.out / f"ctranslate2_{quantization}"
        export_checkpoint(checkpoint_of(payload, Path("bench-small")), exports[quantization], quantization, force=True)
    pieces = [[own.src_tokenizer.id_to_piece(i) for i in row[:-1]] for row in ids]  # the export adds EOS

    def search_in(precision: str):
        def search():
            with decode_autocast(own.device, precision):
                beam_search(own.model, src, BEAM, ALPHA, 0.0, LENGTH, min_len=LENGTH)
        return search

    bf16_cfg = cfg.model_copy(update={"precision": "bf16"})
    torch_runs = {
        "nmt_torch_fp32": search_in("fp32"),
        "nmt_torch_fp32_translate_lines": lambda: translate_lines(own, lines, cfg),
        "nmt_torch_bf16": search_in("bf16"),
        "nmt_torch_bf16_translate_lines": lambda: translate_lines(own, lines, bf16_cfg),
    }
    ceiling_before = matmul_ceiling()
    # CTranslate2 in a process of its own: after one has run, torch's and CTranslate2's thread
    # pools slow each other down (each at about 0.6-0.7x its own speed on 2 cores). Each waits
    # while the other runs.
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        seconds = alternated_best(args.rounds, torch_runs, lambda: pool.submit(
            ctranslate2_round, exports, pieces, lines, cfg, args.threads).result())
    ceiling = (ceiling_before + matmul_ceiling()) / 2
    dec = decoder_flops_per_target_token(recipe.model, own.tgt_tokenizer.get_piece_size())
    gflop = N * BEAM * LENGTH * dec / 1e9  # LENGTH steps: the last files the beams without EOS
    report = {
        "config": "bench-small", "task": f"{N} sentences, beam {BEAM}, exactly {LENGTH} tokens each",
        "torch": torch.__version__, "ctranslate2": __import__("ctranslate2").__version__,
        "threads": args.threads, "machine": platform.machine(), "rounds": args.rounds,
        "matmul_ceiling_gflop_per_s": round(ceiling, 1), "decoder_matmul_gflop": round(gflop, 1),
        "seconds": {name: round(s, 3) for name, s in seconds.items()},
        "nmt_fp32_speed_vs_ctranslate2_fp32": round(seconds["ctranslate2_fp32_direct"] / seconds["nmt_torch_fp32"], 3),
        "nmt_fp32_fraction_of_matmul_ceiling": round(gflop / seconds["nmt_torch_fp32"] / ceiling, 3),
        "cpu_bf16_arithmetic": bf16_arithmetic(own.device),
        "nmt_bf16_time_vs_nmt_fp32": round(seconds["nmt_torch_bf16"] / seconds["nmt_torch_fp32"], 3),
        "nmt_bf16_speed_vs_ctranslate2_int8": round(seconds["ctranslate2_int8_direct"] / seconds["nmt_torch_bf16"], 3),
        "wrapper_overhead": {q: round(seconds[f"nmt_ctranslate2_{q}"] / seconds[f"ctranslate2_{q}_direct"] - 1, 3)
                             for q in ("fp32", "int8")},
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_json(RESULTS / "decode_engines.json", report)
    print(json.dumps(report, indent=1))
    if args.profile:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as prof:
            torch_runs["nmt_torch_fp32"]()
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))


if __name__ == "__main__":
    main()
