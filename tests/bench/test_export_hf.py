"""Exporting a Hugging Face translation dataset to text files, and the WMT14 stand-in built for it."""

import gzip
import subprocess
import sys

import pytest

from bench.wmt14_standin import build
from tools import export_hf
from nmt.errors import NmtError
from tests.conftest import ROOT, optional_module

# A core dependency, always there where the suite runs; the GPU machine lacks it.
datasets, pytestmark = optional_module("datasets")

PAIRS = [{"de": "Ein Hund.", "en": "A dog."}, {"de": "Zwei\nKatzen.", "en": "Two cats."}, {"de": "", "en": "Empty."}]


def save(tmp_path, rows_by_split, name="corpus"):
    folder = tmp_path / name
    datasets.DatasetDict({split: datasets.Dataset.from_list(rows) for split, rows in rows_by_split.items()}
                         ).save_to_disk(str(folder))
    return folder


def lines(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


def test_export_writes_every_split_and_keeps_one_line_per_row(tmp_path):
    rows = [{"translation": p} for p in PAIRS]
    folder = save(tmp_path, {"train": rows, "validation": rows[:1], "test": rows[1:]})
    out = tmp_path / "text"
    assert export_hf.export(str(folder), None, out, "en", "de") == {"train": 3, "valid": 1, "test": 2}
    assert lines(out / "train.de.gz") == ["Ein Hund.", "Zwei Katzen.", ""]
    assert lines(out / "test.en.gz") == ["Two cats.", "Empty."]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"{s}.{lang}.gz" for s in ("train", "valid", "test") for lang in ("en", "de"))  # no scratch left


def test_a_dataset_without_translation_column_or_language_is_a_one_line_error(tmp_path):
    plain = save(tmp_path, {"train": [{"en": "A dog.", "de": "Ein Hund."}]}, "plain")
    with pytest.raises(NmtError, match=r"\(train\): no 'translation' column \(columns: en, de\)"):
        export_hf.export(str(plain), None, tmp_path / "a", "en", "de")
    french = save(tmp_path, {"train": [{"translation": {"en": "A dog.", "fr": "Un chien."}}]}, "fr")
    result = subprocess.run([sys.executable, "-m", "tools.export_hf", str(french), str(tmp_path / "b"),
                             "--src", "en", "--tgt", "de"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [f"error: {french} (train): row 1 has no 'de' text (it has: en, fr)"]
    assert not (tmp_path / "b" / "train.en.gz").exists()
    missing = subprocess.run([sys.executable, "-m", "tools.export_hf", str(tmp_path / "nothing-here"), "x",
                              str(tmp_path / "c"), "--src", "en", "--tgt", "de"], capture_output=True, text=True, cwd=ROOT)
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1


def test_an_interrupted_export_leaves_no_marker_and_a_rerun_starts_anew(tmp_path, monkeypatch):
    rows = [{"translation": p} for p in PAIRS]
    folder = save(tmp_path, {"train": rows, "validation": rows, "test": rows})
    out = tmp_path / "text"
    write = export_hf._write_split

    def cut_short(data, where, *args):
        if "(test)" in where:
            raise KeyboardInterrupt
        return write(data, where, *args)

    monkeypatch.setattr(export_hf, "_write_split", cut_short)
    with pytest.raises(KeyboardInterrupt):
        export_hf.export(str(folder), None, out, "en", "de")
    assert not (out / "train.en.gz").exists() and not (out / "train.de.gz").exists()  # Make's marker is absent
    (out / ".export.partial" / "train.en.gz").write_bytes(b"half-written")
    monkeypatch.setattr(export_hf, "_write_split", write)
    export_hf.export(str(folder), None, out, "en", "de")
    assert lines(out / "train.en.gz") == ["A dog.", "Two cats.", "Empty."]
    assert not (out / ".export.partial").exists()


def test_ctrl_c_during_an_export_is_one_line(tmp_path, monkeypatch, capsys):
    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(export_hf, "export", interrupted)
    with pytest.raises(SystemExit) as stop:
        export_hf.main(["some/corpus", str(tmp_path / "out"), "--src", "en", "--tgt", "de"])
    assert stop.value.code == 130
    assert capsys.readouterr().err.strip().splitlines() == [
        f"interrupted: nothing was moved into {tmp_path / 'out'}; run again to export anew"]


def test_the_wmt14_standin_has_the_hub_schema_and_distinct_rows(tmp_path):
    summary = build(ROOT / "data" / "multi30k", tmp_path / "standin",
                    {"train": 40_000, "validation": 300, "test": 303})
    corpus = datasets.load_from_disk(str(tmp_path / "standin"))
    assert {split: len(data) for split, data in corpus.items()} == {"train": 40_000, "validation": 300, "test": 303}
    assert corpus["train"].features["translation"] == datasets.Translation(languages=["de", "en"])
    train = corpus["train"]["translation"]
    assert len({(t["en"], t["de"]) for t in train}) >= 40_000 - 10  # Multi30k itself repeats a few pairs
    assert summary["validation"]["mean_words_en"] > 20  # joined sentences, news-like lengths
    out = tmp_path / "text"
    assert export_hf.export(str(tmp_path / "standin"), None, out, "en", "de") == {"train": 40_000, "valid": 300, "test": 303}
    assert not set(lines(out / "test.en.gz")) & set(lines(out / "train.en.gz"))
