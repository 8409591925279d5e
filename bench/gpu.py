"""`make bench-gpu`: training speed of the base and big Transformers on a GPU, with MFU.

    python -m bench.gpu [--shapes base,big] [--precisions fp32,bf16] [--compile off,on] [--ddp off,on]

Each configuration trains the real model (nmt.model.transformer, the fused output layer and
label-smoothed loss, Adam) on synthetic batches: random token ids with a realistic length mix
(source lengths log-normal around 30 pieces, as WMT14 with a 37k BPE; target lengths a noisy
ratio of them), packed into the recipe's token batches by nmt's own batching. Reported: target
tokens/s, seconds per update, peak device memory, and MFU = model FLOPs per update (bench.flops:
every matmul, the attention scores, the output layer, real tokens only) / time / the device's bf16
dense peak, against both the datasheet peak and a measured large bf16 matmul.

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
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from bench.flops import model_flops_per_update
from nmt.config import ModelConfig, load_recipe
from nmt.data.batching import pack_by_tokens
from nmt.data.tokenizer import BOS, EOS, PAD
from nmt.model.transformer import Transformer

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
VOCAB = 37_000  # the base recipe's joint BPE
TINY = {"model": ModelConfig(encoder_layers=2, decoder_layers=2, d_model=64, heads=4, d_ff=128),
        "max_tokens": 1024, "update_freq": 2, "vocab": 1000}
# bf16 dense peaks from the datasheets, TFLOP/s (H100 and H200 SXM; the H100 PCIe is lower).
DATASHEET_BF16_TFLOPS = {"H100 PCIe": 756.0, "H100": 989.0, "H200": 989.0, "A100": 312.0}


def shape(name: str) -> dict:
    """Model shape, batch size and vocabulary of a recipe (base, big) or of the tiny CPU shape."""
    if name == "tiny":
        return TINY
    recipe = load_recipe(ROOT / "recipes" / f"wmt14_en_de_{name}.yaml")
    return {"model": recipe.model, "max_tokens": recipe.train.max_tokens,
            "update_freq": recipe.train.update_freq, "vocab": VOCAB}


def synthetic_batches(max_tokens: int, vocab: int, n_batches: int, seed: int = 1,
                      max_length: int = 250) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """(src, tgt_in, tgt_out) token batches of random ids with a news-like length mix."""
    rng = np.random.default_rng(seed)
    pairs = max(4 * n_batches * max_tokens // 30, 1000)
    src_len = np.clip(rng.lognormal(np.log(27), 0.55, pairs), 1, max_length).astype(np.int64)
    tgt_len = np.clip(src_len * rng.lognormal(0.03, 0.15, pairs), 1, max_length).astype(np.int64)
    sizes = np.maximum(src_len, tgt_len) + 1  # + EOS / BOS
    order = np.lexsort((src_len, tgt_len))
    batches = pack_by_tokens(order, sizes, max_tokens)
    picked = [batches[i] for i in rng.permutation(len(batches))[:n_batches]]
    out = []
    for idx in picked:
        s, t = src_len[idx], tgt_len[idx]
        src = torch.full((len(idx), int(s.max()) + 1), PAD)
        tgt_in = torch.full((len(idx), int(t.max()) + 1), PAD)
        tgt_out = torch.full_like(tgt_in, PAD)
        for row, (n_src, n_tgt) in enumerate(zip(s, t)):
            src[row, :n_src] = torch.randint(4, vocab, (int(n_src),))
            src[row, n_src] = EOS
            words = torch.randint(4, vocab, (int(n_tgt),))
            tgt_in[row, 0], tgt_in[row, 1:n_tgt + 1] = BOS, words
            tgt_out[row, :n_tgt], tgt_out[row, n_tgt] = words, EOS
        out.append((src, tgt_in, tgt_out))
    return out


def significant(x: float, digits: int = 4) -> float:
    """Rounded to `digits` significant figures: CPU and GPU rates differ by 10^5."""
    return float(f"{x:.{digits}g}")


def real_lengths(batch) -> list[tuple[int, int]]:
    src, _, tgt_out = batch
    return list(zip(src.ne(PAD).sum(1).tolist(), tgt_out.ne(PAD).sum(1).tolist()))


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


def datasheet_tflops(device_name: str) -> float | None:
    for key, value in DATASHEET_BF16_TFLOPS.items():  # "H100 PCIe" before "H100"
        if key in device_name:
            return value
    return None


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


def bench_one(name: str, precision: str, compiled: bool, ddp: bool, device: torch.device,
              steps: int, warmup: int, seed: int = 1) -> dict:
    """Train `steps` timed updates after `warmup` ones; speed, memory and MFU of one configuration."""
    spec = shape(name)
    cfg, freq = spec["model"], spec["update_freq"]
    torch.manual_seed(seed)
    model = Transformer(cfg, spec["vocab"], spec["vocab"]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9,
                                 fused=device.type == "cuda")
    batches = synthetic_batches(spec["max_tokens"], spec["vocab"], (warmup + steps) * freq, seed)
    pairs = [real_lengths(b) for b in batches]  # counted on the host, before the timed loop
    batches = [tuple(t.to(device) for t in b) for b in batches]
    updates = [batches[i * freq:(i + 1) * freq] for i in range(warmup + steps)]
    tokens_of_update = [sum(t for lengths in pairs[i * freq:(i + 1) * freq] for _, t in lengths)
                        for i in range(warmup + steps)]
    group = one_process_group(device) if ddp else contextlib.nullcontext()
    with group:
        forward = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None) \
            if ddp else model
        if compiled:
            forward = torch.compile(forward)
        autocast = (lambda: torch.autocast(device.type, dtype=torch.bfloat16)) if precision == "bf16" \
            else contextlib.nullcontext

        def update(group_of_batches, tokens: int) -> torch.Tensor:
            optimizer.zero_grad(set_to_none=True)
            total = torch.zeros((), device=device)
            for i, (src, tgt_in, tgt_out) in enumerate(group_of_batches):
                sync = forward.no_sync() if ddp and i < len(group_of_batches) - 1 else contextlib.nullcontext()
                with sync:
                    with autocast():
                        real = tgt_out != PAD
                        loss = forward(src, tgt_in, real, tgt_out[real], 0.1)
                    (loss / tokens).backward()
                total += loss.detach()
            optimizer.step()
            return total / tokens

        start = time.perf_counter()
        for group_of_batches, tokens in zip(updates[:warmup], tokens_of_update):
            update(group_of_batches, tokens)
        _synchronize(device)
        warmup_seconds = time.perf_counter() - start
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        start = time.perf_counter()
        losses = [update(g, n) for g, n in zip(updates[warmup:], tokens_of_update[warmup:])]
        _synchronize(device)
        seconds = time.perf_counter() - start
    timed = [b for g in updates[warmup:] for b in g]
    tgt_tokens = sum(tokens_of_update[warmup:])
    padded_tokens = sum(b[2].numel() for b in timed)
    flops = model_flops_per_update(cfg, spec["vocab"], [p for lengths in pairs[warmup * freq:] for p in lengths])
    peak_memory = (torch.cuda.max_memory_allocated(device) if device.type == "cuda"
                   else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    return {
        "shape": name, "precision": precision, "compile": compiled, "ddp": ddp,
        "parameters": model.num_parameters(), "batches_per_update": freq, "max_tokens": spec["max_tokens"],
        "updates": steps, "seconds_per_update": significant(seconds / steps),
        "target_tokens_per_update": round(tgt_tokens / steps), "target_tokens_per_s": round(tgt_tokens / seconds),
        "target_padding_fraction": round(1 - tgt_tokens / padded_tokens, 3),
        "model_gflop_per_update": significant(flops / steps / 1e9), "model_tflop_per_s": significant(flops / seconds / 1e12),
        "warmup_seconds": round(warmup_seconds, 1), "final_loss": round(float(losses[-1]), 4),
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
        report |= {"device_name": name, "datasheet_bf16_dense_tflops": datasheet_tflops(name),
                   "measured_bf16_matmul_tflops": round(bf16_matmul_tflops(device), 1)}
        peaks = {"datasheet": report["datasheet_bf16_dense_tflops"], "measured": report["measured_bf16_matmul_tflops"]}
    else:
        from bench.run import matmul_ceiling

        report |= {"device_name": "cpu", "threads": args.threads,
                   "measured_fp32_matmul_tflops": significant(matmul_ceiling() / 1000)}
        peaks = {"measured_fp32_matmul": report["measured_fp32_matmul_tflops"]}
    runs = []
    for name in shapes:
        for precision in args.precisions.split(","):
            for compiled in compiles:
                for ddp in ddps:
                    run = bench_one(name, precision, compiled, ddp, device, args.steps, args.warmup)
                    for peak_name, peak in peaks.items():
                        if peak:
                            run[f"mfu_vs_{peak_name}"] = significant(run["model_tflop_per_s"] / peak, 3)
                    print(json.dumps(run), flush=True)
                    runs.append(run)
                    if on_gpu:
                        torch.cuda.empty_cache()
    report["runs"] = runs
    out = args.out or RESULTS / ("gpu.json" if on_gpu else "cpu_tiny.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(json.dumps(report, indent=1) + "\n")
    os.replace(tmp, out)
    return report


if __name__ == "__main__":
    main()
