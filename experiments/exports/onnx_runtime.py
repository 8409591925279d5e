"""The demo model's ONNX export on onnxruntime beside nmt's own engine and CTranslate2
(`make bench-onnx`): greedy search on test_2016_flickr, 2 threads each, float32 and int8 (dynamic
quantization in both). For each: BLEU, the lines identical to nmt's own greedy output, the
export's size, and the seconds to translate the 1,000 lines (median of 3 runs in this process;
every engine batches lines of similar length). Writes experiments/exports/results/onnx_runtime.json.

    python -m experiments.exports.onnx_runtime [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_test_set, score
from nmt.decode.engines.engine import load_engine
from nmt.decode.text.casing import hypothesis_text
from nmt.decode.translate import decode_settings, translate_lines
from nmt.export import export_checkpoint
from nmt.export.onnx_runtime import OnnxTranslator
from nmt.info import checkpoint_info
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
GREEDY = ["decode.beam_size=1", "decode.no_repeat_ngram_size=0", "decode.split_sentences=false",
          "decode.normalize_case=false", "decode.copy_verbatim=false"]


def timed(translate, repeats: int = 3) -> tuple[list[str], list[float]]:
    seconds, out = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        out = translate()
        seconds.append(round(time.perf_counter() - start, 3))
    return out, seconds


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    own = load_engine([checkpoint])
    cfg = decode_settings(own.recipe, None, {}, GREEDY)
    systems = {}

    def record(name: str, outputs: list[str], seconds: list[float], size: int | None) -> None:
        systems[name] = {"seconds": seconds, "median_seconds": statistics.median(seconds),
                         "identical_to_nmt": sum(a == b for a, b in zip(outputs, reference_outputs)),
                         "megabytes": None if size is None else round(size / 1e6, 1), **score(outputs, references)}
        print(name, systems[name], flush=True)

    reference_outputs, seconds = timed(lambda: [hypothesis_text(own.tgt_tokenizer, h[0])
                                                for h in translate_lines(own, sources, cfg)])
    record("nmt_torch_float32", reference_outputs, seconds, None)
    with tempfile.TemporaryDirectory() as tmp:
        for quantization in (None, "int8"):
            label = quantization or "float32"
            onnx_dir = Path(tmp) / f"onnx_{label}"
            summary = export_checkpoint(checkpoint, onnx_dir, "onnx", quantization)
            onnx = OnnxTranslator(onnx_dir, threads=args.threads)
            outputs, seconds = timed(lambda: onnx.translate(sources))
            record(f"onnxruntime_{label}", outputs, seconds, summary["bytes"])
            ct2_dir = Path(tmp) / f"ct2_{label}"
            summary = export_checkpoint(checkpoint, ct2_dir, "ctranslate2", quantization)
            ct2 = load_engine([ct2_dir], threads=args.threads)
            outputs, seconds = timed(lambda: [hypothesis_text(ct2.tgt_tokenizer, h[0])
                                              for h in translate_lines(ct2, sources, cfg)])
            record(f"ctranslate2_{label}", outputs, seconds, summary["bytes"])
    info = checkpoint_info(checkpoint)
    write_json(RESULTS / "onnx_runtime.json", {
        "checkpoint": str(checkpoint), "updates": info["step"], "training_minutes": info["training_minutes"],
        "test": args.test, "sentences": len(sources), "threads": args.threads, "search": "greedy",
        "systems": systems})


if __name__ == "__main__":
    main()
