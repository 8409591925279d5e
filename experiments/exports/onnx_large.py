"""An ONNX export past protobuf's 2 GiB (`make bench-onnx-large`): a random-weight model whose shared
embedding alone is 2.2 GB (540,000 pieces of 1,024 dimensions, one layer each side; the size of an
NLLB-200 3.3B's embedding, 256k × 2,048, is 2.1 GB), both graphs exported as `nmt export --format
onnx` writes them (nmt.export.onnx.export_graphs), float32 and int8. For each: the files written,
their sizes, the seconds to export and to load into onnxruntime, and the largest difference between
the graphs' log-probabilities and the model's over 4 decoding steps of 2 sentences. Writes
experiments/exports/results/onnx_large.json. Needs about 21 GB of memory.

    python -m experiments.exports.onnx_large
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from nmt.config import ModelConfig
from nmt.export.onnx import export_graphs
from nmt.model.transformer import Transformer
from nmt.special_tokens import EOS
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
PIECES = 540_000


def largest_difference(model: Transformer, out: Path, steps: int = 4) -> float:
    """Max |graphs' log-probabilities - model's| over `steps` decoding steps of two sources (the
    tokens ruled out, -inf in both, checked alike and left out)."""
    import onnxruntime

    encoder = onnxruntime.InferenceSession(str(out / "encoder.onnx"), providers=["CPUExecutionProvider"])
    decoder = onnxruntime.InferenceSession(str(out / "decoder.onnx"), providers=["CPUExecutionProvider"])
    src = torch.tensor([[11, 12, 13, 14, EOS], [15, 16, EOS, 0, 0]])
    keys, values, bias = encoder.run(None, {"src_ids": src.numpy()})
    cfg = model.cfg
    past = np.zeros((cfg.decoder_layers, 2, cfg.heads, 0, cfg.d_model // cfg.heads), dtype=np.float32)
    past_keys, past_values, worst = past, past.copy(), 0.0
    with torch.no_grad():
        memory, src_mask = model.encode(src)
        state = model.start_decoding(memory, src_mask)
        tokens = torch.full((2,), model.start_token)
        for step in range(steps):
            expected = model.decode_step(tokens, state).numpy()
            log_probs, past_keys, past_values = decoder.run(["log_probs", "present_keys", "present_values"], {
                "tokens": tokens.numpy(), "position": np.array([step]), "src_bias": bias, "memory_keys": keys,
                "memory_values": values, "past_keys": past_keys, "past_values": past_values})
            finite = np.isfinite(expected)  # PAD and BOS: -inf in both
            assert (np.isfinite(log_probs) == finite).all()
            worst = max(worst, float(np.abs(log_probs[finite] - expected[finite]).max()))
            tokens = torch.from_numpy(expected.argmax(-1))
    return worst


def main() -> None:
    torch.manual_seed(1)
    cfg = ModelConfig(d_model=1024, heads=16, d_ff=4096, encoder_layers=1, decoder_layers=1, max_positions=256,
                      dropout=0.0)
    model = Transformer(cfg, PIECES, PIECES).eval()
    parameters = sum(p.numel() for p in model.parameters())
    results = {"pieces": PIECES, "d_model": cfg.d_model, "parameters": parameters,
               "parameter_bytes": parameters * 4, "exports": {}}
    for label, quantize in (("float32", False), ("int8", True)):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            start = time.perf_counter()
            export_graphs(model, out, quantize)
            exported = time.perf_counter() - start
            files = {p.name: p.stat().st_size for p in sorted(out.iterdir())}
            start = time.perf_counter()
            difference = largest_difference(model, out)  # int8: the quantization's error besides
            results["exports"][label] = {"files": files, "export_seconds": round(exported, 1),
                                         "largest_log_prob_difference": difference,
                                         "check_seconds": round(time.perf_counter() - start, 1)}
            print(label, results["exports"][label], flush=True)
    write_json(RESULTS / "onnx_large.json", results)


if __name__ == "__main__":
    main()
