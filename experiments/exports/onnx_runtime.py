"""The demo model's ONNX export on onnxruntime beside nmt's own engine and CTranslate2
(`make bench-onnx`): greedy search and the recipe's beam search on test_2016_flickr, 2 threads
each, float32 and int8 (dynamic quantization in both). For each: BLEU, the lines identical to
nmt's own output with the same search, the export's size, and the seconds to translate the 1,000
lines (median of 3 runs in this process; every engine batches lines of similar length). The
export's graphs run twice: by its driver (OnnxTranslator) and as `nmt translate -c DIR`'s engine. The
float32 export also in batches of 32 lines (against the recipe's decode.max_tokens source tokens
a batch) and, for beam search, with the encoder side repeated per beam (as an export written
before onnx_config.json's "encoder_side" is read), against sharing it between a sentence's beams. Writes
experiments/exports/results/onnx_runtime.json.
With --directions, a multilingual model's directions are measured alike (one export, the
driver made for each direction), each against its own references.

    python -m experiments.exports.onnx_runtime [-c runs/demo/checkpoints/best.pt]
    python -m experiments.exports.onnx_runtime -c runs/multi30k_en_many/checkpoints/best.pt \
        --recipe recipes/multi30k_en_many.yaml --directions en-de,en-fr,en-cs --quantizations float32 \
        --out onnx_multilingual.json
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from experiments.shared.demo_model import chosen_directions, demo_test_set, directions_parser, score
from nmt.data.corpus import read_lines
from nmt.decode.engines.engine import load_engine
from nmt.decode.text.casing import hypothesis_text
from nmt.decode.translate import decode_settings, translate_lines
from nmt.export import export_checkpoint
from nmt.decode.onnx_translator import OnnxTranslator
from nmt.info import checkpoint_info
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
AS_WRITTEN = ["decode.split_sentences=false", "decode.normalize_case=false", "decode.copy_verbatim=false"]
# Each search: nmt's settings, and the ONNX translator's beam size (None: the recipe's, as exported).
SEARCHES = {"greedy": (["decode.beam_size=1", *AS_WRITTEN], 1),
            "beam": (AS_WRITTEN, None)}


def timed(translate, repeats: int = 3) -> tuple[list[str], list[float]]:
    seconds, out = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        out = translate()
        seconds.append(round(time.perf_counter() - start, 3))
    return out, seconds


def direction_systems(checkpoint: Path, exports: dict, src: str, tgt: str, sources: list[str],
                      references: list[str], threads: int, search: str) -> dict:
    """Each engine's outputs for one direction and search: BLEU, lines identical to nmt's, size,
    seconds. `exports`: {label: {"onnx" | "ctranslate2": (directory, bytes)}}."""
    systems = {}
    settings, onnx_beams = SEARCHES[search]
    own = load_engine([checkpoint], src_lang=src, tgt_lang=tgt)
    cfg = decode_settings(own.recipe, None, {}, settings)
    nmt_outputs, seconds = timed(lambda: [hypothesis_text(own.tgt_tokenizer, h[0]) for h in translate_lines(own, sources, cfg)])

    def record(name: str, outputs: list[str], seconds: list[float], size: int | None) -> None:
        systems[name] = {"seconds": seconds, "median_seconds": statistics.median(seconds),
                         "identical_to_nmt": sum(a == b for a, b in zip(outputs, nmt_outputs)),
                         "megabytes": None if size is None else round(size / 1e6, 1), **score(outputs, references)}
        print(f"{src}-{tgt}", search, name, systems[name], flush=True)

    record("nmt_torch_float32", nmt_outputs, seconds, None)
    for label, exported in exports.items():
        onnx = OnnxTranslator(exported["onnx"][0], threads=threads, src_lang=src, tgt_lang=tgt)
        outputs, seconds = timed(lambda: onnx.translate(sources, beam_size=onnx_beams))
        record(f"onnxruntime_{label}", outputs, seconds, exported["onnx"][1])
        if label == "float32":  # batches of 32 lines, as the translator batched before decode.max_tokens
            outputs, seconds = timed(lambda: onnx.translate(sources, batch_size=32, beam_size=onnx_beams))
            record("onnxruntime_float32_batches_of_32_lines", outputs, seconds, exported["onnx"][1])
        if search == "beam" and label == "float32":  # the encoder side repeated per beam, as older exports take it
            onnx.graphs.shared = False
            outputs, seconds = timed(lambda: onnx.translate(sources, beam_size=onnx_beams))
            record("onnxruntime_float32_encoder_side_per_row", outputs, seconds, exported["onnx"][1])
        engine = load_engine([exported["onnx"][0]], threads=threads, src_lang=src, tgt_lang=tgt)  # nmt translate -c DIR
        outputs, seconds = timed(lambda: [hypothesis_text(engine.tgt_tokenizer, h[0])
                                          for h in translate_lines(engine, sources, cfg)])
        record(f"nmt_onnx_engine_{label}", outputs, seconds, exported["onnx"][1])
        ct2 = load_engine([exported["ctranslate2"][0]], threads=threads, src_lang=src, tgt_lang=tgt)
        outputs, seconds = timed(lambda: [hypothesis_text(ct2.tgt_tokenizer, h[0])
                                          for h in translate_lines(ct2, sources, cfg)])
        record(f"ctranslate2_{label}", outputs, seconds, exported["ctranslate2"][1])
    return systems


def main() -> None:
    args = directions_parser("onnx_runtime.json").parse_args()
    checkpoint, sources, _ = demo_test_set(args)
    info = checkpoint_info(checkpoint)
    directions = chosen_directions(args, checkpoint)
    with tempfile.TemporaryDirectory() as tmp:
        exports = {}
        for label in args.quantizations.split(","):
            quantization = None if label == "float32" else label
            exports[label] = {engine: (Path(tmp) / f"{engine}_{label}", export_checkpoint(
                checkpoint, Path(tmp) / f"{engine}_{label}", engine, quantization)["bytes"])
                for engine in ("onnx", "ctranslate2")}
        results = {f"{src}-{tgt}": {search: direction_systems(
            checkpoint, exports, src, tgt, sources, list(read_lines(Path(f"{args.test}.{tgt}.gz"))), args.threads, search)
            for search in SEARCHES} for src, tgt in directions}
    beam = decode_settings(load_engine([checkpoint]).recipe, None, {}, SEARCHES["beam"][0])
    write_json(RESULTS / args.out, {
        "checkpoint": str(checkpoint), "updates": info["step"], "training_minutes": info["training_minutes"],
        "test": args.test, "sentences": len(sources), "threads": args.threads,
        "searches": {"greedy": f"beam_size 1, no_repeat_ngram_size {beam.no_repeat_ngram_size}",
                     "beam": f"the recipe's: beam_size {beam.beam_size}, length_penalty {beam.length_penalty}, "
                             f"patience {beam.patience}, no_repeat_ngram_size {beam.no_repeat_ngram_size}"},
        "directions": results})


if __name__ == "__main__":
    main()
