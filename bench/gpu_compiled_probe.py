"""Which change reaches the compiled bf16 update's speed: the base model's compiled bf16 TrainStep
timed as nmt runs it, then with cuDNN's attention allowed inside the update, then with floats
traced as symbols (torch's default) instead of constants, then captured in CUDA graphs
(mode='reduce-overhead', each micro-batch a new graph step, gradients kept allocated so that the
backward adds into them; without that, on an H200 with PyTorch 2.11, the backward failed:
"Gradient addition node due to multiple use of tensor"). Two more variants ask why the speed
part's compiled update (0.074 s on an H200) was faster than this probe's (0.122 s on the same
machine): `after_eager` runs the eager bf16 update first in the process, as the speed part does;
`cold_cache` compiles with empty inductor and triton caches, as the speed part's first compile
did. Each variant runs in a process of its own (no compiled graph shared between them), on the
same synthetic batches; the JSON is rewritten as each variant ends, so a run cut short still
returns what it measured.

    python -m bench.gpu_compiled_probe --out $OUT/compiled_probe.json [--steps 10] [--warmup 3]
    python -m bench.gpu_compiled_probe --out $OUT/compiled_probe.json --variants as_run,after_eager,cold_cache

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
    "as_run": "cuDNN attention off inside the update, floats traced as constants (nmt's settings)",
    "cudnn_attention": "cuDNN's attention allowed inside the update",
    "float_symbols": "floats traced as symbols (torch.compile's default)",
    "cuda_graphs": "nmt's settings, compiled with mode='reduce-overhead' (CUDA graphs, one per batch shape)",
    "after_eager": "nmt's settings, timed after the eager bf16 update in the same process (as the speed part runs)",
    "cold_cache": "nmt's settings, compiled with empty inductor and triton caches",
}


def run_variant(variant: str, steps: int, warmup: int) -> dict:
    """Time one variant in this process."""
    import nmt.train.step as step_module
    from bench import gpu as bench_gpu

    on_gpu = torch.cuda.is_available()
    if variant == "cudnn_attention":
        step_module.attention_kernels = lambda device: contextlib.nullcontext()
    elif variant == "float_symbols":
        step_module.compile_settings = contextlib.nullcontext
    elif variant == "cuda_graphs":  # on a CPU only the gradients kept allocated (aot_eager below)
        def graphed(forward):
            compiled = torch.compile(forward, dynamic=True, mode="reduce-overhead")

            def call(*args, **kwargs):  # each micro-batch a new graph step: its outputs not overwritten
                torch.compiler.cudagraph_mark_step_begin()
                return compiled(*args, **kwargs)
            return call

        def zero_grad_in_place(optimizer, set_to_none: bool = True) -> None:
            """Gradients kept allocated and zeroed: the first micro-batch's backward then adds into
            them instead of keeping its output, which the next graph replay overwrites (the
            "Gradient addition node" failure of the third H200 run)."""
            for group in optimizer.param_groups:
                for parameter in group["params"]:
                    if parameter.grad is None:
                        parameter.grad = torch.zeros_like(parameter)
                    else:
                        parameter.grad.zero_()
        step_module.compile_model = graphed
        torch.optim.Optimizer.zero_grad = zero_grad_in_place
    if not on_gpu:
        step_module.compile_model = lambda forward: torch.compile(forward, dynamic=True, backend="aot_eager")
    device = torch.device("cuda" if on_gpu else "cpu")
    shape = "base" if on_gpu else "tiny"
    spec = bench_gpu.shape(shape)
    needed = (steps + warmup) * spec["train"].update_freq * spec["train"].max_tokens
    with tempfile.TemporaryDirectory() as scratch:
        data = bench_gpu.synthetic_shards(Path(scratch), spec["vocab"], max(2 * needed // 27, 1000))
        if variant == "after_eager":
            bench_gpu.bench_one(shape, "bf16", False, False, device, steps, warmup, data)
            if on_gpu:
                torch.cuda.empty_cache()
        run = bench_gpu.bench_one(shape, "bf16", True, False, device, steps, warmup, data)
    return {"variant": variant, "what": VARIANTS[variant]} | run


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--variant", help=argparse.SUPPRESS)  # a child process: time this one, print its JSON
    args = parser.parse_args(argv)
    if args.variant:
        print(json.dumps(run_variant(args.variant, args.steps, args.warmup)))
        return {}
    result = {"device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
              "torch": torch.__version__, "steps": args.steps, "warmup": args.warmup, "runs": []}
    for variant in args.variants.split(","):
        start = time.perf_counter()
        env = dict(os.environ)
        caches = tempfile.TemporaryDirectory() if variant == "cold_cache" else contextlib.nullcontext()
        with caches as empty:
            if empty:
                env |= {"TORCHINDUCTOR_CACHE_DIR": f"{empty}/inductor", "TRITON_CACHE_DIR": f"{empty}/triton"}
            child = subprocess.run([sys.executable, "-m", "bench.gpu_compiled_probe", "--out", str(args.out),
                                    "--steps", str(args.steps), "--warmup", str(args.warmup), "--variant", variant],
                                   capture_output=True, text=True, env=env)
        lines = child.stdout.strip().splitlines()
        run = json.loads(lines[-1]) if child.returncode == 0 and lines else {
            "variant": variant, "error": child.stderr.strip().splitlines()[-6:] or ["no output"]}
        run["process_seconds"] = round(time.perf_counter() - start, 1)
        result["runs"].append(run)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        print(variant, run.get("seconds_per_update", run.get("error")), f"{run['process_seconds']} s", flush=True)
    return result


if __name__ == "__main__":
    main()
