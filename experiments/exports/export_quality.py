"""BLEU of an exported model beside nmt's own decoder (`make bench-export`).

Translates test_2016_flickr with the demo model (or -c CKPT) through nmt's own search and through
its CTranslate2 exports (float32 and int8), with the recipe's decode settings and with
length_penalty 0 (where both engines rank by log-probability), and scores each with sacreBLEU.
Writes experiments/exports/results/export_quality.json.

    python -m experiments.exports.export_quality [-c runs/demo/checkpoints/best.pt] [--recipe recipes/multi30k_en_de.yaml]
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import sacrebleu

from experiments.shared.demo_model import demo_parser, demo_test_set
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import translate_lines
from nmt.export import export_checkpoint
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    parser = demo_parser()
    args = parser.parse_args()
    ckpt, sources, references = demo_test_set(args)
    decode = load_recipe(Path(args.recipe)).decode

    engines, export_mb = {"nmt": load_engine([ckpt])}, {}
    for quantization in ("float32", "int8"):
        out = ckpt.parent.parent / f"ctranslate2_{quantization}"
        export_mb[quantization] = round(export_checkpoint(ckpt, out, quantization=quantization, force=True)["bytes"] / 1e6, 1)
        engines[f"ctranslate2_{quantization}"] = load_engine([out], threads=args.threads)

    report = {"checkpoint": str(ckpt), "test": args.test, "threads": args.threads,
              "decode": decode.model_dump(), "export_mb": export_mb, "runs": {}}
    for setting, cfg in (("recipe", decode), ("length_penalty_0", decode.model_copy(update={"length_penalty": 0.0}))):
        outputs = {}
        for name, engine in engines.items():
            start = time.perf_counter()
            hyps = translate_lines(engine, sources, cfg)
            seconds = time.perf_counter() - start
            outputs[name] = [engine.tgt_tokenizer.decode(h[0].tokens) for h in hyps]
            bleu = sacrebleu.corpus_bleu(outputs[name], [references])
            report["runs"][f"{name}/{setting}"] = {
                "bleu": round(bleu.score, 2), "length_ratio": round(bleu.sys_len / bleu.ref_len, 3),
                "seconds": round(seconds, 2),
                "identical_lines_to_nmt": sum(a == b for a, b in zip(outputs[name], outputs["nmt"]))}
            print(setting, name, json.dumps(report["runs"][f"{name}/{setting}"]), flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_json(RESULTS / "export_quality.json", report)


if __name__ == "__main__":
    main()
