"""A bounded load run against `nmt serve` on 127.0.0.1 (`make bench-serve`).

Starts the real server on a free loopback port and sends requests of --lines sentences (4 by
default; the first sentences of test_2016_flickr, in turn) for a fixed time in three settings:
- one client at a time (each request waits for the previous answer), the server's defaults;
- N concurrent clients, batching off (one worker, one request per model call);
- N concurrent clients with the server's defaults (batching, two workers on a CPU, each in a
  process of its own with the torch engine);
- with the torch engine, the same with the workers as threads of the server's process.
Reports the server's start-up (seconds until /health answers), requests/s, sentences/s, p50/p99
latency and errors for each, and beside them the same model's offline throughput on the same
sentences (`nmt translate` of a file: in this process, on --threads threads), in bench/results/serve_load_ENGINE.json. Traffic goes to 127.0.0.1 only;
every loop stops on time. The clients run on the same cores as the server.

A shared host's speed drifts by a quarter within minutes, so the settings run in turn for
--rounds rounds (offline, then the others, again and again): each figure is the median of its
rounds, each round's figures are kept, and the ratios are taken within a round.

    python -m bench.serve_load -c runs/demo/checkpoints/best.pt [--clients 32] [--lines 4] [--seconds 30]
    python -m bench.serve_load --overload --clients 400   # past the server's queue limit
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from nmt.data.corpus import read_lines
from tools.results import write_json

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
MEASURED = ("startup_seconds", "seconds", "requests", "requests_per_s", "sentences_per_s", "latency_ms_p50", "latency_ms_p99",
            "latency_ms_max", "refused_busy", "lines_per_model_call")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(model: str, extra: list[str]) -> tuple[subprocess.Popen, str, float]:
    """The server, its address, and the seconds from its start to its first answer to /health."""
    port = free_port()
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "nmt", "serve", model, "--port", str(port), *extra],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/health", timeout=5).read()
            return process, url, round(time.monotonic() - started, 2)
        except OSError:
            if process.poll() is not None:
                raise SystemExit(f"the server exited with {process.returncode}")
            time.sleep(0.02)
    process.kill()
    raise SystemExit("the server did not start within 120 s")


def load(url: str, sentences: list[str], clients: int, seconds: float, lines: int = 1) -> dict:
    """Each client sends a request, waits for its answer, and sends the next; a request the server
    refuses as busy (503) is counted apart, and its client waits the Retry-After the server asks."""
    latencies: list[float] = []
    errors: list[str] = []
    refused = [0]  # requests answered 503
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def client(offset: int) -> None:
        i = offset
        while time.monotonic() < stop_at:
            body = json.dumps({"text": [sentences[(i + k) % len(sentences)] for k in range(lines)]}).encode()
            request = urllib.request.Request(url + "/translate", data=body,
                                             headers={"Content-Type": "application/json"})
            start = time.perf_counter()
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    ok = response.status == 200 and len(json.loads(response.read())["translations"]) == lines
                    problem = None if ok else f"status {response.status}"
            except urllib.error.HTTPError as e:
                if e.code == 503:
                    with lock:
                        refused[0] += 1
                    time.sleep(float(e.headers.get("Retry-After", 1)))
                    i += clients * lines
                    continue
                problem = f"status {e.code}"
            except (OSError, ValueError) as e:
                problem = type(e).__name__
            with lock:
                (errors.append(problem) if problem else latencies.append(time.perf_counter() - start))
            i += clients * lines

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    latencies.sort()

    def percentile(q: float) -> float:
        return round(1000 * latencies[min(int(q * len(latencies)), len(latencies) - 1)], 1) if latencies else None

    return {"clients": clients, "seconds": round(elapsed, 1), "requests": len(latencies),
            "requests_per_s": round(len(latencies) / elapsed, 1),
            "sentences_per_s": round(lines * len(latencies) / elapsed, 1),
            "latency_ms_p50": percentile(0.5), "latency_ms_p99": percentile(0.99), "latency_ms_max": percentile(1.0),
            "refused_busy": refused[0], "errors": len(errors)}


def offline(model: str, engine: str, sentences: list[str], threads: int) -> dict:
    """The model's throughput on the same sentences translated as a file is (length-sorted token batches)."""
    import torch

    from nmt.decode.engines.engine import load_engine
    from nmt.decode.translate import translate_lines

    translator = load_engine([Path(model)], engine=engine, threads=threads)
    start = time.perf_counter()
    translate_lines(translator, sentences, translator.recipe.decode)
    seconds = time.perf_counter() - start
    return {"sentences": len(sentences), "threads": torch.get_num_threads() if engine == "torch" else threads,
            "seconds": round(seconds, 2), "sentences_per_s": round(len(sentences) / seconds, 1)}


def run_setting(args, sentences: list[str], clients: int, extra: list[str]) -> dict:
    """One load run against a fresh server started with `extra` options."""
    process, url, startup_seconds = start_server(args.checkpoint, ["--engine", args.engine, *extra])
    try:
        result = load(url, sentences, clients, args.seconds, args.lines) | {"startup_seconds": startup_seconds}
        health = json.loads(urllib.request.urlopen(url + "/health", timeout=10).read())
        served = health["served"]
        result["lines_per_model_call"] = round(served["lines"] / max(served["model_calls"], 1), 1)
        result["workers"] = health["workers"]
        result["worker_mode"] = health.get("worker_mode")
    finally:
        process.send_signal(signal.SIGTERM)
        result["server_exit_code"] = process.wait(timeout=60)
    return result


def run_round(args, sentences: list[str], settings: dict[str, tuple[int, list[str]]], number: int) -> dict:
    """Each setting (clients, server options) run once, in turn."""
    result = {}
    for name, (clients, extra) in settings.items():
        result[name] = run_setting(args, sentences, clients, extra)
        print(f"round {number} {name}", json.dumps(result[name]), flush=True)
    return result


def median_of(results: list[dict]) -> dict:
    """Each measured figure's median over the rounds; errors and exit codes: the worst round's."""
    out = dict(results[0])
    for key in MEASURED:
        values = [r[key] for r in results if r.get(key) is not None]
        if values:
            out[key] = round(statistics.median(values), 1)
    for key in ("errors", "server_exit_code"):
        if key in out:
            out[key] = max(r[key] for r in results)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--checkpoint", default="runs/demo/checkpoints/best.pt",
                        help="Checkpoint or export directory to serve.")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--lines", type=int, default=4, help="Sentences per request.")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--threads", type=int, default=2, help="For the offline throughput.")
    parser.add_argument("--engine", default="torch")
    parser.add_argument("--rounds", type=int, default=3, help="Times each setting runs, in turn with the others.")
    parser.add_argument("--test", default="data/multi30k/test_2016_flickr.en.gz")
    parser.add_argument("--overload", action="store_true",
                        help="Instead: --clients (e.g. 400) more than the server takes at once, with the default "
                             "queue limit and with none (bench/results/serve_overload_ENGINE.json).")
    args = parser.parse_args()
    if not Path(args.checkpoint).exists():
        raise SystemExit(f"{args.checkpoint}: not found (run `make demo` first, or pass -c)")
    sentences = [line for _, line in zip(range(500), read_lines(Path(args.test)))]

    if args.overload:
        overload(args, sentences)
        return
    settings = {
        "one_client_at_a_time": (1, []),
        f"{args.clients}_clients_batching_off": (args.clients, ["--batch-max-lines", "1", "--workers", "1"]),
        f"{args.clients}_clients_server_defaults": (args.clients, []),
    }
    loaded_name, off_name = f"{args.clients}_clients_server_defaults", f"{args.clients}_clients_batching_off"
    threads_name = f"{args.clients}_clients_worker_threads"
    if args.engine == "torch":  # the defaults' worker processes against threads sharing one process
        settings[threads_name] = (args.clients, ["--worker-mode", "threads"])
    rounds = []
    for number in range(1, args.rounds + 1):
        result = {"offline": offline(args.checkpoint, args.engine, sentences, args.threads)}
        print(f"round {number} offline", json.dumps(result["offline"]), flush=True)
        result |= run_round(args, sentences, settings, number)
        one, loaded = result["one_client_at_a_time"]["sentences_per_s"], result[loaded_name]["sentences_per_s"]
        result["loaded_over_one_client"] = round(loaded / one, 2) if one else None
        result["loaded_over_offline"] = round(loaded / result["offline"]["sentences_per_s"], 2)
        off = result[off_name]["sentences_per_s"]
        result["batching_speedup"] = round(loaded / off, 2) if off else None
        if threads_name in result:
            result["defaults_over_worker_threads"] = round(loaded / result[threads_name]["sentences_per_s"], 2)
        rounds.append(result)
    report = {"model": args.checkpoint, "engine": args.engine, "lines_per_request": args.lines,
              "request": f"{args.lines} sentences of test_2016_flickr, beam as the recipe",
              "rounds": len(rounds), "figures": "medians of the rounds (each round's under per_round)",
              "offline": median_of([r["offline"] for r in rounds]),
              "runs": {name: median_of([r[name] for r in rounds]) for name in settings}}
    for ratio in ("loaded_over_one_client", "loaded_over_offline", "batching_speedup", "defaults_over_worker_threads"):
        values = [r[ratio] for r in rounds if r.get(ratio) is not None]
        if values:
            report[ratio] = statistics.median(values)
    report["per_round"] = rounds
    write_json(RESULTS / f"serve_load_{args.engine}.json", report)
    print(json.dumps(report, indent=1))


def overload(args, sentences: list[str]) -> None:
    """More clients than the server takes at once: with its queue limit (refusing what would wait
    too long) and with none (every request accepted, each waiting longer the more clients come)."""
    settings = {f"{args.clients}_clients_server_defaults": (args.clients, []),
                f"{args.clients}_clients_no_queue_limit": (args.clients, ["--max-queued-lines", "0"])}
    rounds = [run_round(args, sentences, settings, number) for number in range(1, args.rounds + 1)]
    report = {"model": args.checkpoint, "engine": args.engine, "lines_per_request": args.lines,
              "lines_asked_at_once": args.clients * args.lines,
              "request": f"{args.lines} sentences of test_2016_flickr, beam as the recipe; a refused client "
                         "waits the server's Retry-After",
              "rounds": len(rounds), "figures": "medians of the rounds (each round's under per_round)",
              "runs": {name: median_of([r[name] for r in rounds]) for name in settings}, "per_round": rounds}
    write_json(RESULTS / f"serve_overload_{args.engine}.json", report)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
