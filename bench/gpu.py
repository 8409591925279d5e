"""`make bench-gpu`: training speed of the base and big Transformers on a GPU, with MFU.

    python -m bench.gpu [--shapes base,big] [--processes 3] [--precisions fp32,bf16] [--compile off,on]
                        [--ddp off,on] [--steps 60] [--windows 3]

Each configuration times `nmt.train.step.TrainStep`, the update `nmt train` runs: collation from
memory-mapped shards, pinned-memory copies, autocast, the update's batches in as many passes as
`train.micro_batches` gives, the GradScaler, clipping, fused Adam and the schedule. First, each
shape's recipe exactly as `nmt train` runs it on this device (`"recipe_defaults": true`: compiled
on CUDA, one pass per update), timed in `--processes` fresh processes; then the grid of
precisions, compile on/off and DDP, each timed in `--windows` windows of `--steps` updates in
one process. The data are synthetic shards: random token ids with a realistic length mix
(source lengths log-normal around 30 pieces, as WMT14 with a 37k BPE; target lengths a noisy
ratio of them), batched by nmt's own token batching.

Reported per configuration: `timings` (seconds per update, one per window or process) and their
summary; the host's time to issue an update and, on CUDA, the update's time on the device's
stream (median and p90 over every timed update: a device time well above the kernels' own time
means the device waited for the host); kernels per update and their summed time from a short
profile (aten operators per update on a CPU); target tokens/s, padding, peak memory, and MFU =
model FLOPs per update (nmt.model.flops: every matmul, the attention scores, the output layer, real
tokens only) / time / the device's bf16 dense peak, against both the datasheet peak and a
measured large bf16 matmul.

Without a GPU it runs the tiny shape on the CPU (so CI exercises every path); MFU there is
against the measured fp32 matmul ceiling. Results: bench/results/gpu.json (cpu_tiny.json on a CPU).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import socket
import subprocess
import sys
import tempfile
import time
import unittest.mock
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

from bench.host_activity import HostActivity, settle
from bench.triton_launchers import launcher_census
from nmt.config import ModelConfig, TrainConfig, load_recipe
from nmt.data.batching import round_up
from nmt.data.buckets import bucket_shape
from nmt.data.packing import packed_rows_per_batch
from nmt.data.shards import ParallelShards, ShardWriter
from nmt.devices import datasheet_bf16_tflops
from nmt.model import layer_norm
from nmt.model.flops import model_flops_per_update, trained_work_share
from nmt.model.transformer import Transformer
from nmt.train import step as step_module
from nmt.train.distributed import World
from nmt.train.freezing import frozen_as_configured
from nmt.train.memory_estimate import estimate_memory
from nmt.train.micro_batches import merge, passes_of
from nmt.train.step import TrainStep
from nmt.train.training_data import run_epoch_batches
from tools.results import provenance, write_json

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
VOCAB = 37_000  # the base recipe's joint BPE
# The CPU's stand-in for the recipes: it rehearses the paths, not the figures. Batches of 256
# tokens, since bf16 matmuls on a CPU without bf16 instructions cost 8 times fp32's.
TINY = {"model": ModelConfig(encoder_layers=2, decoder_layers=2, d_model=64, heads=4, d_ff=128),
        "train": TrainConfig(max_tokens=256, update_freq=2, lr_schedule="inverse_sqrt", lr=1e-3, warmup_steps=100),
        "vocab": 1000}
# The base model's depth and heads at a width where arithmetic costs next to nothing: what is left
# of an update is the host's work per operator (bench.host_overhead).
HOST = {"model": ModelConfig(encoder_layers=6, decoder_layers=6, d_model=64, heads=8, d_ff=256),
        "train": TrainConfig(max_tokens=512, update_freq=2, lr_schedule="inverse_sqrt", lr=1e-3, warmup_steps=100),
        "vocab": 1000}


# NLLB-200 3.3B's shape (24 + 24 pre-LN layers of 2048, 16 heads, feed-forward 8192, 256,206
# tokens, fairseq's sinusoid; about 3.3 billion parameters), random weights: what fine-tuning a
# large imported model holds and how fast it runs, in bf16 on one GPU.
NLLB_3B = {"model": ModelConfig(encoder_layers=24, decoder_layers=24, d_model=2048, heads=16, d_ff=8192, norm="pre",
                                positions="fairseq", decoder_start="eos", dropout=0.1),
           "train": TrainConfig(max_tokens=4096, update_freq=1, lr=1e-4, warmup_steps=100, precision="bf16"),
           "vocab": 256_206}
# The same layout at the tiny width: the CPU's stand-in for it.
NLLB_TINY = {"model": NLLB_3B["model"].model_copy(update={"encoder_layers": 2, "decoder_layers": 2, "d_model": 64,
                                                           "heads": 4, "d_ff": 256}),
             "train": TINY["train"], "vocab": 1000}


def shape(name: str) -> dict:
    """Model shape, train settings and vocabulary of a recipe (base, big), of NLLB-200 3.3B
    (nllb_3b; nllb_tiny its CPU stand-in), of the tiny CPU shape or of the full-depth, tiny-width
    `host` shape."""
    if name in ("tiny", "host", "nllb_3b", "nllb_tiny"):
        return {"tiny": TINY, "host": HOST, "nllb_3b": NLLB_3B, "nllb_tiny": NLLB_TINY}[name]
    recipe = load_recipe(ROOT / "recipes" / f"wmt14_en_de_{name}.yaml")
    return {"model": recipe.model, "train": recipe.train, "vocab": VOCAB}


def synthetic_shards(directory: Path, vocab: int, pairs: int, seed: int = 1, max_length: int = 250) -> ParallelShards:
    """A training split of `pairs` random sentence pairs with a news-like length mix, written as
    nmt's binarized shards (what `nmt prepare` writes) under `directory`."""
    rng = np.random.default_rng(seed)
    src_len = np.clip(rng.lognormal(np.log(27), 0.55, pairs), 1, max_length).astype(np.int64)
    tgt_len = np.clip(src_len * rng.lognormal(0.03, 0.15, pairs), 1, max_length).astype(np.int64)
    directory.mkdir(parents=True, exist_ok=True)
    for side, lengths in (("src", src_len), ("tgt", tgt_len)):
        writer = ShardWriter(directory / f"train.{side}", vocab)
        tokens = rng.integers(4, vocab, int(lengths.sum()))  # ids 0-3 are PAD, UNK, BOS, EOS
        ends = np.cumsum(lengths)
        writer.add([row.tolist() for row in np.split(tokens, ends[:-1])])
        writer.close()
    return ParallelShards(directory, "train")


def learnable_shards(directory: Path, vocab: int, pairs: int, seed: int = 1, max_length: int = 30) -> ParallelShards:
    """A task a model learns in a few hundred updates: random sources (lengths uniform in
    4..max_length); each target as long as its source, starting with the source's first token,
    each next token a fixed permutation of the one before. Cross-attention finds the first token
    and the length, the rest is a learned table, so the loss falls far below the uniform ln(vocab)
    and a precision or compiler defect shows in it (random targets keep every run at ln(vocab))."""
    rng = np.random.default_rng(seed)
    successor = rng.permutation(np.arange(4, vocab))  # ids 0-3 are PAD, UNK, BOS, EOS
    lengths = rng.integers(4, max_length + 1, pairs)
    sources, targets = [], []
    for n in lengths:
        source = rng.integers(4, vocab, n)
        target = [int(source[0])]
        for _ in range(n - 1):
            target.append(int(successor[target[-1] - 4]))
        sources.append(source.tolist())
        targets.append(target)
    directory.mkdir(parents=True, exist_ok=True)
    for side, rows in (("src", sources), ("tgt", targets)):
        writer = ShardWriter(directory / f"train.{side}", vocab)
        writer.add(rows)
        writer.close()
    return ParallelShards(directory, "train")


def significant(x: float, digits: int = 4) -> float:
    """Rounded to `digits` significant figures: CPU and GPU rates differ by 10^5."""
    return float(f"{x:.{digits}g}")


def bf16_matmul_tflops(device: torch.device, size: int = 8192, repeats: int = 20) -> float:
    """A large bf16 matmul on the device: what its tensor cores deliver in practice."""
    a = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    b = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    a @ b
    torch.cuda.synchronize(device)
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    torch.cuda.synchronize(device)
    return 2 * size ** 3 * repeats / (time.perf_counter() - start) / 1e12


@contextlib.contextmanager
def one_process_group(device: torch.device):
    """A world of one process, so DDP's bucketing and all-reduce hooks run as under torchrun."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()



def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class _OneProcessWorld(World):
    """A world of one process that still wraps the model in DDP (bucketing, all-reduce hooks)."""

    @property
    def distributed(self) -> bool:
        return True


def spread(values: list[float]) -> dict | None:
    """Median and 90th percentile of per-update times (seconds); None without values."""
    if not values:
        return None
    return {"median": significant(float(np.median(values))), "p90": significant(float(np.percentile(values, 90)))}


class PhaseClock:
    """Seconds per phase of a run, each phase timed from the end of the one before."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def ended(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = round(now - self._last, 2)
        self._last = now


def time_window(step: TrainStep, data: ParallelShards, updates: list[list[np.ndarray]], device: torch.device) -> dict:
    """`updates` timed back to back as training runs them: the wall time of the window (synchronized
    at both ends), each update's host time (until `step` returns: what the host spends issuing it,
    or waiting when the device's queue is full) and, on CUDA, each update's time on the device's
    stream between two events (kernels plus any gaps where the device waited for the host)."""
    cuda = device.type == "cuda"
    host, events, results = [], [], []
    _synchronize(device)
    start = time.perf_counter()
    for update in updates:
        if cuda:
            begin = torch.cuda.Event(enable_timing=True)
            begin.record()
        issued = time.perf_counter()
        results.append(step(data, update))  # (loss on the device, target tokens): read after the window
        host.append(time.perf_counter() - issued)
        if cuda:
            end = torch.cuda.Event(enable_timing=True)
            end.record()
            events.append((begin, end))
    _synchronize(device)
    return {"seconds": time.perf_counter() - start, "host": host,
            "device": [begin.elapsed_time(end) / 1000 for begin, end in events], "results": results}


def updates_before_timing(updates: list, warmup: int, needed: int, cuda_graphs: bool) -> list:
    """What runs before the timing: the first `warmup` updates; under CUDA graphs then every update
    the timing will meet (`updates[warmup:needed]`), twice. torch's CUDA graph trees run a shape's
    first pass eagerly (a warm-up) and record its graph at the second: only from the third does a
    pass replay, the steady state of a long run. (Run once before, 25 of the base shape's 60 timed
    updates each met their shape for the second time and recorded it inside the timing.)"""
    before = updates[:warmup]
    if cuda_graphs:
        before += 2 * updates[warmup:needed]
    return before


def slowest_updates(data: ParallelShards, updates: list[list[np.ndarray]], measured: list[dict], count: int = 5) -> list[dict]:
    """The `count` timed updates that took the device longest (the host where there is no device
    time), each with its batches' sentences and longest source and target: whether the slow ones
    are those of one shape (a CUDA graph recorded again, say) or of the longest batches."""
    host = [t for m in measured for t in m["host"]]
    device = [t for m in measured for t in m["device"]] or host
    slowest = sorted(range(len(updates)), key=lambda i: device[i], reverse=True)[:count]
    return [{"update": i, "device_seconds": round(device[i], 4), "host_seconds": round(host[i], 4),
             "batches": [[len(idx), int(data.src.lengths[idx].max()) + 1, int(data.tgt.lengths[idx].max()) + 1]
                         for idx in updates[i]]}
            for i in slowest]


@contextlib.contextmanager
def native_stderr_silenced():
    """The process's standard error (file descriptor 2) sent nowhere inside the block: the profiler's
    native library prints lines there that Python cannot redirect."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def profile_work(step: TrainStep, data: ParallelShards, updates: list[list[np.ndarray]], device: torch.device) -> dict:
    """What one update launches, from torch.profiler over `updates`: on CUDA the device's kernels
    per update (memory copies and sets included) and their summed time; on a CPU the aten operator
    calls per update (nested calls included), the work a GPU's host would launch one by one."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    cuda = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with native_stderr_silenced(), profile(activities=activities) as prof:
        for update in updates:
            step(data, update)
        _synchronize(device)
    n = len(updates)
    if not cuda:
        operators = [op for op in cpu_operators(prof) if op[0].startswith("aten::")]
        return {"profiled_updates": n, "operators_per_update": round(sum(count for _, count, _ in operators) / n),
                **time_by_kind(operators, n)}
    events = prof.key_averages()
    kernels = [(e.key, e.count, getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0))
               for e in events if e.device_type == DeviceType.CUDA]
    microseconds = sum(time for _, _, time in kernels)
    return {"profiled_updates": n, "kernels_per_update": round(sum(count for _, count, _ in kernels) / n),
            "kernel_seconds_per_update": significant(microseconds / 1e6 / n), **time_by_kind(kernels, n)}


def cpu_operators(prof) -> list[tuple[str, int, float]]:
    """(name, calls, self microseconds) of each CPU operator a profile recorded: what
    `prof.key_averages()` gives (tests/bench/test_bench_gpu.py compares them), from the profile's
    raw events, in a second where key_averages takes 10 to 20 for the 50,000 operators of one
    update on a CPU. On each thread, in order of start, a call is nested in the one on the stack
    that has not ended; its self time is its duration less that of the calls nested in it. As in
    key_averages, a call whose only nested call is of its own name counts once (aten::sum calls
    aten::sum), with the self time of both."""
    by_thread: dict[int, list[tuple[int, int, str]]] = {}
    for event in prof.profiler.kineto_results.events():
        if event.device_type() == torch.autograd.DeviceType.CPU and not event.is_hidden_event():
            by_thread.setdefault(event.start_thread_id(), []).append((event.start_ns(), -event.end_ns(), event.name()))
    calls: dict[str, int] = {}
    self_ns: dict[str, int] = {}

    def close(call: list) -> None:
        start, end, name, nested, children, child_name = call
        calls[name] = calls.get(name, 0) + (0 if children == 1 and child_name == name else 1)
        self_ns[name] = self_ns.get(name, 0) + (end - start) - nested

    for events in by_thread.values():
        stack: list[list] = []  # [start, end, name, nested nanoseconds, nested calls, the last one's name]
        for start, minus_end, name in sorted(events):
            while stack and stack[-1][1] <= start:
                close(stack.pop())
            if stack:  # nested in the call on top: its nested time, calls and last nested name
                parent = stack[-1]
                parent[3], parent[4], parent[5] = parent[3] - minus_end - start, parent[4] + 1, name
            stack.append([start, -minus_end, name, 0, 0, None])
        while stack:
            close(stack.pop())
    return [(name, count, self_ns[name] / 1e3) for name, count in calls.items()]


# What a kernel (or a CPU's aten operator) is, from its name; the first kind whose words it holds.
# Attention comes first: FlashAttention's and the memory-efficient kernels are cutlass kernels too.
KERNEL_KINDS = (
    ("attention", ("flash", "fmha", "attention", "attn")),
    ("matmul", ("gemm", "xmma", "cutlass", "nvjet", "cublas", "aten::mm", "aten::addmm", "aten::bmm")),
    ("optimizer", ("adam", "multi_tensor", "foreach")),
    ("fused pointwise (inductor)", ("triton_poi",)),
    ("fused reduction (inductor)", ("triton_red", "triton_per")),
    ("copy, cast, fill", ("memcpy", "memset", "copy", "fill", "aten::to", "aten::cat")),
    ("reduction, norm, softmax", ("reduce", "norm", "softmax", "logsumexp", "aten::sum", "aten::mean")),
    ("pointwise", ("elementwise", "vectorized", "aten::add", "aten::mul", "aten::div", "dropout")),
)


def kernel_kind(name: str) -> str:
    lowered = name.lower()
    return next((kind for kind, words in KERNEL_KINDS if any(word in lowered for word in words)), "other")


def time_by_kind(events: list[tuple[str, int, float]], updates: int, top: int = 10) -> dict:
    """Where an update's kernel time goes, from (name, calls, self microseconds) over `updates`
    profiled updates: milliseconds per update by kind (KERNEL_KINDS), and the `top` kernels by
    time with their calls per update (names cut to 120 characters)."""
    kinds: dict[str, float] = {}
    for name, _, micros in events:
        kinds[kernel_kind(name)] = kinds.get(kernel_kind(name), 0.0) + micros
    ranked = sorted(events, key=lambda event: -event[2])[:top]
    return {"milliseconds_by_kind": {kind: significant(micros / 1e3 / updates, 3)
                                     for kind, micros in sorted(kinds.items(), key=lambda item: -item[1])},
            "top_kernels": [{"name": name[:120], "milliseconds": significant(micros / 1e3 / updates, 3),
                             "calls": significant(calls / updates, 3)} for name, calls, micros in ranked]}


def padded_target_tokens(data: ParallelShards, updates: list[list[np.ndarray]], passes: int, multiple: int,
                         bucketed_max_tokens: int | None = None, packed_rows: tuple[int, int] | None = None) -> int:
    """Target positions the updates' passes run through, padding included (batches merged as
    TrainStep merges them; with `bucketed_max_tokens`, padded to their shape buckets; with
    `packed_rows` (rows, width), packed batches of that shape)."""
    if packed_rows:
        return sum(len(update) for update in updates) * packed_rows[0] * packed_rows[1]
    if bucketed_max_tokens:
        shapes = (bucket_shape(data, run, bucketed_max_tokens) for update in updates for run in passes_of(update, passes))
        return sum(rows * tgt_width for rows, _, tgt_width in shapes)
    return sum(len(idx) * round_up(int(data.tgt.lengths[idx].max()) + 1, multiple)
               for update in updates for idx in merge(update, passes))


def layer_norms_of(spec: dict) -> contextlib.AbstractContextManager:
    """Inside: torch's LayerNorm in the layers where `spec` asks for "fp32_residual" (under CUDA
    autocast its fp32 output keeps the residual stream fp32, as nmt trained before), else nmt's."""
    if not spec.get("fp32_residual"):
        return contextlib.nullcontext()
    return unittest.mock.patch.object(layer_norm.LayerNorm, "forward", torch.nn.LayerNorm.forward)


TURN_SETTINGS = ("length_multiple", "micro_batches")  # TrainStep's attributes a turn may set


def bench_one(spec: dict, device: torch.device, data: ParallelShards, steps: int, warmup: int,
              windows: int = 1, profiled: int | None = None, seed: int = 1) -> list[dict]:
    """Time TrainStep as `spec` sets it up: {"shape": base|big|tiny|host, "train": {setting: value}
    changed from the recipe (none: the recipe's own, as `nmt train` runs it), "ddp": bool,
    "master_weights": false (autocast's per-pass casts instead of bf16 weights, to compare),
    "fp32_residual": true (torch's LayerNorm in the layers, whose fp32 output under CUDA autocast
    keeps the residual stream fp32, as nmt trained before: to compare), "turns":
    [{"length_multiple": 8}, {"length_multiple": 1}] (settings of the step that take turns, window
    by window, on the same model; none: one turn as TrainStep sets itself up), "settled_window": N
    (after the timing, wait up to N s for the rest of the machine to go quiet, bench.host_activity,
    then time one more window of the step as set up: `settled`)}.

    `warmup` updates, then `windows` rounds of `steps` timed updates per turn, then `profiled`
    updates per turn under the profiler (3 on CUDA, 1 on a CPU, where the profile of one update
    costs seconds to read). One record per turn: its timings (seconds per update, one
    per window), host and device time per update, kernels (or operators) per update, tokens/s,
    padding, memory, what else the machine ran during the timing (`host_activity`) and how the
    kernels were launched (`triton_launchers`)."""
    spec_shape = shape(spec["shape"])
    changes = spec.get("train", {})
    cfg = spec_shape["train"].model_copy(update=changes)
    turns = spec.get("turns") or [{}]
    profiled = (3 if device.type == "cuda" else 1) if profiled is None else profiled
    if unknown := {key for turn in turns for key in turn} - set(TURN_SETTINGS):
        raise ValueError(f"turns may set {', '.join(TURN_SETTINGS)}, not {', '.join(sorted(unknown))}")
    freq = cfg.update_freq
    notes: list[str] = []
    phase = PhaseClock()  # where the run's time goes (a lease's device time: what to trim)
    torch.manual_seed(seed)
    with torch.device(device):  # drawn where it runs: a CPU takes 35 s to draw NLLB-3.3B's weights
        model = Transformer(spec_shape["model"], spec_shape["vocab"], spec_shape["vocab"]).to(device)
    model.checkpoint_layers = cfg.checkpoint_activations
    frozen_as_configured(model, cfg)
    batches = run_epoch_batches(data, cfg.model_copy(update={"seed": seed}), epoch=0)  # as nmt train cuts them
    updates = [batches[i * freq:(i + 1) * freq] for i in range(len(batches) // freq)]
    needed = warmup + len(turns) * (windows * steps + profiled) + (steps if spec.get("settled_window") else 0)
    if len(updates) < needed:
        raise ValueError(f"{len(batches)} batches are too few for {needed} updates")
    ddp = bool(spec.get("ddp"))
    with one_process_group(device) if ddp else contextlib.nullcontext(), layer_norms_of(spec):
        if spec.get("master_weights") is False:  # autocast's casts instead, for comparison
            with unittest.mock.patch.object(step_module, "uses_master_weights", lambda cfg, device: False):
                step = TrainStep(model, cfg, device, _OneProcessWorld() if ddp else World(), note=notes.append)
        else:
            step = TrainStep(model, cfg, device, _OneProcessWorld() if ddp else World(), note=notes.append)
        own = {key: getattr(step, key) for key in TURN_SETTINGS}
        cfg = step.train_cfg  # train.precision auto as the step resolved it for this device
        phase.ended("model_and_step")
        # nmt train's estimate at start, to set beside the measured peak
        estimate = estimate_memory(model, cfg, device, cfg.max_tokens * freq // step.micro_batches,
                                   step.master_weights is not None, compiled=step.compiled)
        phase.ended("memory_estimate")
        start = time.perf_counter()
        for update in updates_before_timing(updates, warmup, needed, step.cuda_graphs):
            step(data, update)
        _synchronize(device)
        warmup_seconds = time.perf_counter() - start
        phase.ended("warmup")
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        timed, work, cursor = [[] for _ in turns], [], warmup
        with HostActivity() as activity:
            for _ in range(windows):
                for i, turn in enumerate(turns):
                    for key, value in (own | turn).items():
                        setattr(step, key, value)
                    window = updates[cursor:cursor + steps]
                    cursor += steps
                    timed[i].append((window, time_window(step, data, window, device)))
        phase.ended("timing")
        launchers = launcher_census()  # how the timed kernels were launched (None without Triton)
        settled = None
        if spec.get("settled_window"):  # the same step again, once the rest of the machine is quiet
            for key, value in own.items():
                setattr(step, key, value)
            wait = settle(spec["settled_window"])
            window = updates[cursor:cursor + steps]
            cursor += steps
            with HostActivity() as quiet:
                again = time_window(step, data, window, device)
            settled = {"wait": wait, "seconds_per_update": significant(again["seconds"] / steps),
                       "host_issue_seconds": spread(again["host"]), "device_seconds": spread(again["device"]),
                       "host_activity": quiet.result()}
        phase.ended("settled_window")
        for turn in turns:
            for key, value in (own | turn).items():
                setattr(step, key, value)
            work.append(profile_work(step, data, updates[cursor:cursor + profiled], device) if profiled else {})
            cursor += profiled
        phase.ended("profile")
        step.forward = model  # let DDP go before its process group
    peak_memory = (torch.cuda.max_memory_allocated(device) if device.type == "cuda"
                   else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    # what the caching allocator held at most: the tensors' peak and the blocks it could not reuse
    peak_reserved = torch.cuda.max_memory_reserved(device) if device.type == "cuda" else None
    records = []
    for turn, rounds, turn_work in zip(turns, timed, work):
        settings = own | turn
        window_updates = [u for window, _ in rounds for u in window]
        measured = [m for _, m in rounds]
        seconds = sum(m["seconds"] for m in measured)
        results = [r for m in measured for r in m["results"]]
        tgt_tokens = sum(tokens for _, tokens in results)
        pairs = [(int(data.src.lengths[i]) + 1, int(data.tgt.lengths[i]) + 1)
                 for update in window_updates for idx in update for i in idx]
        flops = model_flops_per_update(spec_shape["model"], spec_shape["vocab"], pairs)
        work_share = 1.0
        if cfg.lora_rank or cfg.freeze:  # no gradient for a frozen weight: MFU counts the work done
            mean_source, mean_target = (round(sum(side) / len(pairs)) for side in zip(*pairs))
            work_share = trained_work_share(spec_shape["model"], spec_shape["vocab"],
                                            lambda counted: frozen_as_configured(counted, cfg), mean_source, mean_target)
            flops = round(flops * work_share)
        packed = (packed_rows_per_batch(cfg.max_tokens, cfg.pack_width), cfg.pack_width) if cfg.pack_width else None
        padded = padded_target_tokens(data, window_updates, settings["micro_batches"], settings["length_multiple"],
                                      cfg.max_tokens if step.shape_buckets else None, packed)
        n = len(window_updates)
        last_loss, last_tokens = results[-1]
        records.append({
            "shape": spec["shape"], "recipe_defaults": (not changes and not turn and not ddp
                                                   and not {"master_weights", "fp32_residual"} & set(spec)),
            "train_changes": changes, "turn": turn, "precision": cfg.precision, "compile": step.compiled,
            "micro_batches": settings["micro_batches"], "cuda_graphs": step.cuda_graphs,
            "master_weights": step.master_weights is not None, "fp32_residual": bool(spec.get("fp32_residual")),
            "ddp": ddp, "pack_width": cfg.pack_width,
            "length_multiple": settings["length_multiple"],
            "parameters": model.num_parameters(), "batches_per_update": freq, "max_tokens": cfg.max_tokens,
            "updates": n, "timings": [significant(m["seconds"] / steps) for m in measured],
            "seconds_per_update": significant(seconds / n),
            "host_issue_seconds": spread([t for m in measured for t in m["host"]]),
            "device_seconds": spread([t for m in measured for t in m["device"]]),
            **turn_work,
            "target_tokens_per_update": round(tgt_tokens / n), "target_tokens_per_s": round(tgt_tokens / seconds),
            "target_padding_fraction": round(1 - tgt_tokens / padded, 3),
            "model_gflop_per_update": significant(flops / n / 1e9), "model_tflop_per_s": significant(flops / seconds / 1e12),
            "trained_work_share": significant(work_share, 3),
            "warmup_seconds": round(warmup_seconds, 1), "settled": settled, "host_activity": activity.result(),
            "triton_launchers": launchers, "phase_seconds": phase.seconds,
            "final_loss": round(float(last_loss) / last_tokens, 4),
            "peak_memory_gb": round(peak_memory / 2**30, 2), "estimated_memory_gb": round(estimate.total / 2**30, 2),
            "peak_reserved_memory_gb": None if peak_reserved is None else round(peak_reserved / 2**30, 2),
            "memory_estimate": estimate.describe(),  # its parts, as nmt train says them (GB of 10^9 bytes)
            "slowest_updates": slowest_updates(data, window_updates, measured),
            "trainable_parameters": sum(p.numel() for p in step.parameters), "notes": notes,
        })
    return records


PER_PROCESS = ("timings", "seconds_per_update", "host_issue_seconds", "device_seconds", "kernels_per_update",
               "kernel_seconds_per_update", "operators_per_update", "warmup_seconds", "peak_memory_gb",
               "peak_reserved_memory_gb", "process_seconds", "settled", "host_activity", "triton_launchers",
               "phase_seconds", "outside_phases_seconds")


def in_fresh_processes(spec: dict, processes: int, data_dir: Path, device: torch.device, steps: int, warmup: int,
                       threads: int = 2) -> dict:
    """`spec` timed in `processes` fresh Python processes one after the other (each compiles anew,
    from torch's on-disk caches after the first), one window each: its `timings` are the
    processes' seconds per update, `seconds_per_update` their median."""
    runs = []
    for _ in range(processes):
        start = time.perf_counter()
        child = subprocess.run([sys.executable, "-m", "bench.gpu", "--child", json.dumps(spec), "--data", str(data_dir),
                                "--device", str(device), "--steps", str(steps), "--warmup", str(warmup),
                                "--threads", str(threads)], capture_output=True, text=True, cwd=ROOT)
        lines = child.stdout.strip().splitlines()
        if child.returncode != 0 or not lines:
            return {"shape": spec["shape"], "spec": spec, "error": child.stderr.strip().splitlines()[-6:] or ["no output"]}
        record = json.loads(lines[-1])[0]
        seconds = time.perf_counter() - start
        # the interpreter's start, imports and exit: what the phases leave out
        outside = seconds - sum(record.get("phase_seconds", {}).values())
        runs.append(record | {"process_seconds": round(seconds, 1), "outside_phases_seconds": round(outside, 1)})
    timings = [run["seconds_per_update"] for run in runs]
    median = float(np.median(timings))
    combined = {k: v for k, v in runs[0].items() if k not in PER_PROCESS}
    gflop, tokens = combined["model_gflop_per_update"], combined["target_tokens_per_update"]
    return combined | {
        "repeats_in": "fresh processes", "timings": timings, "seconds_per_update": significant(median),
        # each process's window after the machine went quiet, where the spec asks for one
        "settled_timings": [r["settled"]["seconds_per_update"] for r in runs if r.get("settled")] or None,
        "target_tokens_per_s": round(tokens / median), "model_tflop_per_s": significant(gflop / median / 1000),
        "host_issue_seconds": spread([r["host_issue_seconds"]["median"] for r in runs]),
        "device_seconds": spread([r["device_seconds"]["median"] for r in runs if r["device_seconds"]]),
        "processes": [{k: r[k] for k in PER_PROCESS if k in r} for r in runs],
    }


def with_mfu(run: dict, peaks: dict[str, float | None]) -> dict:
    """`run` with its MFU against each known peak (TFLOP/s)."""
    for name, peak in peaks.items():
        if peak and "model_tflop_per_s" in run:
            run[f"mfu_vs_{name}"] = significant(run["model_tflop_per_s"] / peak, 3)
    return run


def shards_for(spec_shape: dict, directory: Path, updates: int) -> ParallelShards:
    """Synthetic shards with enough pairs for `updates` updates of the shape's recipe."""
    tokens = updates * spec_shape["train"].update_freq * spec_shape["train"].max_tokens
    return synthetic_shards(directory, spec_shape["vocab"], pairs=max(2 * tokens // 27, 1000))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", help="auto, cuda, cuda:1, cpu")
    parser.add_argument("--shapes", default=None, help="comma-separated: base, big, tiny (default: base,big on a GPU, tiny on a CPU)")
    parser.add_argument("--precisions", default="fp32,bf16")
    parser.add_argument("--compile", default=None, help="off, on or off,on (default: off,on on a GPU, off on a CPU)")
    parser.add_argument("--ddp", default="off,on")
    parser.add_argument("--processes", type=int, default=3,
                        help="fresh processes timing each shape's recipe defaults (0: none)")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--windows", type=int, default=3, help="timings of each other configuration, in one process")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (CPU runs only)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--child", help=argparse.SUPPRESS)  # a fresh process: time this spec, print its JSON
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    device = torch.device(("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device)
    on_gpu = device.type == "cuda"
    if not on_gpu:
        torch.set_num_threads(args.threads)
    if args.child:
        print(json.dumps(bench_one(json.loads(args.child), device, ParallelShards(args.data, "train"),
                                   args.steps, args.warmup)))
        return {}
    shapes = (args.shapes or ("base,big" if on_gpu else "tiny")).split(",")
    compiles = [c == "on" for c in (args.compile or ("off,on" if on_gpu else "off")).split(",")]
    ddps = [d == "on" for d in args.ddp.split(",")]
    report: dict = {"provenance": provenance(), "torch": torch.__version__, "machine": platform.machine(),
                    "device": str(device)}
    if on_gpu:
        name = torch.cuda.get_device_name(device)
        peak, model = datasheet_bf16_tflops(name)
        report |= {"device_name": name, "device_model": model, "datasheet_bf16_dense_tflops": peak,
                   "measured_bf16_matmul_tflops": round(bf16_matmul_tflops(device), 1)}
        peaks = {"datasheet": report["datasheet_bf16_dense_tflops"], "measured": report["measured_bf16_matmul_tflops"]}
    else:
        from bench.run import matmul_ceiling

        report |= {"device_name": "cpu", "threads": args.threads,
                   "measured_fp32_matmul_tflops": significant(matmul_ceiling() / 1000)}
        peaks = {"measured_fp32_matmul": report["measured_fp32_matmul_tflops"]}
    runs = []
    scratch = tempfile.TemporaryDirectory(prefix="nmt-bench-gpu-")
    for name in shapes:
        spec_shape = shape(name)
        data = shards_for(spec_shape, Path(scratch.name) / name, args.warmup + args.windows * args.steps + 3)
        measured = []
        if args.processes:
            measured.append(in_fresh_processes({"shape": name}, args.processes, Path(scratch.name) / name, device,
                                               args.steps, args.warmup, args.threads))
        for precision in args.precisions.split(","):
            for compiled in compiles:
                for ddp in ddps:
                    spec = {"shape": name, "train": {"precision": precision, "compile": compiled}, "ddp": ddp}
                    measured += bench_one(spec, device, data, args.steps, args.warmup, args.windows)
        for run in measured:
            print(json.dumps(with_mfu(run, peaks)), flush=True)
            runs.append(run)
            if on_gpu:
                torch.cuda.empty_cache()
    scratch.cleanup()
    report["runs"] = runs
    out = args.out or RESULTS / ("gpu.json" if on_gpu else "cpu_tiny.json")
    write_json(out, report)
    return report


if __name__ == "__main__":
    main()
