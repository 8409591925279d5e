"""The demo model as an Argos Translate package (`make bench-argos`): installed into the real
argostranslate (offline: its data folders in a temporary one, sentences split by the package's
blank spaCy pipeline under ARGOS_CHUNK_TYPE=SPACY), it translates test_2016_flickr line by line,
as argostranslate's own API is called, on the package's own weights (ARGOS_COMPUTE_TYPE=default).
Beside it, nmt translates the same lines with the same CTranslate2 model and Argos's decode
settings (beam 4, length penalty 0.2, patience 1; nmt's sentence splitting, case and verbatim
handling off, which Argos lacks), and with the recipe's own. For each: BLEU, the lines identical to Argos's, and the seconds for the 1,000
lines (2 threads; Argos's include its sentence splitting, one line per call). float32 and int8.
Writes experiments/exports/results/argos_package.json.

    python -m experiments.exports.argos_package [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_test_set, score
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
argostranslate.package.install_from_path(sys.argv[1])
languages = {l.code: l for l in argostranslate.translate.get_installed_languages()}
translation = languages["en"].get_translation(languages["de"])
lines = json.loads(open(sys.argv[2]).read())
start = time.perf_counter()
outputs = [translation.translate(line) for line in lines]
print(json.dumps({"seconds": round(time.perf_counter() - start, 2), "outputs": outputs}))
"""


def through_argos(package: Path, lines: list[str], folder: Path, threads: int) -> dict:
    """argostranslate's outputs for `lines` (a process of its own, offline), and its seconds."""
    (folder / "lines.json").write_text(json.dumps(lines))
    env = {**os.environ, "HOME": str(folder), "XDG_DATA_HOME": str(folder / "data"),
           "XDG_CACHE_HOME": str(folder / "cache"), "XDG_CONFIG_HOME": str(folder / "config"),
           "ARGOS_CHUNK_TYPE": "SPACY", "ARGOS_DEVICE_TYPE": "cpu",
           "ARGOS_COMPUTE_TYPE": "default"}  # the package's own weights (Argos's "auto" picks int8 where the CPU has it)
    run = subprocess.run([sys.executable, "-c", ARGOS, str(package), str(folder / "lines.json"), str(threads)],
                         env=env, capture_output=True, text=True, timeout=1800)
    if run.returncode != 0:
        raise SystemExit(f"argostranslate failed: {run.stderr[-2000:]}")
    return json.loads(run.stdout.splitlines()[-1])


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    systems = {}
    with tempfile.TemporaryDirectory() as tmp:
        for quantization in (None, "int8"):
            label = quantization or "float32"
            folder = Path(tmp) / label
            folder.mkdir()
            summary = export_checkpoint(checkpoint, folder / "en_de.argosmodel", "argos", quantization)
            argos = through_argos(Path(summary["file"]), sources, folder, args.threads)
            systems[f"argostranslate_{label}"] = {"seconds": argos["seconds"], "megabytes": round(summary["bytes"] / 1e6, 1),
                                                  **score(argos["outputs"], references)}
            export_checkpoint(checkpoint, folder / "ct2", "ctranslate2", quantization)
            engine = load_engine([folder / "ct2"], threads=args.threads)
            for name, cfg in (("argos_settings", engine.recipe.decode.model_copy(update=ARGOS_DECODING | ARGOS_TEXT)),
                              ("recipe_settings", engine.recipe.decode)):
                start = time.perf_counter()
                outputs = [hypothesis_text(engine.tgt_tokenizer, h[0]).replace("_", " ") if name == "argos_settings"
                           else hypothesis_text(engine.tgt_tokenizer, h[0]) for h in translate_lines(engine, sources, cfg)]
                seconds = round(time.perf_counter() - start, 2)
                systems[f"nmt_ctranslate2_{label}_{name}"] = {
                    "seconds": seconds, "identical_to_argostranslate": sum(a == b for a, b in zip(outputs, argos["outputs"])),
                    **score(outputs, references)}
            for name in (f"argostranslate_{label}", f"nmt_ctranslate2_{label}_argos_settings",
                         f"nmt_ctranslate2_{label}_recipe_settings"):
                print(name, systems[name], flush=True)
    write_json(RESULTS / "argos_package.json", {
        "checkpoint": str(checkpoint), "updates": checkpoint_info(checkpoint)["step"], "test": args.test,
        "threads": args.threads, "lines": len(sources), "argos_decoding": ARGOS_DECODING | ARGOS_TEXT,
        "sentence_splitting": "the package's blank spaCy pipeline with spaCy's sentencizer (ARGOS_CHUNK_TYPE=SPACY)",
        "systems": systems})


if __name__ == "__main__":
    main()
