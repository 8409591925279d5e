"""What decode.compile buys on a CPU: the torch engine's decoding steps compiled
(nmt.model.compiled_decoding) against eager, on a trained model (`make demo`'s by default).

Measured, eager and compiled alternating in one process, each figure the median of --rounds rounds:
- served requests: the first 64 lines of test_2016_flickr sent as requests of 1 and of 4 lines,
  each request's latency through translate_lines, on --request-threads threads (a server's
  worker on its share of 2 cores: 1);
- a file: the first 400 lines in one translate_lines call, on --threads threads;
- whether the outputs are the same, line for line;
- the warm-up a server runs before it takes requests (nmt.decode.warm_up), in a process of its
  own with an empty compile cache (cold) and again with that cache (warm).
Writes bench/results/decode_compile.json.

    python -m bench.decode_compile [-c runs/demo/checkpoints/best.pt] [--rounds 5]
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
from tools.results import write_json

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
TEST = ROOT / "data" / "multi30k" / "test_2016_flickr.en.gz"


def warm_up_seconds(checkpoint: Path, cache: Path, threads: int) -> float:
    """The warm-up's time in a fresh process whose compile cache is `cache`."""
    script = ("import sys, time, torch; from pathlib import Path; "
              "from nmt.decode.engines.engine import load_engine; from nmt.decode.warm_up import warm_up; "
              f"torch.set_num_threads({threads}); t = load_engine([Path(sys.argv[1])]); "
              "cfg = t.recipe.decode.model_copy(update={'compile': True}); "
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
    args = parser.parse_args()
    if not args.checkpoint.is_file():
        raise SystemExit(f"{args.checkpoint}: no such checkpoint (run `make demo`, or give one with -c)")

    with tempfile.TemporaryDirectory() as cache:
        cold = warm_up_seconds(args.checkpoint, Path(cache), args.request_threads)
        warm = warm_up_seconds(args.checkpoint, Path(cache), args.request_threads)
    print(f"warm-up: {cold:.1f} s cold, {warm:.1f} s from the cache", flush=True)

    translator = load_engine([args.checkpoint])
    eager = translator.recipe.decode
    compiled = eager.model_copy(update={"compile": True})
    lines = list(read_lines(TEST))
    settings = {"requests of 1 line": ([[line] for line in lines[:64]], args.request_threads),
                "requests of 4 lines": ([lines[i:i + 4] for i in range(0, 64, 4)], args.request_threads),
                "a file of 400 lines": ([lines[:400]], args.threads)}
    for requests, threads in settings.values():  # compiles every kind of shape before timing
        torch.set_num_threads(threads)
        requests_median(translator, requests[:2], compiled)
    rounds = {name: [] for name in settings}
    for round_number in range(args.rounds):
        for name, (requests, threads) in settings.items():
            torch.set_num_threads(threads)
            eager_s, eager_out = requests_median(translator, requests, eager)
            compiled_s, compiled_out = requests_median(translator, requests, compiled)
            rounds[name].append({"eager_ms": round(eager_s * 1e3, 2), "compiled_ms": round(compiled_s * 1e3, 2),
                                 "ratio": round(compiled_s / eager_s, 3),
                                 "same_outputs": tokens_of(eager_out) == tokens_of(compiled_out)})
            print(f"round {round_number + 1} {name}: {rounds[name][-1]}", flush=True)
    results = {
        "checkpoint": str(args.checkpoint.relative_to(ROOT) if args.checkpoint.is_relative_to(ROOT) else args.checkpoint),
        "decode": {"beam_size": eager.beam_size, "length_penalty": eager.length_penalty,
                   "no_repeat_ngram_size": eager.no_repeat_ngram_size},
        "warm_up_seconds": {"cold_cache": round(cold, 1), "warm_cache": round(warm, 1),
                            "threads": args.request_threads},
        "settings": {name: {"threads": threads, "requests": len(requests),
                            "median_eager_ms": statistics.median(r["eager_ms"] for r in rounds[name]),
                            "median_compiled_ms": statistics.median(r["compiled_ms"] for r in rounds[name]),
                            "median_ratio": statistics.median(r["ratio"] for r in rounds[name]),
                            "same_outputs_every_round": all(r["same_outputs"] for r in rounds[name]),
                            "rounds": rounds[name]}
                     for name, (requests, threads) in settings.items()},
    }
    path = RESULTS / "decode_compile.json"
    write_json(path, results)
    print(json.dumps({name: {k: v for k, v in s.items() if k != "rounds"} for name, s in results["settings"].items()},
                     indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
