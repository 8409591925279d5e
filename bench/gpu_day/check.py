"""The GPU check, in three parts that each fit one 10-minute command on a lent GPU machine
(bench/gpu_day/README.md; `bash bench/gpu_day/run.sh PART` runs one as that machine must).

    python -m bench.gpu_day.check --part correctness|speed|training|all [--out-dir DIR] [--tiny] [--minutes 2]
                              [--runs base_recipe,big_recipe,...]

Each part writes DIR/PART.json, rewritten (atomically) after every check, so that a command cut
off at its limit still returns what it measured, and DIR/PART.log (pytest's report, training
logs); the terminal gets one line per check. Parts, in order of value:

- correctness: preflight; cuda_tests (`pytest -m cuda`: no host sync in an update, fine-tuning and
  resuming across precisions on the device, translation equal to the CPU's); beam_device_vs_cpu
  (the tiny recipe trained on the device, its test set beam-searched there and on the CPU, fp32
  with TF32 off: the same tokens).
- speed: preflight; bench_gpu (bench/gpu.py's TrainStep timing: base bf16 eager and compiled,
  base fp32, big bf16 eager and compiled; tokens/s, peak memory, MFU against the datasheet's bf16
  dense peak and a measured bf16 matmul).
- training: preflight; bf16_vs_fp32 (a learnable task at the base shape from the same weights and
  batches: both precisions learn, and bf16's final loss is at most 1 % above fp32's and at most
  5 % below it); compiled_vs_eager; multi30k (the Multi30k recipe trained for --minutes in bf16,
  then its test BLEU, and the test set's translation time eager and with decode.compile).

Every part starts with `preflight`: device, driver, torch/triton versions, whether a C compiler and
Python.h exist and, in a part that compiles, whether torch.compile works on the device; where it
does not, compiled runs are not attempted and say why. Without a GPU (or with --tiny) every check runs on the CPU with
tiny shapes: what the test suite's rehearsal runs, so that this script cannot rot (compiling there
with aot_eager: see Context.compile_backend).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import math
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from bench import gpu as bench_gpu
from nmt.data.shards import ParallelShards
from nmt.model.compiler import compile_settings, compile_smoke_test
from nmt.train.compiling import compile_model
from tools.results import provenance, write_json

ROOT = Path(__file__).resolve().parents[2]
PARTS = {
    "correctness": ["preflight", "cuda_tests", "beam_device_vs_cpu"],
    "speed": ["preflight", "bench_gpu"],
    "training": ["preflight", "bf16_vs_fp32", "compiled_vs_eager", "multi30k"],
}
MFU_GOALS = {"base": 0.30, "big": 0.40}  # the recipes as nmt train runs them, of the datasheet bf16 peak


@dataclass
class Context:
    """What every check of a part shares: where it runs, its scratch space, its log."""
    device: torch.device
    scratch: Path
    log: object  # a text file
    minutes: float = 2.0
    runs: str | None = None  # the speed part's configurations by name (chosen_runs); None: all
    compiles: bool = True  # whether a check of this part runs torch.compile
    compile_works: bool = True
    compile_note: str = ""
    facts: dict = field(default_factory=dict)

    @property
    def on_gpu(self) -> bool:
        return self.device.type == "cuda"

    @property
    def compile_backend(self) -> str:
        """Inductor on a GPU, as training compiles. On the CPU (the suite's rehearsal) aot_eager: the
        same dynamo and AOT autograd traces, without inductor's C++ code generation, which costs
        tens of seconds there and is what a GPU run checks (with triton, as training uses it)."""
        return "inductor" if self.on_gpu else "aot_eager"

    def compile(self, module: torch.nn.Module) -> Callable:
        return compile_model(module, self.compile_backend)


class Report:
    """One part's JSON, rewritten atomically after every check, so a cut-off run keeps what it measured."""

    def __init__(self, path: Path, header: dict):
        self.path, self.data = path, header | {"checks": {}}
        self.write()

    def add(self, name: str, result: dict) -> None:
        self.data["checks"][name] = result
        self.write()

    def write(self) -> None:
        write_json(self.path, self.data)


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"


def timed(check: Callable[[], dict]) -> dict:
    """Run a check; its result gains `seconds`, and an exception becomes {"ok": false, "error": ...}."""
    start = time.perf_counter()
    try:
        result = check()
    except Exception as e:  # a check that crashes is a finding, not the end of the part
        result = {"ok": False, "error": first_line(e)}
    result["seconds"] = round(time.perf_counter() - start, 1)
    return result


# --- preflight -------------------------------------------------------------------------------------

def preflight(ctx: Context) -> dict:
    """Facts about the machine that decide what can run; records whether torch.compile works and
    turns compiled runs off (with the reason) where it does not."""
    def version(name: str) -> str | None:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None

    include = Path(sysconfig.get_paths()["include"])
    facts = {"python": sys.version.split()[0], "torch": torch.__version__, "torch_cuda": torch.version.cuda,
             "triton": version("triton"), "pydantic": version("pydantic"),
             "c_compiler": next((shutil.which(c) for c in ("cc", "gcc", "clang") if shutil.which(c)), None),
             "python_h": (include / "Python.h").is_file(),
             "tf32_at_start": torch.backends.cuda.matmul.allow_tf32}
    if ctx.on_gpu:
        properties = torch.cuda.get_device_properties(ctx.device)
        peak, model = bench_gpu.datasheet_bf16_tflops(properties.name)
        facts |= {"device_name": properties.name, "device_model": model, "datasheet_bf16_dense_tflops": peak,
                  "capability": f"{properties.major}.{properties.minor}",
                  "multiprocessors": properties.multi_processor_count,
                  "memory_gb": round(properties.total_memory / 2**30, 1), "driver": driver_version()}
    else:
        facts |= {"device_name": "cpu", "threads": torch.get_num_threads()}
    if ctx.compiles:  # the smoke test costs seconds of compiling: only where a later check compiles
        start = time.perf_counter()
        try:
            compile_smoke_test(ctx.device, ctx.compile_backend)
            facts["compile_works"] = True
        except Exception as e:
            ctx.compile_works, ctx.compile_note = False, f"torch.compile fails here, compiled runs skipped: {first_line(e)}"
            facts |= {"compile_works": False, "note": ctx.compile_note}
        facts |= {"compile_backend": ctx.compile_backend, "compile_seconds": round(time.perf_counter() - start, 1)}
    ctx.facts = facts
    return {"ok": True, **facts}


def driver_version() -> str | None:
    if not shutil.which("nvidia-smi"):
        return None
    run = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True, timeout=30)
    return run.stdout.strip().splitlines()[0] if run.returncode == 0 and run.stdout.strip() else None


# --- correctness -----------------------------------------------------------------------------------

def pytest_counts(output: str) -> dict[str, int]:
    """The counts of pytest's closing line ("3 passed, 5 skipped, 1 error in 2.0s")."""
    lines = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed|skipped|deselected|errors?)\b", line)]
    counts = {}
    for number, word in re.findall(r"(\d+) (passed|failed|skipped|deselected|errors?)\b", lines[-1] if lines else ""):
        counts["errors" if word.startswith("error") else word] = int(number)
    return counts


CUDA_SKIP_REASON = "needs a CUDA device"  # tests/conftest.py's reason for a CUDA test without CUDA


def skip_reasons(output: str) -> list[str]:
    """The reasons of pytest's `-rs` summary lines ("SKIPPED [8] tests/train/test_cuda.py:31: why")."""
    return [m.group(1) for m in re.finditer(r"^SKIPPED \[\d+\] \S+: (.*)$", output, re.MULTILINE)]


def cuda_tests_verdict(returncode: int, counts: dict[str, int], on_gpu: bool, reasons: list[str] = ()) -> bool:
    """On a GPU every selected test must pass (none skipped); on a CPU every one must have been
    collected and skipped for want of CUDA, and nothing skipped for another reason (a test module
    skipped at collection, where a package is missing, would count as a skipped test on the GPU).
    A collection error or no test at all fails either way."""
    if returncode != 0 or counts.get("failed") or counts.get("errors"):
        return False
    if on_gpu:
        return counts.get("passed", 0) > 0 and not counts.get("skipped")
    return (counts.get("skipped", 0) > 0 and not counts.get("passed")
            and all(CUDA_SKIP_REASON in reason for reason in reasons))


def cuda_test_modules(tests: Path) -> list[str]:
    """The test modules under `tests` that mark tests `cuda` (`pytest.mark.cuda`)."""
    return sorted(str(path) for path in tests.rglob("test_*.py")
                  if "mark.cuda" in path.read_text(encoding="utf-8"))


def cuda_tests(ctx: Context) -> dict:
    """`pytest -m cuda` over the test modules that hold CUDA tests, as collected on this machine
    (each must import here, where optional packages such as datasets are missing)."""
    run = subprocess.run([sys.executable, "-m", "pytest", "-m", "cuda", "-o", "addopts=", "-q", "-rs", "-p", "no:cacheprovider",
                          *cuda_test_modules(ROOT / "tests")], cwd=ROOT, capture_output=True, text=True, timeout=420)
    ctx.log.write(run.stdout + run.stderr)
    counts = pytest_counts(run.stdout)
    problems = [line for line in run.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))
                or line.startswith("SKIPPED") and CUDA_SKIP_REASON not in line]
    return {"ok": cuda_tests_verdict(run.returncode, counts, ctx.on_gpu, skip_reasons(run.stdout)),
            "returncode": run.returncode, "counts": counts, "problems": problems[:20]}


def same_beam_outputs(translator_a, translator_b, sources: list[str], decode) -> dict:
    """Beam search of `sources` with each translator: how many outputs have the same tokens."""
    from nmt.decode.translate import translate_lines

    a = translate_lines(translator_a, sources, decode)
    b = translate_lines(translator_b, sources, decode)
    same = sum(x[0].tokens == y[0].tokens for x, y in zip(a, b))
    return {"ok": same == len(sources) > 0, "same_outputs": same, "sentences": len(sources)}


def beam_device_vs_cpu(ctx: Context) -> dict:
    """The tiny recipe trained on the device; its test set beam-searched there and on the CPU in
    fp32 (TF32 off while decoding: decode.precision fp32 means fp32). Compiled decoding is the
    training part's to check (multi30k): here it would only add a cold compile."""
    from nmt.config import load_recipe
    from nmt.data.corpora import open_corpus
    from nmt.decode.engines.engine import load_engine

    steps = 300 if ctx.on_gpu else 20
    run = train_and_translate(ctx, ROOT / "recipes" / "tiny.yaml", ctx.scratch / "tiny",
                              [f"train.max_steps={steps}", "train.valid_bleu_sentences=0"], compiled=False)
    checkpoint = Path(run["checkpoint"])
    sources = list(open_corpus(run["test"], *run["languages"]).side("src"))
    decode = load_recipe(ROOT / "recipes" / "tiny.yaml").decode.model_copy(update={"precision": "fp32"})
    result = same_beam_outputs(load_engine([checkpoint], device=str(ctx.device)),
                               load_engine([checkpoint], device="cpu"), sources, decode)
    return result | {"tiny_training": run}


# --- speed -----------------------------------------------------------------------------------------

SPEED_STEPS = 20  # timed updates per window or process: 3 × 20 = 60 per configuration


def speed_runs(on_gpu: bool) -> list[dict]:
    """The configurations of the speed part in order of value: {"name", "spec": bench.gpu.bench_one's
    spec, "processes": fresh processes (else 3 windows in this process), "what": why it is there}.
    First the recipes exactly as `nmt train` runs them (the goal), each in fresh processes; then
    CUDA graphs, and what today's defaults are weighed against; last, the padding of batch widths
    to a multiple of 8 against exact widths, window by window on one model."""
    if on_gpu:
        return [
            {"name": "base_recipe", "spec": {"shape": "base", "settled_window": 10}, "processes": 3,
             "what": "the base recipe as nmt train runs it; then, in each process, once the rest of the machine "
                     "(inductor's compile workers included) has gone quiet, one more window (settled_timings)"},
            {"name": "big_recipe", "spec": {"shape": "big"}, "processes": 3,
             "what": "the big recipe as nmt train runs it"},
            {"name": "base_packed", "spec": {"shape": "base", "train": {"pack_width": 256}},
             "what": "compiled, pairs packed into rows of 256 (48 per batch, 96 per pass; FlexAttention), the recipe otherwise"},
            {"name": "base_cuda_graphs", "spec": {"shape": "base", "train": {"cuda_graphs": True}},
             "what": "compiled with CUDA graphs over shape buckets (every shape recorded before the timing)"},
            {"name": "base_two_passes", "spec": {"shape": "base", "train": {"micro_batches": 2}},
             "what": "compiled, the update's 2 batches in 2 passes (merged into one by default)"},
            {"name": "base_eager", "spec": {"shape": "base", "train": {"compile": False}}, "what": "eager, one pass"},
            # Asked for by name only (--runs): each costs a cold compile or minutes the default list has not.
            {"name": "base_autocast_weights", "spec": {"shape": "base", "master_weights": False}, "optional": True,
             "what": "as the recipe, but fp32 weights cast by autocast in each pass instead of bf16 weights with fp32 masters"},
            {"name": "base_fp32_residual", "spec": {"shape": "base", "fp32_residual": True}, "optional": True,
             "what": "as the recipe, but torch's LayerNorm in the layers: the fp32 residual stream CUDA autocast gave before"},
            {"name": "base_matmul_attention", "spec": {"shape": "base", "train": {"attention": "matmul"}}, "optional": True,
             "what": "as the recipe, but attention by matmuls and a softmax (train.attention: matmul) instead of the fused kernels"},
            {"name": "big_matmul_attention", "spec": {"shape": "big", "train": {"attention": "matmul"}}, "optional": True,
             "what": "as the big recipe, but attention by matmuls and a softmax (train.attention: matmul)"},
            {"name": "base_varlen_attention", "spec": {"shape": "base", "train": {"attention": "varlen"},
                                                       "turns": [{"length_multiple": 1}, {"length_multiple": 8}]},
             "optional": True,
             "what": "as the recipe, but the padded attentions by FlashAttention over variable-length segments "
                     "(train.attention: varlen) instead of the memory-efficient kernel with masks; in turns, "
                     "the exact batch widths varlen allows and the recipe's multiple of 8"},
            {"name": "big_varlen_attention", "spec": {"shape": "big", "train": {"attention": "varlen"}}, "optional": True,
             "what": "as the big recipe, but the padded attentions by FlashAttention's segments (train.attention: varlen)"},
            {"name": "base_padding", "spec": {"shape": "base", "train": {"compile": False, "micro_batches": 2},
                                              "turns": [{"length_multiple": 8}, {"length_multiple": 1}]}, "optional": True,
             "what": "eager in 2 passes (the default before), widths padded to a multiple of 8 and exact, in turns"},
            {"name": "big_packed", "spec": {"shape": "big", "train": {"pack_width": 256}}, "optional": True,
             "what": "compiled, pairs packed into rows of 256 (24 per batch, 96 per pass; FlexAttention), the recipe otherwise"},
            {"name": "base_packed_cuda_graphs", "spec": {"shape": "base", "train": {"pack_width": 256, "cuda_graphs": True}},
             "optional": True, "what": "packed rows under CUDA graphs: every pass one shape, compiled for it alone (not dynamic)"},
            {"name": "base_packed_eager", "spec": {"shape": "base", "train": {"pack_width": 256, "compile": False}},
             "optional": True, "what": "eager, pairs packed into rows of 256 (48 per batch, 96 per pass; dense masks)"},
            # Fine-tuning a large imported model on one GPU (issue: large pretrained models), eager:
            # a cold compile of 48 layers would take the lease. Peak memory beside nmt's estimate.
            {"name": "nllb3b_lora", "spec": {"shape": "nllb_3b", "train": {"compile": False, "lora_rank": 16}},
             "optional": True, "what": "NLLB-200 3.3B's shape, random weights, LoRA rank 16 on the attention"},
            {"name": "nllb3b_full_checkpointed", "spec": {"shape": "nllb_3b",
                                                          "train": {"compile": False, "checkpoint_activations": True}},
             "optional": True, "what": "NLLB-200 3.3B's shape, every weight trained, activations recomputed"},
        ]
    # On a CPU the compiled step is left to the suite's own test of it (a cold CPU compile of the
    # training step costs more than the rest of this part).
    return [
        {"name": "tiny_recipe", "spec": {"shape": "tiny", "settled_window": 0.5}, "processes": 2,
         "what": "the tiny shape's settings as nmt train runs them, then a window once the machine is quiet"},
        {"name": "tiny_padding", "spec": {"shape": "tiny", "train": {"precision": "bf16"},
                                          "turns": [{"length_multiple": 8}, {"length_multiple": 1}]},
         "what": "bf16, widths padded to a multiple of 8 and exact, in turns"},
    ]


def chosen_runs(on_gpu: bool, names: str | None) -> list[dict]:
    """speed_runs but the optional ones, or those named (comma-separated, in the order given): a
    lease short of time measures what matters most to it, one with time to spare the rest."""
    runs = speed_runs(on_gpu)
    if not names:
        return [run for run in runs if not run.get("optional")]
    by_name = {run["name"]: run for run in runs}
    if unknown := [name for name in names.split(",") if name not in by_name]:
        raise SystemExit(f"--runs: unknown {', '.join(unknown)} (known: {', '.join(by_name)})")
    return [by_name[name] for name in names.split(",")]


def bench_speed(ctx: Context, report: Report) -> dict:
    """bench/gpu.py's timing of TrainStep per configuration, each added to the report as it ends,
    with MFU against the datasheet's bf16 dense peak and against a measured large bf16 matmul
    (on a CPU: against the measured fp32 matmul ceiling); the recipes' MFU beside the goals."""
    # A CPU rehearses the paths, not the statistics: 2 windows (or processes) of 2 updates.
    steps, warmup, windows = (SPEED_STEPS, 5, 3) if ctx.on_gpu else (2, 1, 2)
    if ctx.on_gpu:
        peak, model = bench_gpu.datasheet_bf16_tflops(torch.cuda.get_device_name(ctx.device))
        peaks = {"device_model": model, "datasheet_bf16_dense_tflops": peak,
                 "measured_bf16_matmul_tflops": round(bench_gpu.bf16_matmul_tflops(ctx.device), 1)}
        against = {"datasheet": peak, "measured": peaks["measured_bf16_matmul_tflops"]}
    else:
        from bench.run import matmul_ceiling

        peaks = {"measured_fp32_matmul_tflops": bench_gpu.significant(matmul_ceiling(size=1024) / 1000)}
        against = {"measured_fp32_matmul": peaks["measured_fp32_matmul_tflops"]}
    result: dict = {"ok": False, "peaks": peaks, "runs": [], "not_run": []}
    data: dict[str, Path] = {}
    for run_spec in chosen_runs(ctx.on_gpu, ctx.runs):
        spec, processes = run_spec["spec"], run_spec.get("processes", 0)
        compiles = spec.get("train", {}).get("compile", "auto") is not False and ctx.on_gpu
        if compiles and not ctx.compile_works:
            result["not_run"].append({"spec": spec, "why": ctx.compile_note})
            continue
        spec_shape = bench_gpu.shape(spec["shape"])
        if spec["shape"] not in data:
            data[spec["shape"]] = ctx.scratch / f"bench_{spec['shape']}"
            bench_gpu.shards_for(spec_shape, data[spec["shape"]], warmup + 2 * (windows * steps + 3))
        shards = data[spec["shape"]]
        if processes:
            runs = [timed(lambda: bench_gpu.in_fresh_processes(spec, processes, shards, ctx.device, steps, warmup))]
        else:  # one record per length multiple, or the error
            measured = timed(lambda: {"records": bench_gpu.bench_one(spec, ctx.device, ParallelShards(shards, "train"),
                                                                     steps, warmup, windows)})
            runs = [r | {"seconds": measured["seconds"]} for r in measured.get("records", [])] or [measured | {"spec": spec}]
        for run in runs:
            result["runs"].append(bench_gpu.with_mfu(run | {"name": run_spec["name"], "what": run_spec["what"]}, against))
        if ctx.on_gpu:
            torch.cuda.empty_cache()
        report.add("bench_gpu", result)  # each configuration as soon as it is measured
    runs = result["runs"]
    result["ok"] = bool(runs) and all(r.get("target_tokens_per_s", 0) > 0 for r in runs) and not result["not_run"]
    result["goals"] = {name: {"mfu_vs_datasheet": r.get("mfu_vs_datasheet"), "goal": goal,
                              "met": r.get("mfu_vs_datasheet", 0) >= goal}
                       for name, goal in MFU_GOALS.items() for r in runs
                       if r.get("shape") == name and r.get("recipe_defaults")}
    return result


# --- training --------------------------------------------------------------------------------------

def precision_task(on_gpu: bool) -> dict:
    """The learnable task of bf16_vs_fp32 (bench.gpu.learnable_shards): the base model's shape (the
    tiny one on a CPU) with a short warm-up; `learned_below`: the final loss a working run gets under."""
    if on_gpu:
        spec = bench_gpu.shape("base")
        train = spec["train"].model_copy(update={"max_tokens": 4096, "update_freq": 1, "warmup_steps": 100,
                                                 "lr": 5e-4, "tf32": False, "compile": False})
        return {"model": spec["model"], "train": train, "vocab": 100, "updates": 600, "max_length": 20,
                "pairs": 20_000, "learned_below": 0.5 * math.log(100)}
    spec = bench_gpu.shape("tiny")
    train = spec["train"].model_copy(update={"max_tokens": 256, "update_freq": 1, "warmup_steps": 20, "lr": 3e-3})
    return {"model": spec["model"], "train": train, "vocab": 20, "updates": 40, "max_length": 12,
            "pairs": 4_000, "learned_below": math.log(20)}


def losses_over_updates(task: dict, precision: str, device: torch.device, data, seed: int = 1,
                        train_changes: dict | None = None) -> list[float]:
    """Per-update mean loss of the task's updates in `precision`, from seed-`seed` weights, on `data`."""
    from nmt.data.batching import epoch_batches
    from nmt.model.transformer import Transformer
    from nmt.train.step import TrainStep

    cfg = task["train"].model_copy(update={"precision": precision, **(train_changes or {})})
    torch.manual_seed(seed)
    model = Transformer(task["model"], task["vocab"], task["vocab"]).to(device)
    step = TrainStep(model, cfg, device)
    batches, epoch = [], 0
    while len(batches) < task["updates"] * cfg.update_freq:
        batches += epoch_batches(data, cfg.max_tokens, seed, epoch)
        epoch += 1
    freq = cfg.update_freq
    results = [step(data, batches[i * freq:(i + 1) * freq]) for i in range(task["updates"])]
    return [float(loss) / tokens for loss, tokens in results]  # read once, at the end


def learned_alike(reference: list[float], other: list[float], learned_below: float, worse_by: float = 0.01,
                  better_by: float = 0.05) -> dict:
    """Both runs learned (mean loss of the last updates under `learned_below`) and the other run's
    final loss is at most `worse_by` above the reference's and at most `better_by` below it,
    relative. Lower is allowed more room: on three H200s bf16 ended 0.5-2.1 % below fp32, never
    above; a defect that changes the loss itself (label smoothing dropped, say) moves it further."""
    window = max(1, min(50, len(reference) // 6))
    ref_end, other_end = sum(reference[-window:]) / window, sum(other[-window:]) / window
    signed = (other_end - ref_end) / ref_end
    learned = ref_end < learned_below and other_end < learned_below
    return {"ok": learned and -better_by <= signed <= worse_by, "learned": learned, "learned_below": round(learned_below, 4),
            "first_loss": round(reference[0], 4), "last_updates_averaged": window, "reference_loss": round(ref_end, 4),
            "other_loss": round(other_end, 4), "relative_difference": round(abs(signed), 5),
            "signed_difference": round(signed, 5), "tolerance": {"above": worse_by, "below": better_by}}


def bf16_vs_fp32(ctx: Context) -> dict:
    task = precision_task(ctx.on_gpu)
    data = bench_gpu.learnable_shards(ctx.scratch / "learnable", task["vocab"], task["pairs"], max_length=task["max_length"])
    fp32 = losses_over_updates(task, "fp32", ctx.device, data)  # TF32 off on the GPU (the task's train.tf32)
    bf16 = losses_over_updates(task, "bf16", ctx.device, data)
    verdict = learned_alike(fp32, bf16, task["learned_below"])
    return verdict | {"updates": task["updates"], "vocab": task["vocab"], "d_model": task["model"].d_model,
                      "layers": task["model"].encoder_layers, "uniform_loss": round(math.log(task["vocab"]), 4),
                      "fp32_curve": [round(x, 3) for x in fp32[::max(1, len(fp32) // 20)]],
                      "bf16_curve": [round(x, 3) for x in bf16[::max(1, len(bf16) // 20)]]}


def compiled_and_eager_losses(model: torch.nn.Module, to_compile: torch.nn.Module, inputs: tuple,
                              compiler: Callable = compile_model) -> dict:
    """The loss of `inputs` under `model` eagerly and under compiler(`to_compile`) (the same module,
    unless a self-test breaks it on purpose), compiled as training compiles it."""
    compiled = compiler(to_compile)
    with torch.no_grad(), compile_settings():
        eager_loss, compiled_loss = float(model(*inputs)), float(compiled(*inputs))
    difference = abs(compiled_loss - eager_loss) / abs(eager_loss)
    return {"ok": difference <= 1e-3, "eager_loss": eager_loss, "compiled_loss": compiled_loss,
            "relative_difference": difference}


def compiled_vs_eager(ctx: Context) -> dict:
    from nmt.data.batching import collate, epoch_batches, length_multiple
    from nmt.model.precision import tf32
    from nmt.model.transformer import Transformer

    if not ctx.compile_works:
        return {"ok": False, "not_run": ctx.compile_note}
    shape_name = "base" if ctx.on_gpu else "tiny"
    spec = bench_gpu.shape(shape_name)
    data = bench_gpu.synthetic_shards(ctx.scratch / "compiled_vs_eager", spec["vocab"], 2000)
    torch.manual_seed(1)
    model = Transformer(spec["model"], spec["vocab"], spec["vocab"]).to(ctx.device).eval()
    indices = epoch_batches(data, spec["train"].max_tokens, 1, 0)[0]
    batch = collate(data, indices, length_multiple(ctx.device.type)).to(ctx.device)
    with tf32(ctx.device, False):
        result = compiled_and_eager_losses(model, model, (batch.src, batch.tgt_in, batch.out_positions,
                                                          batch.out_targets, 0.1), ctx.compile)
    return result | {"shape": shape_name, "compile_backend": ctx.compile_backend}


def in_repository(recipe) -> list[str]:
    """Overrides that make a recipe's relative data paths point into this repository, wherever the
    check runs from."""
    return [f"data.{split}={ROOT / path}" for split in ("train", "valid", "test")
            if (path := getattr(recipe.data, split)) and not path.startswith("hf:") and not Path(path).is_absolute()]


def train_and_translate(ctx: Context, recipe_path: Path, out: Path, overrides: list[str],
                        compiled: bool = True) -> dict:
    """A recipe's tokenizer, data and training into `out` on the device; its last checkpoint
    translates the test set there, and the BLEU is scored; with `compiled`, again under
    decode.compile (compiled_decoding)."""
    import sacrebleu

    from nmt.config import load_recipe
    from nmt.data.corpora import open_corpus
    from nmt.data.prepare import prepare
    from nmt.data.tokenizer import train_tokenizer
    from nmt.decode.engines.engine import load_engine
    from nmt.decode.translate import translate_lines
    from nmt.train.trainer import train

    recipe = load_recipe(recipe_path, [*in_repository(load_recipe(recipe_path)), f"output_dir={out}",
                                       f"train.device={ctx.device}", *overrides])
    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
    prepare(recipe.data, recipe.tokenizer, recipe.out)
    result = train(recipe, show_progress=False)
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    speeds = [m["tgt_tokens_per_s"] for m in metrics if m["kind"] == "train"]
    corpus = open_corpus(recipe.data.test, recipe.data.src_lang, recipe.data.tgt_lang)
    sources, references = list(corpus.side("src")), list(corpus.side("tgt"))
    translator = load_engine([result.checkpoint], device=str(ctx.device))

    def translated(decode) -> tuple[list[str], float]:
        start = time.perf_counter()
        found = [translator.tgt_tokenizer.decode(h[0].tokens) for h in translate_lines(translator, sources, decode)]
        return found, time.perf_counter() - start

    (hypotheses, seconds), (_, warm) = translated(recipe.decode), translated(recipe.decode)
    decoding = (compiled_decoding(ctx, translated, recipe.decode, hypotheses, references, [seconds, warm]) if compiled
                else {"eager_seconds": [round(seconds, 2), round(warm, 2)]})
    return {"recipe": recipe_path.name, "updates": result.step, "stopped_because": result.stopped_because,
            "mean_target_tokens_per_s": round(sum(speeds) / len(speeds)) if speeds else None,
            "test_bleu": round(sacrebleu.corpus_bleu(hypotheses, [references]).score, 2),
            "test_sentences": len(sources), "translate_seconds": round(seconds, 1), "recipe_overrides": overrides,
            "decoding": decoding,
            "checkpoint": str(result.checkpoint), "test": recipe.data.test,
            "languages": [recipe.data.src_lang, recipe.data.tgt_lang]}


def compiled_decoding(ctx: Context, translated: Callable, decode, eager: list[str], references: list[str],
                      eager_seconds: list[float]) -> dict:
    """The test set translated again with decode.compile (nmt.model.compiled_decoding: the decoder
    layers of each step compiled: inductor on a GPU, dynamo's trace alone on a CPU), twice: the
    first call compiles the graphs it meets. Beside the eager translations' two times: a GPU's
    decoding step launches each of its ~200 operators from Python, where compiled it launches a
    few fused kernels. Outputs in bf16 (decode.precision auto on CUDA) may differ where fused
    kernels round otherwise: how many are the same, and the BLEU."""
    import sacrebleu

    from nmt.model import compiled_decoding as steps

    eager_times = {"eager_seconds": [round(s, 2) for s in eager_seconds]}
    if not ctx.compile_works:
        return {"not_run": ctx.compile_note} | eager_times
    backend = "inductor" if ctx.on_gpu else "eager"  # on a CPU dynamo's trace alone: the suite's rehearsal
    chosen, steps.BACKEND = steps.BACKEND, backend
    try:
        compiled_cfg = decode.model_copy(update={"compile": True})
        (outputs, first), (_, second) = translated(compiled_cfg), translated(compiled_cfg)
    except Exception as e:  # the BLEU measured before stays in the report
        return {"backend": backend, "error": first_line(e)} | eager_times
    finally:
        steps.BACKEND = chosen
    return {"backend": backend, **eager_times, "compiled_seconds": [round(first, 2), round(second, 2)],
            "compiled_over_eager_warm": round(second / eager_seconds[1], 3),
            "same_outputs": sum(a == b for a, b in zip(outputs, eager)),
            "compiled_test_bleu": round(sacrebleu.corpus_bleu(outputs, [references]).score, 2)}


def multi30k(ctx: Context) -> dict:
    if ctx.on_gpu:
        overrides = ["train.precision=bf16", f"train.max_minutes={ctx.minutes}", "train.valid_every=1000000",
                     "train.keep_last=1"]
        return {"ok": True} | train_and_translate(ctx, ROOT / "recipes" / "multi30k_en_de.yaml",
                                                   ctx.scratch / "multi30k", overrides)
    # On the CPU the tiny recipe stands in (Multi30k's tokenizer alone takes longer than the suite may).
    return {"ok": True} | train_and_translate(ctx, ROOT / "recipes" / "tiny.yaml", ctx.scratch / "multi30k_stand_in",
                                               ["train.max_steps=10", "train.valid_bleu_sentences=0"])


# --- running a part --------------------------------------------------------------------------------

def summary(name: str, result: dict) -> str:
    """One terminal line per check."""
    keys = ("error", "not_run", "counts", "same_outputs", "goals", "relative_difference",
            "test_bleu", "updates", "compile_works", "device_name", "note")
    shown = {k: result[k] for k in keys if k in result}
    if name == "bench_gpu":
        shown["runs"] = [f"{r.get('shape')}/{r.get('precision')}{'/compiled' if r.get('compile') else ''}"
                         f"/{r.get('micro_batches')} pass/x{r.get('length_multiple')}"
                         f"{' (recipe)' if r.get('recipe_defaults') else ''}: {r.get('timings', r.get('error'))} s, "
                         f"{'settled ' + str(r['settled_timings']) + ' s, ' if r.get('settled_timings') else ''}"
                         f"MFU {r.get('mfu_vs_datasheet', r.get('mfu_vs_measured_fp32_matmul'))}"
                         for r in result.get("runs", [])]
    return f"{name}: {'ok' if result.get('ok') else 'FAILED'} ({result.get('seconds')} s) {json.dumps(shown)}"


def part_compiles(part: str, on_gpu: bool) -> bool:
    """Whether a check of `part` runs torch.compile (on a CPU the speed runs are eager ones)."""
    return part == "training" or (part == "speed" and on_gpu)


def run_part(part: str, ctx: Context, out_dir: Path) -> dict:
    report = Report(out_dir / f"{part}.json", {
        "part": part, "provenance": provenance(), "torch": torch.__version__, "device": str(ctx.device), "tiny": not ctx.on_gpu,
        "started": time.strftime("%Y-%m-%d %H:%M:%S")})
    checks = {
        "preflight": lambda: preflight(ctx),
        "cuda_tests": lambda: cuda_tests(ctx),
        "beam_device_vs_cpu": lambda: beam_device_vs_cpu(ctx),
        "bench_gpu": lambda: bench_speed(ctx, report),
        "bf16_vs_fp32": lambda: bf16_vs_fp32(ctx),
        "compiled_vs_eager": lambda: compiled_vs_eager(ctx),
        "multi30k": lambda: multi30k(ctx),
    }
    terminal = sys.stdout
    for name in PARTS[part]:
        with contextlib.redirect_stdout(ctx.log), contextlib.redirect_stderr(ctx.log):
            result = timed(checks[name])
        report.add(name, result)
        print(summary(name, result), file=terminal, flush=True)
        ctx.log.flush()
    report.data["ok"] = all(check.get("ok", False) for check in report.data["checks"].values())
    report.data["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    report.write()
    return report.data


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=[*PARTS, "all"], required=True)
    parser.add_argument("--out-dir", type=Path, default=ROOT / "runs" / "gpu_day")
    parser.add_argument("--tiny", action="store_true", help="tiny shapes on the CPU, even where there is a GPU")
    parser.add_argument("--minutes", type=float, default=2.0, help="Multi30k training minutes on the device")
    parser.add_argument("--runs", default=None, help="the speed part's configurations, comma-separated names "
                        "(default: all, in order of value; see speed_runs)")
    args = parser.parse_args(argv)
    chosen_runs(torch.cuda.is_available() and not args.tiny, args.runs)  # an unknown name stops here

    on_gpu = torch.cuda.is_available() and not args.tiny
    device = torch.device("cuda" if on_gpu else "cpu")
    if not on_gpu:
        torch.set_num_threads(min(2, torch.get_num_threads()))
    args.out_dir.mkdir(parents=True, exist_ok=True)
    results = {}
    for part in PARTS if args.part == "all" else [args.part]:
        with tempfile.TemporaryDirectory(prefix=f"nmt-gpu-{part}-") as scratch, \
                open(args.out_dir / f"{part}.log", "w", encoding="utf-8") as log:
            ctx = Context(device, Path(scratch), log, args.minutes, runs=args.runs, compiles=part_compiles(part, on_gpu))
            results[part] = run_part(part, ctx, args.out_dir)
    return results


if __name__ == "__main__":
    sys.exit(0 if all(r["ok"] for r in main().values()) else 1)
