"""`make bench` (host overhead): what the host spends per training update when arithmetic costs
next to nothing, the share of a GPU update that no faster kernel removes.

    python -m bench.host_overhead [--steps 20] [--windows 3] [--threads 2]

The base model's depth and heads (6 + 6 layers, 8 heads) at width 64 (`bench.gpu.HOST`), its
recipe's 2 batches per update, timed with nmt's TrainStep as `nmt train` runs it on this machine
(eager on a CPU): the update in 2 passes (one per batch) and in 1 (merged), window by window in
turns. Reported per configuration: seconds per update (one timing per window), aten operator calls
per update from a short profile, and the host's time per operator call. On a GPU the same
operators are kernels launched one by one, so fewer calls per update is fewer launches; the
figure to compare between commits is the operator count and the time per call on one host.
Results: bench/results/host_overhead.json.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import torch

from bench import gpu as bench_gpu
from tools.results import provenance, write_json

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="updates per window")
    parser.add_argument("--windows", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS / "host_overhead.json")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device("cpu")
    spec_shape = bench_gpu.shape("host")
    report = {"provenance": provenance(), "shape": "host", "d_model": spec_shape["model"].d_model,
              "layers": [spec_shape["model"].encoder_layers, spec_shape["model"].decoder_layers],
              "steps_per_window": args.steps, "runs": []}
    with tempfile.TemporaryDirectory(prefix="nmt-host-overhead-") as scratch:
        data = bench_gpu.shards_for(spec_shape, Path(scratch), args.warmup + 2 * (args.windows * args.steps + 3))
        spec = {"shape": "host", "turns": [{"micro_batches": 2}, {"micro_batches": 1}]}
        for run in bench_gpu.bench_one(spec, device, data, args.steps, args.warmup, windows=args.windows):
            run["host_microseconds_per_operator"] = round(run["seconds_per_update"] / run["operators_per_update"] * 1e6, 2)
            report["runs"].append(run)
            print(json.dumps({k: run[k] for k in ("micro_batches", "timings", "operators_per_update",
                                                  "host_microseconds_per_operator")}), flush=True)
    two, one = report["runs"]
    report["one_pass_against_two"] = {"seconds": round(one["seconds_per_update"] / two["seconds_per_update"], 3),
                                      "operators": round(one["operators_per_update"] / two["operators_per_update"], 3)}
    write_json(args.out, report)
    return report


if __name__ == "__main__":
    main()
