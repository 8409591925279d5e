"""The demo model as an Argos Translate package (`make bench-argos`): installed into the real
argostranslate (offline: its data folders in a temporary one, sentences split by the package's
blank spaCy pipeline under ARGOS_CHUNK_TYPE=SPACY), it translates test_2016_flickr line by line,
as argostranslate's own API is called, on the package's own weights (ARGOS_COMPUTE_TYPE=default).
Beside it, nmt translates the same lines with the same CTranslate2 model and Argos's decode
settings (beam 4, length penalty 0.2, patience 1; nmt's sentence splitting, case and verbatim
handling off, which Argos lacks), and with the recipe's own. For each: BLEU, the lines identical
to Argos's, and the seconds for the 1,000 lines (2 threads; Argos's include its sentence
splitting, one line per call). float32 and int8.

With --directions, a multilingual model's directions (one package each, all installed into one
argostranslate) are measured alike, each against its own references.

    python -m experiments.exports.argos_package [-c runs/demo/checkpoints/best.pt]
    python -m experiments.exports.argos_package -c runs/multi30k_en_many/checkpoints/best.pt \
        --recipe recipes/multi30k_en_many.yaml --directions en-de,en-fr,en-cs --quantizations float32 \
        --out argos_multilingual.json
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from experiments.shared.demo_model import chosen_directions, demo_test_set, directions_parser, score
from nmt.data.corpus import read_lines
from nmt.decode.engines.engine import load_engine
from nmt.decode.text.casing import hypothesis_text
from nmt.decode.translate import translate_lines
from nmt.export import export_checkpoint
from nmt.export.argos import ARGOS_DECODING
from nmt.info import checkpoint_info
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
# What Argos does not do to text: nmt's own sentence splitting, case and verbatim handling, off
ARGOS_TEXT = {"split_sentences": False, "normalize_case": False, "copy_verbatim": False}
ARGOS = """
import json, sys, time
import argostranslate.package, argostranslate.settings, argostranslate.translate
argostranslate.settings.intra_threads = int(sys.argv[3])
jobs = json.loads(sys.argv[1])  # [package, from_code, to_code] each
for package, *_ in jobs:
    argostranslate.package.install_from_path(package)
languages = {l.code: l for l in argostranslate.translate.get_installed_languages()}
lines = json.loads(open(sys.argv[2]).read())
results = []
for _, src, tgt in jobs:
    translation = languages[src].get_translation(languages[tgt])
    start = time.perf_counter()
    outputs = [translation.translate(line) for line in lines]
    results.append({"seconds": round(time.perf_counter() - start, 2), "outputs": outputs})
print(json.dumps(results))
"""


def through_argos(packages: list[dict], lines: list[str], folder: Path, threads: int) -> list[dict]:
    """argostranslate's outputs for `lines` and its seconds, for each of `packages` (export summaries),
    all installed into one argostranslate (a process of its own, offline)."""
    (folder / "lines.json").write_text(json.dumps(lines))
    env = {**os.environ, "HOME": str(folder), "XDG_DATA_HOME": str(folder / "data"),
           "XDG_CACHE_HOME": str(folder / "cache"), "XDG_CONFIG_HOME": str(folder / "config"),
           "ARGOS_CHUNK_TYPE": "SPACY", "ARGOS_DEVICE_TYPE": "cpu",
           "ARGOS_COMPUTE_TYPE": "default"}  # the package's own weights (Argos's "auto" picks int8 where the CPU has it)
    jobs = [[p["file"], *p["codes"].split("-")] for p in packages]
    run = subprocess.run([sys.executable, "-c", ARGOS, json.dumps(jobs), str(folder / "lines.json"), str(threads)],
                         env=env, capture_output=True, text=True, timeout=3600)
    if run.returncode != 0:
        raise SystemExit(f"argostranslate failed: {run.stderr[-2000:]}")
    return json.loads(run.stdout.splitlines()[-1])


def main() -> None:
    args = directions_parser("argos_package.json").parse_args()
    checkpoint, sources, _ = demo_test_set(args)
    directions = chosen_directions(args, checkpoint)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label in args.quantizations.split(","):
            quantization = None if label == "float32" else label
            folder = Path(tmp) / label
            folder.mkdir()
            packages = [export_checkpoint(checkpoint, folder / f"{src}_{tgt}.argosmodel", "argos", quantization,
                                          src_lang=src, tgt_lang=tgt) for src, tgt in directions]
            argos = through_argos(packages, sources, folder, args.threads)
            export_checkpoint(checkpoint, folder / "ct2", "ctranslate2", quantization)
            for (src, tgt), package, through in zip(directions, packages, argos):
                references = list(read_lines(Path(f"{args.test}.{tgt}.gz")))
                systems = results.setdefault(f"{src}-{tgt}", {})
                systems[f"argostranslate_{label}"] = {"seconds": through["seconds"],
                                                      "megabytes": round(package["bytes"] / 1e6, 1),
                                                      **score(through["outputs"], references)}
                engine = load_engine([folder / "ct2"], threads=args.threads, src_lang=src, tgt_lang=tgt)
                for name, cfg in (("argos_settings", engine.recipe.decode.model_copy(update=ARGOS_DECODING | ARGOS_TEXT)),
                                  ("recipe_settings", engine.recipe.decode)):
                    start = time.perf_counter()
                    outputs = [hypothesis_text(engine.tgt_tokenizer, h[0]).replace("_", " ") if name == "argos_settings"
                               else hypothesis_text(engine.tgt_tokenizer, h[0]) for h in translate_lines(engine, sources, cfg)]
                    seconds = round(time.perf_counter() - start, 2)
                    systems[f"nmt_ctranslate2_{label}_{name}"] = {
                        "seconds": seconds,
                        "identical_to_argostranslate": sum(a == b for a, b in zip(outputs, through["outputs"])),
                        **score(outputs, references)}
                for name in (f"argostranslate_{label}", f"nmt_ctranslate2_{label}_argos_settings",
                             f"nmt_ctranslate2_{label}_recipe_settings"):
                    print(f"{src}-{tgt}", name, systems[name], flush=True)
    write_json(RESULTS / args.out, {
        "checkpoint": str(checkpoint), "updates": checkpoint_info(checkpoint)["step"], "test": args.test,
        "threads": args.threads, "lines": len(sources), "argos_decoding": ARGOS_DECODING | ARGOS_TEXT,
        "sentence_splitting": "the package's blank spaCy pipeline with spaCy's sentencizer (ARGOS_CHUNK_TYPE=SPACY)",
        "directions": results})


if __name__ == "__main__":
    main()
