"""Attention alone, forward and backward, at the recipes' shapes: torch's fused kernels
(scaled_dot_product_attention as nmt trains with it: FlashAttention or the memory-efficient
kernel, cuDNN's left out) against the scores materialised by matmuls (train.attention: matmul,
nmt.model.matmul_attention), eager and compiled, and, where keys are padded, FlashAttention over
the padding as variable-length segments (train.attention: varlen, nmt.model.varlen_attention).
Translation batches hold many short sentences;
the fused kernels' tiles of 64-128 queries and keys are then mostly empty, and on an H200 the base
update's attention took 20 % of its kernel time for about 1 % of its FLOPs; its padded
attentions ran the memory-efficient kernel, as FlashAttention takes no mask. This says, per
sentence length, which way is faster, and so which train.attention should be the default. q, k
and v are laid out as the model's projections make them, (B, L, h, dh) viewed as (B, h, L, dh).

    bash bench/gpu_day/run.sh attention_probe [--lengths 16,32,64,128,256] [--shapes base,big]

(or `python3 -m bench.gpu_day.attention_probe --out FILE`: it needs torch alone). Per (shape,
attention, length, variant): milliseconds per forward and backward call (the median of
`--timings` timings of `--calls` calls each, CUDA events), and each variant's largest difference
from the fused kernels' output and gradients (`agrees_with_fused`: below 5 % of each tensor's
largest value in bf16). `fused_by_inductor` counts inductor's rewrites of the compiled matmuls back into scaled_dot_product_attention (its
fuse_attention pass); a count above 0 means the compiled variant timed the fused kernels. The
JSON is rewritten after each length, so a run cut short returns what it measured.

Without a GPU: tiny shapes on the CPU in fp32, compiled with the aot_eager backend, varlen by its
reference computation: a smoke run of the same code, whose times say nothing about a GPU.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from nmt.model.matmul_attention import matmul_attention
from nmt.model.varlen_attention import key_padding_segments, varlen_attention

# The base and big recipes' heads (head width 64), and the tokens of their update in one pass.
SHAPES = {"base": {"heads": 8, "head_width": 64, "tokens": 25_000},
          "big": {"heads": 16, "head_width": 64, "tokens": 25_000}}
TINY = {"tiny": {"heads": 2, "head_width": 16, "tokens": 256}}
# The encoder's self-attention and the encoder-decoder attention mask padded keys; the decoder's
# self-attention is causal (right padding then needs no mask: no real query sees a later padding key).
ATTENTIONS = {"padded_keys": {"padded_keys": True, "causal": False},
              "causal": {"padded_keys": False, "causal": True}}


AGREEMENT = {torch.bfloat16: 0.05, torch.float32: 1e-5}  # largest relative difference from the fused kernels


def fused(q, k, v, mask, causal):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)


def by_matmul(q, k, v, mask, causal):
    return matmul_attention(q, k, v, mask, causal, 0.0)


def by_segments(segments):
    """train.attention: varlen over one batch's padding (its segments built once, as a pass builds
    them once for all its layers), its output viewed as the others' (B, h, L, dh)."""
    def attend(q, k, v, mask, causal):
        rows, heads, length, width = q.shape
        return varlen_attention(q, k, v, segments).view(rows, length, heads, width).transpose(1, 2)
    return attend


def inputs(shape: dict, length: int, padded_keys: bool, device: torch.device, dtype: torch.dtype, seed: int = 1):
    """q, k, v (B, L, h, dh) of a batch of sentences about `length` long (each row's keys 85-100 %
    of it real where keys are padded), the tokens of one pass, and the output's gradient."""
    generator = torch.Generator().manual_seed(seed)
    rows = max(1, shape["tokens"] // length)
    size = (rows, length, shape["heads"], shape["head_width"])
    q, k, v, grad = (torch.randn(size, generator=generator).to(device, dtype) for _ in range(4))
    grad = grad.transpose(1, 2)
    mask = None
    if padded_keys:
        real = torch.randint(max(1, int(0.85 * length)), length + 1, (rows,), generator=generator)
        mask = (torch.arange(length)[None, :] < real[:, None])[:, None, None, :].to(device)
    return [t.requires_grad_() for t in (q, k, v)], mask, grad


def forward_backward(function, q, k, v, mask, causal, grad) -> tuple[torch.Tensor, list[torch.Tensor]]:
    for t in (q, k, v):
        t.grad = None
    out = function(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), mask, causal)  # (B, h, L, dh) views
    out.backward(grad)
    return out.detach(), [t.grad for t in (q, k, v)]


def milliseconds_per_call(function, args: tuple, device: torch.device, calls: int, timings: int) -> list[float]:
    """`timings` timings of `calls` forward and backward calls each, after 3 untimed ones."""
    for _ in range(3):
        forward_backward(function, *args)
    result = []
    for _ in range(timings):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(calls):
                forward_backward(function, *args)
            end.record()
            torch.cuda.synchronize()
            result.append(start.elapsed_time(end) / calls)
        else:
            begin = time.perf_counter()
            for _ in range(calls):
                forward_backward(function, *args)
            result.append((time.perf_counter() - begin) * 1000 / calls)
    return [round(ms, 4) for ms in result]


def largest_difference(reference: tuple, other: tuple) -> float:
    """The largest difference over the output and q, k, v's gradients, relative to each one's
    largest magnitude."""
    (out_a, grads_a), (out_b, grads_b) = reference, other
    worst = 0.0
    for a, b in zip([out_a, *grads_a], [out_b, *grads_b]):
        worst = max(worst, float((a.float() - b.float()).abs().max() / a.float().abs().max().clamp_min(1e-30)))
    return worst


def fused_by_inductor() -> int:
    from torch._dynamo.utils import counters

    return int(counters["inductor"].get("fuse_attention", 0))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--lengths", default=None, help="sentence lengths (default: 16,32,64,128,256 on a GPU)")
    parser.add_argument("--shapes", default=None, help="base,big on a GPU")
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--timings", type=int, default=3)
    args = parser.parse_args(argv)
    from tools.results import provenance, write_json

    on_gpu = torch.cuda.is_available()
    device = torch.device("cuda" if on_gpu else "cpu")
    dtype = torch.bfloat16 if on_gpu else torch.float32
    shapes = SHAPES if on_gpu else TINY
    chosen = args.shapes.split(",") if args.shapes else list(shapes)
    lengths = [int(n) for n in (args.lengths or ("16,32,64,128,256" if on_gpu else "8,16")).split(",")]
    backend = "inductor" if on_gpu else "aot_eager"
    variants = {"fused": fused, "matmul": by_matmul,
                "matmul_compiled": torch.compile(by_matmul, dynamic=True, backend=backend)}
    result = {"provenance": provenance(), "device": torch.cuda.get_device_name() if on_gpu else "cpu",
              "torch": torch.__version__, "dtype": str(dtype).removeprefix("torch."), "compile_backend": backend,
              "calls_per_timing": args.calls, "runs": []}
    # cuDNN's attention left out, as nmt trains (nmt.model.precision.attention_kernels)
    kernels = torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.FLASH_ATTENTION,
                                             torch.nn.attention.SDPBackend.EFFICIENT_ATTENTION,
                                             torch.nn.attention.SDPBackend.MATH]) if on_gpu else contextlib.nullcontext()
    with kernels:
        for shape_name in chosen:
            for attention, how in ATTENTIONS.items():
                for length in lengths:
                    q_k_v, mask, grad = inputs(shapes[shape_name], length, how["padded_keys"], device, dtype)
                    call = (*q_k_v, mask, how["causal"], grad)
                    # FlashAttention over segments replaces the mask; the causal attention has none
                    # (on a CPU: the segments' reference computation, a smoke run of the same code)
                    run_variants = variants | ({"varlen": by_segments(key_padding_segments(mask, length))}
                                               if mask is not None else {})
                    reference = forward_backward(fused, *call)
                    run = {"shape": shape_name, "attention": attention, "length": length, "rows": q_k_v[0].size(0),
                           "milliseconds": {}, "largest_difference": {}}
                    for name, function in run_variants.items():
                        compile_start = time.perf_counter()
                        outcome = forward_backward(function, *call)  # (the compiled one compiles here)
                        if name.endswith("compiled"):
                            run["first_call_seconds"] = round(time.perf_counter() - compile_start, 1)
                        run["largest_difference"][name] = round(largest_difference(reference, outcome), 5)
                        timings = milliseconds_per_call(function, call, device, args.calls, args.timings)
                        run["milliseconds"][name] = {"timings": timings, "median": sorted(timings)[len(timings) // 2]}
                    medians = {name: m["median"] for name, m in run["milliseconds"].items()}
                    run["fastest"] = min(medians, key=medians.get)
                    run["fused_over_best_matmul"] = round(medians["fused"] / min(medians["matmul"],
                                                                                  medians["matmul_compiled"]), 3)
                    if "varlen" in medians:
                        run["fused_over_varlen"] = round(medians["fused"] / medians["varlen"], 3)
                    run["fused_by_inductor"] = fused_by_inductor()
                    # within bf16's rounding of the same arithmetic (relative to each tensor's largest value)
                    run["agrees_with_fused"] = max(run["largest_difference"].values()) < AGREEMENT[dtype]
                    result["runs"].append(run)
                    write_json(args.out, result)
                    print(json.dumps({k: run[k] for k in ("shape", "attention", "length", "fastest",
                                                          "fused_over_best_matmul")}
                                     | {"ms": medians}), flush=True)
                    del q_k_v, mask, grad, call, reference, run_variants
    return result


if __name__ == "__main__":
    main()
