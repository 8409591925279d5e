"""A checkpoint as an Argos Translate package (`.argosmodel`), which argostranslate and
LibreTranslate install and serve.

A package is a zip archive of one folder: `metadata.json` (languages, versions, description), the
CTranslate2 model in `model/` (nmt.export.ctranslate2), the sentencepiece model in
`sentencepiece.model` (Argos encodes and decodes with one: the tokenizer must be joint), a
README, and a sentence splitter. Every splitter argostranslate 1.11 uses fetches a model at run
time (MiniSBD, its default; Stanza; spaCy's xx_sent_ud_sm), so the package carries a blank spaCy
pipeline of the source language in `spacy/`, to which argostranslate adds spaCy's rule-based
sentencizer when ARGOS_CHUNK_TYPE=SPACY: sentences split offline (docs/serving.md).

A package translates one direction, named by ISO 639-1 codes where nmt knows the language (en
for eng_Latn: the codes Argos's own packages use, so that it can pivot between them). Of a
multilingual model (data.language_token; an imported NLLB-200, M2M-100 or mBART-50), Argos gives
CTranslate2 the source text alone, so the package's model itself puts the direction's source
token in front (CTranslate2's add_source_bos), and the metadata's `target_prefix` makes Argos
force the target token first in each output (as argostranslate 1.11 reads it). MADLAD-400 reads
two tokens in front, the word boundary ▁ and its code (data.language_token_as_text), which
CTranslate2 cannot add: refused, in one line.

Argos decodes with its own settings (ARGOS_DECODING: beam 4, length penalty 0.2, patience 1, no
n-gram blocking, 1 to 256 tokens, unknown tokens replaced) and turns "_" into spaces in its
outputs; `nmt translate` of the package's CTranslate2 model with those settings gives the same
lines (tested).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

import nmt
from nmt.checkpoint import open_checkpoint
from nmt.data.languages import check_direction, language_name, source_control_tokens, target_control_tokens, two_letter
from nmt.errors import NmtError
from nmt.export.ctranslate2 import EXPORT_INFO, SOURCE_SPM, TARGET_SPM, export_checkpoint

ARGOS_VERSION = "1.11"  # the argostranslate release whose package layout this writes
# What argostranslate 1.11 decodes with (argostranslate.translate.apply_packaged_translation)
# and CTranslate2's defaults under it: no n-gram blocking, at least one token, at most 256
ARGOS_DECODING = {"beam_size": 4, "length_penalty": 0.2, "patience": 1.0, "no_repeat_ngram_size": 0, "min_len": 1,
                  "max_len_a": 0.0, "max_len_b": 256}


def require_spacy():
    try:
        import spacy
    except ImportError:
        raise NmtError("an Argos package needs spaCy (its sentence splitter): pip install 'nmt[argos]'") from None
    return spacy


def argos_code(code: str) -> str:
    """A language's code in a package: its ISO 639-1 code where nmt's table knows it (en for en,
    eng or eng_Latn), else the model's own. Traditional Chinese keeps its own (zh is Simplified)."""
    return code if "Hant" in code else two_letter(code) or code


def export_argos(checkpoint: Path, out: Path, quantization: str | None = None, force: bool = False,
                 version: str = "1.0", src_lang: str | None = None, tgt_lang: str | None = None) -> dict:
    """Write `out` (an .argosmodel file) from `checkpoint`, translating `src_lang` into `tgt_lang`
    (default: the recipe's languages); nothing is left at `out` on failure."""
    out = Path(out)
    if out.suffix != ".argosmodel":
        raise NmtError(f"{out}: an Argos package is a file ending in .argosmodel")
    if out.is_dir():
        raise NmtError(f"{out}: exists and is a directory")
    if out.exists() and not force:
        raise NmtError(f"{out}: already exists (--force replaces it)")
    loaded = open_checkpoint(checkpoint, mapped=True)  # read once, as converted, and not kept
    recipe = loaded.recipe
    if not recipe.tokenizer.joint:
        raise NmtError(f"{checkpoint}: Argos encodes and decodes with one sentencepiece model, and this model has one "
                       "per side (tokenizer.joint: false); export it with --format ctranslate2")
    if recipe.data.language_token_as_text:
        raise NmtError(f"{checkpoint}: the source starts with two tokens, the word boundary and the language code "
                       "(data.language_token_as_text, MADLAD-400's), and Argos adds one; export it with --format "
                       "ctranslate2")
    src, tgt = check_direction(recipe.data, src_lang, tgt_lang, zero_shot=False)
    [source_token] = source_control_tokens(recipe.data, tgt, src) or [None]
    [target_token] = target_control_tokens(recipe.data, tgt) or [None]
    spacy = require_spacy()
    from_code, to_code = argos_code(src), argos_code(tgt)
    folder_name = f"translate-{from_code}_{to_code}-{version.replace('.', '_')}"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    except OSError as e:
        raise NmtError(f"{out}: cannot write there ({e.strerror or e})") from None
    partial = scratch / out.name
    try:
        package = scratch / folder_name
        summary = export_checkpoint(loaded, package / "model", quantization, source_start=source_token)
        (package / "model" / SOURCE_SPM).replace(package / "sentencepiece.model")
        for extra in (TARGET_SPM, EXPORT_INFO):  # the same model (joint), and nmt's own description
            (package / "model" / extra).unlink()
        _blank_pipeline(spacy, from_code).to_disk(package / "spacy")
        metadata = {
            "package_version": version, "argos_version": ARGOS_VERSION, "type": "translate",
            "from_code": from_code, "from_name": language_name(src), "to_code": to_code, "to_name": language_name(tgt),
            "description": f"{language_name(src)} to {language_name(tgt)}, trained with nmt {nmt.__version__} "
                           f"({summary['quantization']})",
            **({"target_prefix": target_token} if target_token else {}),
        }
        (package / "metadata.json").write_text(json.dumps(metadata, indent=2, ensure_ascii=False) + "\n")
        (package / "README.md").write_text(_readme(metadata, checkpoint, loaded.payload, (src, tgt), source_token))
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(package.rglob("*")):
                archive.write(path, path.relative_to(scratch))
        os.replace(partial, out)
    except OSError as e:
        raise NmtError(f"{out}: cannot write there ({e.strerror or e})") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    positions, longest = recipe.model.max_positions, ARGOS_DECODING["max_len_b"]
    notes = [f"Argos decodes up to {longest} tokens and the model has {positions} positions: an output that reaches "
             f"{positions} tokens stops Argos's translation with an error"] if positions < longest else []
    return {"file": str(out), "direction": f"{src}-{tgt}", "quantization": summary["quantization"],
            "bytes": out.stat().st_size, "package": folder_name, "codes": f"{from_code}-{to_code}", "notes": notes}


def _blank_pipeline(spacy, language: str):
    """A spaCy pipeline with the language's tokenizer rules and no trained component (spaCy's
    multilingual "xx" where it has none for the language)."""
    try:
        return spacy.blank(language)
    except (ImportError, OSError, ValueError, KeyError):
        return spacy.blank("xx")


def _readme(metadata: dict, checkpoint: Path, payload: dict, direction: tuple[str, str], source_token: str | None) -> str:
    step = payload.get("progress", {}).get("step")
    tokens = [f"the model puts {source_token} in front of each source"] if source_token else []
    tokens += [f"Argos forces {metadata['target_prefix']} first in each output"] if "target_prefix" in metadata else []
    return (f"# {metadata['from_name']} → {metadata['to_name']}\n\n"
            f"{metadata['description']}, from `{Path(checkpoint).name}`"
            + (f" after {step:,} updates" if step else "") + f" ({direction[0]}-{direction[1]}"
            + "".join(f"; {t}" for t in tokens) + ").\n\n"
            "Sentences are split by spaCy's rule-based sentencizer (blank pipeline in `spacy/`): "
            "set ARGOS_CHUNK_TYPE=SPACY, as the other splitters fetch models at run time.\n")

