"""What a bf16 pass of the base model keeps for its backward, per target token, with the residual
stream in bf16 (nmt's LayerNorm) and in fp32 (torch's, as under CUDA autocast before): eager, and
compiled as inductor partitions it (AOTAutograd's min-cut partition, without code generation).

    python -m experiments.precision.kept_for_backward

On the CPU under bf16 autocast, random weights of the base recipe's shape (6 + 6 layers of 512,
37k vocabulary), batches of 8 and 24 pairs of 24 tokens a side: the bytes the forward pass saves
for the backward (each storage once, the weights left out), per target token as the slope
between the two batches. Results: experiments/precision/results/kept_for_backward.json.
"""

from __future__ import annotations

from pathlib import Path

import torch

from bench import gpu as bench_gpu
from nmt.model.transformer import Transformer
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
LENGTH = 24


def kept_bytes(forward, model: Transformer, pairs: int) -> int:
    vocab = model.output_weight.size(0)
    src, tgt = (torch.randint(4, vocab, (pairs, LENGTH)) for _ in range(2))
    positions, targets = torch.arange(pairs * LENGTH), torch.randint(4, vocab, (pairs * LENGTH,))
    weights = {p.untyped_storage().data_ptr() for p in model.parameters()}
    kept: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in weights:
            kept[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), torch.autocast("cpu", dtype=torch.bfloat16):
        loss = forward(src, tgt, positions, targets, 0.1)
    loss.backward()
    model.zero_grad()
    return sum(kept.values())


def per_target_token(forward, model: Transformer) -> int:
    return round((kept_bytes(forward, model, 24) - kept_bytes(forward, model, 8)) / (16 * LENGTH))


def main() -> None:
    torch.set_num_threads(2)
    spec = bench_gpu.shape("base")
    torch.manual_seed(0)
    model = Transformer(spec["model"], spec["vocab"], spec["vocab"]).train()
    result = {"shape": "base", "precision": "bf16 autocast", "length": LENGTH, "streams": {}}
    for stream in ("fp32", "bf16"):
        with bench_gpu.layer_norms_of({"fp32_residual": stream == "fp32"}):
            torch._dynamo.reset()
            compiled = torch.compile(model, dynamic=False, backend="aot_eager_decomp_partition")
            result["streams"][stream] = {"eager_bytes_per_target_token": per_target_token(model, model),
                                         "compiled_bytes_per_target_token": per_target_token(compiled, model)}
        print(stream, result["streams"][stream], flush=True)
    fp32, bf16 = result["streams"]["fp32"], result["streams"]["bf16"]
    result["bf16_against_fp32"] = {key: round(bf16[key] / fp32[key], 3) for key in fp32}
    write_json(RESULTS / "kept_for_backward.json", result)


if __name__ == "__main__":
    main()
