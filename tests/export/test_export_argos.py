"""`nmt export --format argos`: the package installs into the real argostranslate (in a process of its
own, offline, with its data folders in a temporary one) and translates every line as nmt's
CTranslate2 engine does with Argos's decode settings; what Argos cannot carry is a one-line error
that writes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile

import pytest

from conftest import TINY_DATA, optional_module, variant_checkpoint
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
argostranslate.package.install_from_path(sys.argv[1])
languages = {l.code: l for l in argostranslate.translate.get_installed_languages()}
translation = languages["en"].get_translation(languages["de"])
print(json.dumps({"installed": sorted(languages),
                  "outputs": [translation.translate(line) for line in json.loads(sys.argv[2])]}))
"""


def argos_outputs(package, lines, home) -> dict:
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "cache"),
           "XDG_CONFIG_HOME": str(home / "config"), "ARGOS_CHUNK_TYPE": "SPACY", "ARGOS_DEVICE_TYPE": "cpu",
           "ARGOS_COMPUTE_TYPE": "default"}  # the package's float32 weights, as nmt's export is read
    run = subprocess.run([sys.executable, "-c", ARGOS, str(package), json.dumps(lines)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.splitlines()[-1])


def test_argostranslate_installs_the_package_and_translates_as_nmt(trained_tiny, tmp_path):
    checkpoint = trained_tiny.out / "checkpoints" / "best.pt"
    summary = export_checkpoint(checkpoint, tmp_path / "en_de.argosmodel", "argos")
    with zipfile.ZipFile(summary["file"]) as archive:
        names = archive.namelist()
        metadata = json.loads(archive.read("translate-en_de-1_0/metadata.json"))
    assert {"translate-en_de-1_0/sentencepiece.model", "translate-en_de-1_0/model/model.bin",
            "translate-en_de-1_0/spacy/config.cfg"} <= set(names)
    assert (metadata["from_code"], metadata["to_code"], metadata["from_name"], metadata["to_name"]) == (
        "en", "de", "English", "German")
    got = argos_outputs(summary["file"], LINES, tmp_path / "home")
    assert got["installed"] == ["de", "en"]

    export_checkpoint(checkpoint, tmp_path / "ct2")
    engine = load_engine([tmp_path / "ct2"])
    cfg = engine.recipe.decode.model_copy(update=ARGOS_DECODING)
    expected = [hypothesis_text(engine.tgt_tokenizer, h[0]).replace("_", " ") for h in translate_lines(engine, LINES, cfg)]
    # Argos decodes with sentencepiece alone, keeping the space of a lone "▁" piece at the end or
    # before a word, which nmt's output text takes out (nmt.data.tokenizer.output_text)
    assert [" ".join(out.split()) for out in got["outputs"]] == expected
    assert sum(out.strip() != "" for out in expected) == len(LINES)


def test_what_argos_cannot_carry_is_a_one_line_error_and_writes_nothing(trained_tiny, tmp_path_factory, tmp_path):
    separate = variant_checkpoint(tmp_path_factory, trained_tiny, (
        "tokenizer.joint=false", "model.share_embeddings=false", "model.tie_output=false"))
    out = tmp_path / "separate.argosmodel"
    with pytest.raises(NmtError, match="one sentencepiece model, and this model has one per side"):
        export_checkpoint(separate, out, "argos")
    with pytest.raises(NmtError, match="a file ending in .argosmodel"):
        export_checkpoint(trained_tiny.out / "checkpoints" / "best.pt", tmp_path / "model.zip", "argos")
    out.write_bytes(b"the user's file")
    with pytest.raises(NmtError, match="already exists"):
        export_checkpoint(trained_tiny.out / "checkpoints" / "best.pt", out, "argos")
    assert out.read_bytes() == b"the user's file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["separate.argosmodel"]


def test_a_missing_extra_is_named_and_nothing_is_written(trained_tiny, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from conftest import one_line_error
    from nmt.cli import app

    monkeypatch.setitem(sys.modules, "spacy", None)  # import spacy now raises ImportError
    out = tmp_path / "en_de.argosmodel"
    one_line_error(CliRunner().invoke(app, ["export", str(trained_tiny.out / "checkpoints" / "best.pt"), "--format",
                                            "argos", "-o", str(out)]), "pip install 'nmt[argos]'")
    assert list(tmp_path.iterdir()) == []
