"""`nmt export --format argos`: packages of a bilingual model, of one direction of multilingual
models (a language token in front of the source, as a T5 import may have it, forced first in the
output, or both, as imported NLLB-200 and mBART-50 have them) install into the real argostranslate
(in a process of its own, offline, with its data folders in a temporary one), and each
translates every line as nmt's CTranslate2 engine does with Argos's decode settings; what Argos
cannot carry is a one-line error that writes nothing."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile

import pytest
from typer.testing import CliRunner

from tests.conftest import TINY_DATA, optional_module, trained_once, variant_checkpoint
from nmt.cli import app
from nmt.decode.engines.engine import load_engine
from nmt.decode.text.casing import hypothesis_text
from nmt.decode.translate import translate_lines
from nmt.errors import NmtError
from nmt.export import export_checkpoint
from nmt.export.argos import ARGOS_DECODING

argostranslate, pytestmark = optional_module("argostranslate")  # extra argos (in dev)

LINES = [line for name in ("valid.en", "train.en") for line in (TINY_DATA / name).read_text().splitlines()][:24]

ARGOS = """
import json, sys
import argostranslate.package, argostranslate.translate
jobs = json.loads(sys.argv[1])  # [package, from_code, to_code, lines] each
for package, *_ in jobs:
    argostranslate.package.install_from_path(package)
languages = {l.code: l for l in argostranslate.translate.get_installed_languages()}
print(json.dumps({"installed": sorted(languages),
                  "outputs": [[languages[src].get_translation(languages[tgt]).translate(line) for line in lines]
                              for _, src, tgt, lines in jobs]}))
"""
# A package per kind of model, as (the checkpoint's fixture, its direction, the codes Argos names it by).
PACKAGES = {"bilingual": ("en", "de", "en", "de"), "target_token": ("en", "xb", "en", "xb"),
            "source_token": ("en", "xa", "en", "xa"), "nllb": ("eng_Latn", "fra_Latn", "en", "fr"),
            "t5": ("de", "en", "de", "en"), "mbart": ("de_DE", "fr_XX", "de", "fr")}
# (No package from French: spaCy compiles its French tokenizer exceptions in 3 s, in the test's
# process and again in Argos's, where any other language's take a tenth of a second.)


def argos_outputs(jobs: list, home) -> dict:
    """What the real argostranslate, in a process of its own, offline, installs and translates:
    `jobs` of [package, from_code, to_code, lines], all installed before any is translated."""
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "cache"),
           "XDG_CONFIG_HOME": str(home / "config"), "ARGOS_CHUNK_TYPE": "SPACY", "ARGOS_DEVICE_TYPE": "cpu",
           "ARGOS_COMPUTE_TYPE": "default"}  # the package's float32 weights, as nmt's export is read
    run = subprocess.run([sys.executable, "-c", ARGOS, json.dumps(jobs)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def installed(trained_tiny, toy_corpus, tmp_path_factory):
    """{kind: (checkpoint, package metadata, what export printed, Argos's outputs)} for PACKAGES'
    six models, their packages installed into one argostranslate: the tiny en→de model; the toy
    en→{xa, xb} model with the target's token forced first in the output (data.language_token:
    target) and the one with it in front of the source (source); imported NLLB-200 (both),
    MADLAD-400's T5 (source) and mBART-50 (both, learned positions) layouts, random weights."""
    from tests.export.test_import_m2m100 import build_directory
    from tests.export.test_import_mbart import build_mbart50
    from tests.export.test_import_t5 import build_t5

    if importlib.util.find_spec("transformers") is None:
        pytest.skip("the NLLB layout is built with transformers (extra hf, in dev)")
    root = tmp_path_factory.mktemp("argos")
    toy = ("train.max_steps=240", "train.valid_every=120", "train.valid_bleu_sentences=8")  # as tests/languages'
    nllb = root / "nllb.pt"
    # Random weights rarely end an output: positions for Argos's 256 output tokens
    imported = CliRunner().invoke(app, ["import", str(build_directory(root, "nllb", positions=320)), "-o", str(nllb)])
    assert imported.exit_code == 0, imported.output
    # MADLAD-400's layout, its codes control pieces: a tokenizer reads them apart from the text, with
    # no word boundary ▁ in front, so one token goes before the source, as Argos puts it (MADLAD's
    # own, read as text after a ▁, are refused: tests/export/test_import_t5.py)
    t5 = root / "t5.pt"
    imported = CliRunner().invoke(app, ["import", str(build_t5(root, control_codes=True)), "-o", str(t5), "--src-lang",
                                        "en", "--tgt-lang", "de"])
    assert imported.exit_code == 0, imported.output
    mbart = root / "mbart50.pt"
    imported = CliRunner().invoke(app, ["import", str(build_mbart50(root, positions=320)), "-o", str(mbart)])
    assert imported.exit_code == 0, imported.output
    checkpoints = {"bilingual": trained_tiny.out / "checkpoints" / "best.pt",
                   "target_token": trained_once(tmp_path_factory, "data.language_token=target", *toy,
                                                toy_corpus=toy_corpus).out / "checkpoints" / "best.pt",
                   "source_token": trained_once(tmp_path_factory, *toy, toy_corpus=toy_corpus).out / "checkpoints" / "best.pt",
                   "nllb": nllb, "t5": t5, "mbart": mbart}
    summaries, printed, jobs = {}, {}, []
    for kind, (src, tgt, from_code, to_code) in PACKAGES.items():
        out = root / f"{kind}.argosmodel"
        result = CliRunner().invoke(app, ["export", str(checkpoints[kind]), "-o", str(out), "--format", "argos",
                                          "--src-lang", src, "--tgt-lang", tgt])
        assert result.exit_code == 0, result.output
        printed[kind] = result.output
        with zipfile.ZipFile(out) as archive:
            summaries[kind] = json.loads(archive.read(f"translate-{from_code}_{to_code}-1_0/metadata.json"))
        jobs.append([str(out), from_code, to_code, LINES])
    got = argos_outputs(jobs, root / "home")
    assert got["installed"] == ["de", "en", "fr", "xa", "xb"]  # each package's two codes
    return {kind: (checkpoints[kind], summaries[kind], printed[kind], outputs) for kind, outputs in zip(PACKAGES, got["outputs"])}


def nmt_outputs(checkpoint, src: str, tgt: str, tmp_path) -> list[str]:
    """What nmt's CTranslate2 engine translates LINES into, from the checkpoint's plain export, with Argos's
    decode settings."""
    export_checkpoint(checkpoint, tmp_path / "ct2")
    engine = load_engine([tmp_path / "ct2"], src_lang=src, tgt_lang=tgt)
    # the lines are English, which the t5 package's German-English model takes as its target language:
    # Argos translates them all the same, so nmt is asked to (decode.keep_target_language off)
    cfg = engine.recipe.decode.model_copy(update=ARGOS_DECODING | {"keep_target_language": False})
    return [hypothesis_text(engine.tgt_tokenizer, h[0]).replace("_", " ") for h in translate_lines(engine, LINES, cfg)]


@pytest.mark.parametrize("kind", list(PACKAGES))
def test_argostranslate_installs_each_package_and_translates_as_nmt(installed, kind, tmp_path):
    """Each package translates every line as nmt does, in its direction: the source's language
    token put in front by the package's model itself, the target's forced by Argos."""
    checkpoint, metadata, printed, outputs = installed[kind]
    src, tgt, from_code, to_code = PACKAGES[kind]
    assert (metadata["from_code"], metadata["to_code"]) == (from_code, to_code)
    assert f"({src}-{tgt}{'' if src == from_code else f', as {from_code}-{to_code}'}, float32)" in printed
    # the tiny models' 128 positions, not the imports' (320; T5's relative positions), are fewer than Argos's 256
    assert ("note: Argos decodes up to 256 tokens and the model has 128 positions" in printed) == (
        kind not in ("nllb", "t5", "mbart")), printed
    assert metadata.get("target_prefix") == {"target_token": "<2xb>", "nllb": "<2fra_Latn>", "mbart": "<2fr_XX>"}.get(kind)
    if kind == "bilingual":
        assert (metadata["from_name"], metadata["to_name"]) == ("English", "German")
    expected = nmt_outputs(checkpoint, src, tgt, tmp_path)
    # Argos decodes with sentencepiece alone, keeping the space of a lone "▁" piece at the end or
    # before a word, which nmt's output text takes out (nmt.data.tokenizer.output_text)
    assert [" ".join(out.split()) for out in outputs] == expected
    assert sum(out.strip() != "" for out in expected) == len(LINES)
    marker = {"target_token": "Beta", "source_token": "Alpha"}.get(kind)
    if marker:  # the toy model answers in the package's language (each of its 24 lines is one it trained on)
        assert sum(out.split()[0] == marker for out in outputs) >= 0.9 * len(LINES), outputs[:3]


def test_what_argos_cannot_carry_is_a_one_line_error_and_writes_nothing(trained_tiny, tmp_path_factory, tmp_path):
    separate = variant_checkpoint(tmp_path_factory, trained_tiny, (
        "tokenizer.joint=false", "model.share_embeddings=false", "model.tie_output=false"))
    out = tmp_path / "separate.argosmodel"
    with pytest.raises(NmtError, match="one sentencepiece model, and this model has one per side"):
        export_checkpoint(separate, out, "argos")
    with pytest.raises(NmtError, match="a file ending in .argosmodel"):
        export_checkpoint(trained_tiny.out / "checkpoints" / "best.pt", tmp_path / "model.zip", "argos")
    tiny = trained_tiny.out / "checkpoints" / "best.pt"
    with pytest.raises(NmtError, match="--tgt-lang fr: the model translates into de only"):
        export_checkpoint(tiny, out, "argos", tgt_lang="fr")
    with pytest.raises(NmtError, match="a ctranslate2 export translates every direction"):
        export_checkpoint(tiny, tmp_path / "ct2", src_lang="en")
    out.write_bytes(b"the user's file")
    with pytest.raises(NmtError, match="already exists"):
        export_checkpoint(trained_tiny.out / "checkpoints" / "best.pt", out, "argos")
    assert out.read_bytes() == b"the user's file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["separate.argosmodel"]


def test_a_missing_extra_is_named_and_nothing_is_written(trained_tiny, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from tests.conftest import one_line_error
    from nmt.cli import app

    monkeypatch.setitem(sys.modules, "spacy", None)  # import spacy now raises ImportError
    out = tmp_path / "en_de.argosmodel"
    one_line_error(CliRunner().invoke(app, ["export", str(trained_tiny.out / "checkpoints" / "best.pt"), "--format",
                                            "argos", "-o", str(out)]), "pip install 'nmt[argos]'")
    assert list(tmp_path.iterdir()) == []


def test_a_package_names_its_languages_as_argos_does():
    from nmt.export.argos import argos_code

    assert [argos_code(code) for code in ("en", "eng", "eng_Latn", "deu_Latn", "zho_Hans", "zho_Hant", "xa", "kbd_Cyrl")] == [
        "en", "en", "en", "de", "zh", "zho_Hant", "xa", "kbd_Cyrl"]
