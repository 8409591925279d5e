"""Which change reaches the compiled bf16 update's speed: the base model's compiled bf16 TrainStep
timed as nmt runs it, then with cuDNN's attention allowed inside the update, then with floats
traced as symbols (torch's default) instead of constants, then with CUDA graphs
(train.cuda_graphs; before it existed, a variant of this probe failed in the backward on an H200
with PyTorch 2.11: "Gradient addition node due to multiple use of tensor"), then with inductor's
C++ wrapper, with Triton's own launcher in place of inductor's static CUDA launcher, and with
inductor's combo kernels: three ways the host might spend less per kernel launched, or launch
fewer (the base update's host time, 48-70 ms for 984 kernels on an H200, exceeds its 42 ms of
kernels). Three ask for faster kernels instead: inductor's coordinate descent tuning of the Triton
kernels' block sizes (the fused reductions, the layer-norm backward's among them, took 12.6 of
those 42 ms), its autotuning of the matmuls (15.3 ms), and the output loss's log-sum-exp in two
passes instead of one online pass (2.0 ms, five times what reading its logits takes). Two more
variants ask why the speed part's compiled update (0.074 s on an H200) was faster than this
probe's (0.122 s on the same machine): `after_eager` runs the eager bf16 update first in the
process, as the speed part did; `cold_cache` compiles with empty inductor and triton caches, as
the speed part's first compile did. Each variant runs in a process of its own (no compiled graph
shared between them), on the same synthetic batches; the JSON is rewritten as each variant ends,
so a run cut short still returns what it measured.

    bash bench/gpu_day/run.sh compiled_probe [--steps 10] [--warmup 3]     (every variant: $OUT/compiled_probe.json)
    bash bench/gpu_day/run.sh compiled_probe --variants as_run,cold_cache,cpp_wrapper

Without a GPU: the tiny shape on the CPU, compiled with the aot_eager backend (a smoke run).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

VARIANTS = {
    "as_run": "nmt's settings (cuDNN attention off inside the update, floats traced as constants, one pass)",
    "cudnn_attention": "cuDNN's attention allowed inside the update",
    "float_symbols": "floats traced as symbols (torch.compile's default)",
    "cuda_graphs": "train.cuda_graphs: the compiled step replayed from CUDA graphs over shape buckets",
    "cpp_wrapper": "inductor's C++ wrapper (torch._inductor.config.cpp_wrapper): kernels launched from C++",
    "static_launcher_off": "Triton's own launcher for inductor's kernels instead of inductor's static CUDA launcher",
    "combo_kernels": "inductor's combo kernels (torch._inductor.config.combo_kernels): independent small kernels "
                     "launched as one",
    "coordinate_descent": "inductor's coordinate descent tuning of each Triton kernel's block sizes "
                          "(torch._inductor.config.coordinate_descent_tuning): for the fused layer-norm "
                          "backward and the other reductions, 12.6 of the fifth run's 42 ms of kernels",
    "max_autotune": "inductor's autotuning of each matmul among cuBLAS and its Triton templates "
                    "(torch._inductor.config.max_autotune, without CUDA graphs): 15.3 ms of kernels",
    "online_softmax_off": "the output loss's log-sum-exp over the vocabulary in two passes (max, then sums) "
                          "instead of inductor's one online pass (torch._inductor.config.online_softmax): "
                          "that pass took 2.0 ms for 1.85 GB of bf16 logits, 0.4 ms at the H200's bandwidth",
    "after_eager": "nmt's settings, timed after the eager bf16 update in the same process (as the speed part ran)",
    "cold_cache": "nmt's settings, compiled with empty inductor and triton caches",
}
INDUCTOR_SETTINGS = {"cpp_wrapper": ("cpp_wrapper", True), "static_launcher_off": ("use_static_cuda_launcher", False),
                     "combo_kernels": ("combo_kernels", True), "coordinate_descent": ("coordinate_descent_tuning", True),
                     "max_autotune": ("max_autotune", True), "online_softmax_off": ("online_softmax", False)}
GPU_ONLY = {"cuda_graphs", *INDUCTOR_SETTINGS}


def run_variant(variant: str, steps: int, warmup: int) -> dict:
    """Time one variant in this process: the base recipe's bf16 update, compiled."""
    import nmt.train.step as step_module
    from bench import gpu as bench_gpu

    on_gpu = torch.cuda.is_available()
    if variant in GPU_ONLY and not on_gpu:
        return {"variant": variant, "what": VARIANTS[variant], "not_run": "needs CUDA"}
    train = {"compile": True, "precision": "bf16"}
    if variant == "cudnn_attention":
        step_module.attention_kernels = lambda device: contextlib.nullcontext()
    elif variant == "float_symbols":
        step_module.compile_settings = contextlib.nullcontext
    elif variant == "cuda_graphs":
        train["cuda_graphs"] = True
    elif variant in INDUCTOR_SETTINGS:
        from torch._inductor import config as inductor_config

        setting, value = INDUCTOR_SETTINGS[variant]
        setattr(inductor_config, setting, value)
    if not on_gpu:
        step_module.compile_model = lambda forward, **kwargs: torch.compile(forward, dynamic=True, backend="aot_eager")
    device = torch.device("cuda" if on_gpu else "cpu")
    shape = "base" if on_gpu else "tiny"
    spec_shape = bench_gpu.shape(shape)
    with tempfile.TemporaryDirectory() as scratch:
        data = bench_gpu.shards_for(spec_shape, Path(scratch), 2 * (steps + warmup + 3))
        if variant == "after_eager":
            bench_gpu.bench_one({"shape": shape, "train": {"compile": False, "precision": "bf16"}}, device, data,
                                steps, warmup)
            if on_gpu:
                torch.cuda.empty_cache()
        [run] = bench_gpu.bench_one({"shape": shape, "train": train}, device, data, steps, warmup)
    return {"variant": variant, "what": VARIANTS[variant]} | run


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--variant", help=argparse.SUPPRESS)  # a child process: time this one, print its JSON
    args = parser.parse_args(argv)
    variants = args.variants.split(",")
    if unknown := [variant for variant in variants if variant not in VARIANTS]:
        raise SystemExit(f"--variants: unknown {', '.join(unknown)} (known: {', '.join(VARIANTS)})")
    if args.variant:
        print(json.dumps(run_variant(args.variant, args.steps, args.warmup)))
        return {}
    from tools.results import provenance, write_json

    result = {"provenance": provenance(), "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
              "torch": torch.__version__, "steps": args.steps, "warmup": args.warmup, "runs": []}
    for variant in variants:
        start = time.perf_counter()
        env = dict(os.environ)
        caches = tempfile.TemporaryDirectory() if variant == "cold_cache" else contextlib.nullcontext()
        with caches as empty:
            if empty:
                env |= {"TORCHINDUCTOR_CACHE_DIR": f"{empty}/inductor", "TRITON_CACHE_DIR": f"{empty}/triton"}
            child = subprocess.run([sys.executable, "-m", "bench.gpu_day.compiled_probe", "--out", str(args.out),
                                    "--steps", str(args.steps), "--warmup", str(args.warmup), "--variant", variant],
                                   capture_output=True, text=True, env=env)
        lines = child.stdout.strip().splitlines()
        run = json.loads(lines[-1]) if child.returncode == 0 and lines else {
            "variant": variant, "error": child.stderr.strip().splitlines()[-6:] or ["no output"]}
        run["process_seconds"] = round(time.perf_counter() - start, 1)
        result["runs"].append(run)
        write_json(args.out, result)
        print(variant, run.get("seconds_per_update", run.get("error", run.get("not_run"))), f"{run['process_seconds']} s",
              flush=True)
    return result


if __name__ == "__main__":
    main()
