"""`make bench-gpu`: training speed of the base and big Transformers on a GPU, with MFU.

    python -m bench.gpu [--shapes base,big] [--precisions fp32,bf16] [--compile off,on] [--ddp off,on]

Each configuration times `nmt.train.step.TrainStep`, the update `nmt train` runs: collation from
memory-mapped shards, pinned-memory copies, autocast, gradient accumulation over the recipe's
`update_freq` batches, the GradScaler, clipping, fused Adam and the schedule, with the recipe's
own train settings. The data are synthetic shards: random token ids with a realistic length mix
(source lengths log-normal around 30 pieces, as WMT14 with a 37k BPE; target lengths a noisy
ratio of them), batched by nmt's own token batching. Reported: target tokens/s, seconds per
update, peak device memory, and MFU = model FLOPs per update (bench.flops: every matmul, the
attention scores, the output layer, real tokens only) / time / the device's bf16 dense peak,
against both the datasheet peak and a measured large bf16 matmul.

Without a GPU it runs the tiny shape on the CPU (so CI exercises every path); MFU there is
against the measured fp32 matmul ceiling. Results: bench/results/gpu.json (cpu_tiny.json on a CPU).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import re
import resource
import socket
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

from bench.flops import model_flops_per_update
from bench.report import write_json
from nmt.config import ModelConfig, TrainConfig, load_recipe
from nmt.data.batching import epoch_batches, round_up
from nmt.data.shards import ParallelShards, ShardWriter
from nmt.model.transformer import Transformer
from nmt.train.distributed import World
from nmt.train.step import TrainStep

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
VOCAB = 37_000  # the base recipe's joint BPE
TINY = {"model": ModelConfig(encoder_layers=2, decoder_layers=2, d_model=64, heads=4, d_ff=128),
        "train": TrainConfig(max_tokens=1024, update_freq=2, lr_schedule="inverse_sqrt", lr=1e-3, warmup_steps=100),
        "vocab": 1000}


def shape(name: str) -> dict:
    """Model shape, train settings and vocabulary of a recipe (base, big) or of the tiny CPU shape."""
    if name == "tiny":
        return TINY
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


def datasheet_bf16_tflops(device_name: str) -> tuple[float | None, str]:
    """NVIDIA's bf16 dense peak (TFLOP/s, no sparsity) for a device name as torch reports it, and
    the model it was read as; (None, "unknown") for a device not listed: never a guess."""
    name = device_name.upper()
    for pattern, model, peak in (
        (r"H100.*NVL", "H100 NVL", 835.0), (r"H100.*PCIE", "H100 PCIe", 756.0),
        (r"H100.*(SXM|HBM3)", "H100 SXM", 989.0), (r"H200.*NVL", "H200 NVL", 835.0), (r"H200", "H200 SXM", 989.0),
        (r"A100", "A100", 312.0),
    ):
        if re.search(pattern, name):
            return peak, model
    return None, "unknown"


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


def bench_one(name: str, precision: str, compiled: bool, ddp: bool, device: torch.device,
              steps: int, warmup: int, data: ParallelShards, seed: int = 1, length_multiple: int | None = None) -> dict:
    """Time `steps` updates of TrainStep after `warmup` ones; speed, memory and MFU of one configuration.
    `length_multiple` overrides the batch-width rounding TrainStep picks for the device."""
    spec = shape(name)
    cfg = spec["train"].model_copy(update={"precision": precision, "compile": compiled})
    freq = cfg.update_freq
    torch.manual_seed(seed)
    model = Transformer(spec["model"], spec["vocab"], spec["vocab"]).to(device)
    batches = epoch_batches(data, cfg.max_tokens, seed, epoch=0, group=freq)
    updates = [batches[i * freq:(i + 1) * freq] for i in range(warmup + steps)]
    if len(updates[-1]) < freq:
        raise ValueError(f"{len(batches)} batches are too few for {warmup + steps} updates")
    group = one_process_group(device) if ddp else contextlib.nullcontext()
    with group:
        step = TrainStep(model, cfg, device, _OneProcessWorld() if ddp else World())
        if length_multiple is not None:
            step.length_multiple = length_multiple
        start = time.perf_counter()
        for update in updates[:warmup]:
            step(data, update)
        _synchronize(device)
        warmup_seconds = time.perf_counter() - start
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        start = time.perf_counter()
        results = [step(data, update) for update in updates[warmup:]]  # (loss on the device, tokens)
        _synchronize(device)
        seconds = time.perf_counter() - start
        step.forward = model  # let DDP go before its process group
    timed = [b for update in updates[warmup:] for b in update]
    tgt_tokens = sum(tokens for _, tokens in results)
    multiple = step.length_multiple
    padded_tokens = sum(len(idx) * round_up(int(data.tgt.lengths[idx].max()) + 1, multiple) for idx in timed)
    pairs = [(int(data.src.lengths[i]) + 1, int(data.tgt.lengths[i]) + 1) for idx in timed for i in idx]
    flops = model_flops_per_update(spec["model"], spec["vocab"], pairs)
    peak_memory = (torch.cuda.max_memory_allocated(device) if device.type == "cuda"
                   else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    last_loss, last_tokens = results[-1]
    return {
        "shape": name, "precision": precision, "compile": compiled, "ddp": ddp, "length_multiple": multiple,
        "parameters": model.num_parameters(), "batches_per_update": freq, "max_tokens": cfg.max_tokens,
        "updates": steps, "seconds_per_update": significant(seconds / steps),
        "target_tokens_per_update": round(tgt_tokens / steps), "target_tokens_per_s": round(tgt_tokens / seconds),
        "target_padding_fraction": round(1 - tgt_tokens / padded_tokens, 3),
        "model_gflop_per_update": significant(flops / steps / 1e9), "model_tflop_per_s": significant(flops / seconds / 1e12),
        "warmup_seconds": round(warmup_seconds, 1), "final_loss": round(float(last_loss) / last_tokens, 4),
        "peak_memory_gb": round(peak_memory / 2**30, 2),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", help="auto, cuda, cuda:1, cpu")
    parser.add_argument("--shapes", default=None, help="comma-separated: base, big, tiny (default: base,big on a GPU, tiny on a CPU)")
    parser.add_argument("--precisions", default="fp32,bf16")
    parser.add_argument("--compile", default=None, help="off, on or off,on (default: off,on on a GPU, off on a CPU)")
    parser.add_argument("--ddp", default="off,on")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (CPU runs only)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    device = torch.device(("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device)
    on_gpu = device.type == "cuda"
    if not on_gpu:
        torch.set_num_threads(args.threads)
    shapes = (args.shapes or ("base,big" if on_gpu else "tiny")).split(",")
    compiles = [c == "on" for c in (args.compile or ("off,on" if on_gpu else "off")).split(",")]
    ddps = [d == "on" for d in args.ddp.split(",")]
    report: dict = {"torch": torch.__version__, "machine": platform.machine(), "device": str(device)}
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
        spec = shape(name)
        tokens_needed = (args.warmup + args.steps) * spec["train"].update_freq * spec["train"].max_tokens
        data = synthetic_shards(Path(scratch.name) / name, spec["vocab"], pairs=max(2 * tokens_needed // 27, 1000))
        for precision in args.precisions.split(","):
            for compiled in compiles:
                for ddp in ddps:
                    run = bench_one(name, precision, compiled, ddp, device, args.steps, args.warmup, data)
                    for peak_name, peak in peaks.items():
                        if peak:
                            run[f"mfu_vs_{peak_name}"] = significant(run["model_tflop_per_s"] / peak, 3)
                    print(json.dumps(run), flush=True)
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
