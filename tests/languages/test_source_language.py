"""--src-lang auto (nmt.data.source_language): which languages a line may be read as, the choice
among them, and what the identifier cannot tell. A model translating with the identified
languages' tokens is test_import_m2m100.py's (an imported NLLB-200 / M2M-100 layout)."""

from __future__ import annotations

import sys

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.config import DataConfig
from nmt.data.source_language import SourceGuess, readers
from nmt.errors import NmtError
from tests.conftest import one_line_error

TRAINED = DataConfig(src_lang="en", tgt_lang="de", valid="v", language_token="both",
                     train=[{"path": "a", "src_lang": "en", "tgt_lang": "de"},
                            {"path": "b", "src_lang": "fr", "tgt_lang": "de"},
                            {"path": "c", "src_lang": "en", "tgt_lang": "fr"}])
IMPORTED = DataConfig(src_lang="eng_Latn", tgt_lang="deu_Latn", train="t", valid="v", language_token="both",
                      languages=["deu_Latn", "eng_Latn", "fra_Latn", "zho_Hans", "zho_Hant", "xyz_Latn"])


def test_the_readers_are_the_trained_directions_sources_or_every_language_of_an_imported_model():
    assert readers(TRAINED, "de") == ["en", "fr"] and readers(TRAINED, "fr") == ["en"]
    assert readers(TRAINED, "fr", zero_shot=True) == ["en", "fr"]
    assert readers(TRAINED, "xx") == []
    assert readers(IMPORTED, "fra_Latn") == sorted(IMPORTED.languages)


def test_each_text_is_read_as_its_most_probable_reader():
    guess = SourceGuess(TRAINED)
    assert guess.language("Un homme lit le journal dans le parc.", "de") == "fr"
    assert guess.language("A man reads the newspaper in the park.", "de") == "en"
    assert guess.language("Ein Mann liest im Park die Zeitung.", "de") in ("en", "fr")  # never a non-reader
    assert guess.language("<b>Un homme</b> lit le journal.", "de") == "fr"  # tags left out
    assert guess.language("42 -- 17", "de") == "en"  # no letters: the recipe's source
    assert guess.language("Un homme lit le journal.", "fr") == "en"  # one reader: no identifier asked
    assert guess.notes == []
    assert guess.identify("Un homme lit le journal dans le parc.", "de") == ("fr", None)
    found, other = guess.identify("El hombre lee el periódico en el parque.", "de")  # no reader's language
    assert found in ("en", "fr") and other[0] == "es" and other[1] > 0.5


def test_readers_the_identifier_cannot_tell_apart_or_does_not_know_are_noted():
    guess = SourceGuess(IMPORTED)
    assert guess.language("Un homme lit le journal dans le parc.", "deu_Latn") == "fra_Latn"
    assert guess.language("一个男人在公园里看报纸。", "deu_Latn") == "zho_Hans"
    assert guess.notes == ["--src-lang auto: the identifier does not know xyz_Latn: no line into deu_Latn is read as in them",
                           "--src-lang auto: the identifier takes these for another reader's language: "
                           "zho_Hant (read as zho_Hans)"]
    with pytest.raises(NmtError, match="--src-lang auto: the model translates into xx from no language"):
        SourceGuess(TRAINED).language("A man.", "xx")
    unknown = DataConfig(src_lang="xyz", tgt_lang="qqq", train="t", valid="v", language_token="both", languages=["xyz", "qqq"])
    with pytest.raises(NmtError, match=r"knows none of the source languages the model translates into qqq from \(qqq, xyz\)"):
        SourceGuess(unknown).language("A man.", "qqq")


def test_without_py3langid_several_readers_are_a_one_line_error_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "py3langid.langid", None)  # its import fails
    with pytest.raises(NmtError, match=r"--src-lang auto \(with several source languages: en, fr\) needs py3langid: "
                                       r"pip install 'nmt\[langid\]'"):
        SourceGuess(TRAINED).language("A man.", "de")
    assert SourceGuess(TRAINED).language("A man.", "fr") == "en"  # one reader needs none


def test_likelihood_names_its_source_instead(tmp_path):
    result = CliRunner().invoke(app, ["likelihood", "-c", str(tmp_path / "none.pt"), "--source", str(tmp_path / "a"),
                                      "--target", str(tmp_path / "b"), "--src-lang", "auto"])
    one_line_error(result, "--src-lang auto is nmt translate's")
