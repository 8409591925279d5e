"""What decode.compile buys on a CPU: the torch engine's decoding steps compiled
(nmt.model.compiled_decoding) against eager, on a trained model (`make demo`'s by default), in
each decode.precision of --precisions (fp32 and bf16: bf16 autocast, whose products inductor
then lowers).

Measured, the four settings alternating in one process, each figure the median of --rounds rounds:
- served requests: the first 64 lines of test_2016_flickr sent as requests of 1 and of 4 lines,
  each request's latency through translate_lines, on --request-threads threads (a server's
  worker on its share of 2 cores: 1);
- a file: the first 400 lines in one translate_lines call, on --threads threads;
- whether the compiled outputs are eager's, line for line, in the same precision;
- the warm-up a server runs before it takes requests (nmt.decode.warm_up), in a process of its
  own with an empty compile cache (cold) and again with that cache (warm), for each precision.
Writes bench/results/decode_compile.json.

    python -m bench.decode_compile [-c runs/demo/checkpoints/best.pt] [--rounds 5] [--precisions fp32,bf16]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from nmt.data.corpus import read_lines
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import translate_lines
from nmt.model.precision import bf16_arithmetic
from tools.results import write_json

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
TEST = ROOT / "data" / "multi30k" / "test_2016_flickr.en.gz"


def warm_up_seconds(checkpoint: Path, cache: Path, threads: int, precision: str) -> float:
    """The warm-up's time in a fresh process whose compile cache is `cache`."""
    script = ("import sys, time, torch; from pathlib import Path; "
              "from nmt.decode.engines.engine import load_engine; from nmt.decode.warm_up import warm_up; "
              f"torch.set_num_threads({threads}); t = load_engine([Path(sys.argv[1])]); "
              f"cfg = t.recipe.decode.model_copy(update={{'compile': True, 'precision': '{precision}'}}); "
              "start = time.perf_counter(); warm_up(t, cfg); print(time.perf_counter() - start)")
    env = os.environ | {"TORCHINDUCTOR_CACHE_DIR": str(cache)}
    run = subprocess.run([sys.executable, "-c", script, str(checkpoint)], capture_output=True, text=True, env=env,
                         check=True)
    return float(run.stdout.split()[-1])


def requests_median(translator, requests: list[list[str]], cfg) -> tuple[float, list]:
    times, outputs = [], []
    for lines in requests:
        start = time.perf_counter()
        outputs.append(translate_lines(translator, lines, cfg))
        times.append(time.perf_counter() - start)
    return statistics.median(times), outputs


def tokens_of(outputs: list) -> list:
    return [[h.tokens for h in line] for request in outputs for line in request]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-c", "--checkpoint", type=Path, default=ROOT / "runs" / "demo" / "checkpoints" / "best.pt")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--request-threads", type=int, default=1)
    parser.add_argument("--precisions", default="fp32,bf16", help="decode.precision values, comma-separated")
    args = parser.parse_args()
    if not args.checkpoint.is_file():
        raise SystemExit(f"{args.checkpoint}: no such checkpoint (run `make demo`, or give one with -c)")

    precisions = args.precisions.split(",")
    warm_ups = {}
    for precision in precisions:
        with tempfile.TemporaryDirectory() as cache:
            cold = warm_up_seconds(args.checkpoint, Path(cache), args.request_threads, precision)
            warm = warm_up_seconds(args.checkpoint, Path(cache), args.request_threads, precision)
        warm_ups[precision] = {"cold_cache": round(cold, 1), "warm_cache": round(warm, 1)}
        print(f"{precision} warm-up: {cold:.1f} s cold, {warm:.1f} s from the cache", flush=True)

    translator = load_engine([args.checkpoint])
    recipe = translator.recipe.decode
    configs = {(precision, compiled): recipe.model_copy(update={"precision": precision, "compile": compiled})
               for precision in precisions for compiled in (False, True)}
    lines = list(read_lines(TEST))
    settings = {"requests of 1 line": ([[line] for line in lines[:64]], args.request_threads),
                "requests of 4 lines": ([lines[i:i + 4] for i in range(0, 64, 4)], args.request_threads),
                "a file of 400 lines": ([lines[:400]], args.threads)}
    for requests, threads in settings.values():  # compiles every kind of shape, and packs bf16 weights, before timing
        torch.set_num_threads(threads)
        for cfg in configs.values():
            requests_median(translator, requests[:2], cfg)
    rounds = {(precision, name): [] for precision in precisions for name in settings}
    for round_number in range(args.rounds):
        for name, (requests, threads) in settings.items():
            torch.set_num_threads(threads)
            for precision in precisions:
                eager_s, eager_out = requests_median(translator, requests, configs[precision, False])
                compiled_s, compiled_out = requests_median(translator, requests, configs[precision, True])
                rounds[precision, name].append({"eager_ms": round(eager_s * 1e3, 2),
                                                "compiled_ms": round(compiled_s * 1e3, 2),
                                                "ratio": round(compiled_s / eager_s, 3),
                                                "same_outputs": tokens_of(eager_out) == tokens_of(compiled_out)})
                print(f"round {round_number + 1} {precision} {name}: {rounds[precision, name][-1]}", flush=True)

    def summary(precision: str, name: str, threads: int, requests: list) -> dict:
        timed = rounds[precision, name]
        entry = {"threads": threads, "requests": len(requests),
                 "median_eager_ms": statistics.median(r["eager_ms"] for r in timed),
                 "median_compiled_ms": statistics.median(r["compiled_ms"] for r in timed),
                 "median_ratio": statistics.median(r["ratio"] for r in timed),
                 "same_outputs_every_round": all(r["same_outputs"] for r in timed)}
        if precision != "fp32" and "fp32" in precisions:  # against the default: fp32, eager
            fp32 = rounds["fp32", name]
            entry["median_eager_over_fp32_eager"] = statistics.median(
                r["eager_ms"] / f["eager_ms"] for r, f in zip(timed, fp32))
            entry["median_compiled_over_fp32_eager"] = statistics.median(
                r["compiled_ms"] / f["eager_ms"] for r, f in zip(timed, fp32))
        return entry | {"rounds": timed}

    results = {
        "checkpoint": str(args.checkpoint.relative_to(ROOT) if args.checkpoint.is_relative_to(ROOT) else args.checkpoint),
        "decode": {"beam_size": recipe.beam_size, "length_penalty": recipe.length_penalty,
                   "no_repeat_ngram_size": recipe.no_repeat_ngram_size},
        "cpu_bf16_arithmetic": bf16_arithmetic(torch.device("cpu")),
        "precisions": {precision: {
            "warm_up_seconds": warm_ups[precision] | {"threads": args.request_threads},
            "settings": {name: summary(precision, name, threads, requests)
                         for name, (requests, threads) in settings.items()}}
            for precision in precisions},
    }
    path = RESULTS / "decode_compile.json"
    write_json(path, results)
    print(json.dumps({precision: {name: {k: v for k, v in entry.items() if k != "rounds"}
                                   for name, entry in part["settings"].items()}
                      for precision, part in results["precisions"].items()}, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
