"""A folder's translations kept up to date with their sources (nmt.decode.translation_record):
`-i FOLDER --update FOLDER` (translations beside their sources) and `-i SOURCES --update
TRANSLATED` (a folder of translations) translate what changed in a source since its translation
was made, and keep the rest of that translation as it stands, a reviewer's edits included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.folders import translate_folder
from nmt.decode.translation_record import RECORD_NAME, TranslationRecord, fingerprint, kept_translations
from nmt.errors import NmtError
from tests.conftest import one_line_error

PAGE = "# A dog\n\nA black dog runs.\n\nTwo men play in a park.\n\nA woman sings.\n"
NOTES = "A man rides a bike.\nA girl reads a book.\n"
MESSAGES = '{\n  "hello": "A dog runs.",\n  "bye": "Two cats sleep."\n}\n'
SOURCES = {"docs/en/guide.md": PAGE, "docs/en/notes.txt": NOTES, "locales/en.json": MESSAGES}


def _quiet(path):
    return lambda message: None


def _write(root: Path, files: dict[str, str]) -> None:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")


def _files(root: Path) -> dict[str, str]:
    return {str(path.relative_to(root)): path.read_text(encoding="utf-8") for path in root.rglob("*") if path.is_file()}


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (old, text)
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_unchanged_texts_keep_their_translations_lined_up_as_diff_lines_up_lines():
    before = tuple(map(fingerprint, ["x", "y", "x", "z"]))
    assert kept_translations(before, ["x", "x", "new", "z"], ["X1", "Y", "X2", "Z"]) == {0: "X1", 1: "X2", 3: "Z"}
    assert kept_translations(before, ["  x ", "y\nz"], ["X1", "Y", "X2", "Z"]) == {0: "X1"}  # (spaces aside)
    assert kept_translations(before, ["x"], ["X", "Y"]) is None  # a translation of fewer texts: not lined up
    assert fingerprint("a  dog\nruns") == fingerprint("a dog runs") != fingerprint("a cat runs")


def test_an_update_translates_what_changed_in_each_source_and_keeps_the_rest_and_the_reviewers_edits(
        translator, cfg, tmp_path):
    root = tmp_path / "site"
    _write(root, SOURCES)
    translate_folder(translator, root, None, cfg, _quiet)
    german = {"docs/en/guide.md": root / "docs/de/guide.md", "docs/en/notes.txt": root / "docs/de/notes.txt",
              "locales/en.json": root / "locales/de.json"}
    record = json.loads((root / RECORD_NAME).read_text(encoding="utf-8"))["translations"]
    assert record["docs/de/guide.md"] == {"source": "docs/en/guide.md",
                                          "texts": [fingerprint(t) for t in ("A dog", "A black dog runs.",
                                                                             "Two men play in a park.", "A woman sings.")]}
    assert record["locales/de.json"]["messages"] == {"hello": fingerprint("A dog runs."), "bye": fingerprint("Two cats sleep.")}
    # a reviewer's edits, then the sources change
    page = german["docs/en/guide.md"].read_text(encoding="utf-8").split("\n\n")
    _edit(german["docs/en/guide.md"], page[1], "Ein schwarzer Hund rennt (geprüft).")
    messages = json.loads(german["locales/en.json"].read_text(encoding="utf-8"))
    _edit(german["locales/en.json"], messages["hello"], "Ein Hund rennt (geprüft).")
    notes = german["docs/en/notes.txt"].read_text(encoding="utf-8").splitlines()
    _edit(root / "docs/en/guide.md", "Two men play in a park.", "A cat sleeps on a log.")
    _edit(root / "docs/en/notes.txt", "A girl reads a book.", "A boy sleeps.")
    _edit(root / "locales/en.json", "Two cats sleep.", "A man sleeps.")
    fresh = tmp_path / "fresh"  # the changed sources translated anew, for what the changed texts become
    translate_folder(translator, root, fresh, cfg, _quiet)

    report = translate_folder(translator, root, None, cfg, _quiet)
    assert sorted(map(str, report.written)) == ["docs/de/guide.md", "docs/de/notes.txt", "locales/de.json"]
    assert report.recorded and report.kept_texts == (3 + 1, 4 + 2) and report.kept == (1, 2)
    updated = german["docs/en/guide.md"].read_text(encoding="utf-8").split("\n\n")
    made_anew = (fresh / "docs/de/guide.md").read_text(encoding="utf-8").split("\n\n")
    assert updated == [page[0], "Ein schwarzer Hund rennt (geprüft).", made_anew[2], page[3]]
    assert made_anew[2] != page[2]
    assert german["docs/en/notes.txt"].read_text(encoding="utf-8").splitlines() == [
        notes[0], (fresh / "docs/de/notes.txt").read_text(encoding="utf-8").splitlines()[1]]
    assert json.loads(german["locales/en.json"].read_text(encoding="utf-8")) == {
        "hello": "Ein Hund rennt (geprüft).", "bye": json.loads((fresh / "locales/de.json").read_text(encoding="utf-8"))["bye"]}
    assert TranslationRecord.read(root).entries == TranslationRecord.read(fresh).entries  # made from the same sources
    files = _files(root)
    again = translate_folder(translator, root, None, cfg, _quiet)
    assert again.written == [] and not again.recorded and _files(root) == files


def test_a_translation_that_no_longer_lines_up_with_its_source_is_left_as_it_is_with_a_note(trained_tiny, tmp_path):
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    root = tmp_path / "site"
    _write(root, {"docs/en/guide.md": PAGE})
    runner = CliRunner()
    update = ["translate", "-c", checkpoint, "-i", str(root), "--update", str(root)]
    assert runner.invoke(app, update).exit_code == 0
    page = root / "docs/de/guide.md"
    paragraphs = page.read_text(encoding="utf-8").split("\n\n")
    _edit(page, f"{paragraphs[1]}\n\n{paragraphs[2]}", f"{paragraphs[1]} {paragraphs[2]}")  # a reviewer joined two
    _edit(root / "docs/en/guide.md", "A woman sings.", "A woman dances.")
    files = _files(root)
    result = runner.invoke(app, update)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "docs/de/guide.md: left as it is, though docs/en/guide.md changed since it was translated: it has 3 texts, " \
        "where the source it was translated from had 4" in said and "no translation written" in said, said
    assert _files(root) == files
    # without a record (made by hand, or the record removed): taken as made from the source as it is now
    (root / RECORD_NAME).unlink()
    result = runner.invoke(app, update)
    assert result.exit_code == 0 and "docs/de/guide.md: not in nmt-translations.json" in " ".join(result.output.split())
    assert _files(root) == files | {RECORD_NAME: (root / RECORD_NAME).read_text(encoding="utf-8")}
    assert TranslationRecord.read(root).entries["docs/de/guide.md"].texts == tuple(
        fingerprint(text) for text in ("A dog", "A black dog runs.", "Two men play in a park.", "A woman dances."))


@pytest.mark.parametrize("content, problem", [('{"translations": {\n  "a": [}', "line 2: not valid JSON"),
                                              ('["a"]', 'not a record of translations (no "translations" object)'),
                                              ('{"translations": {"docs/de/a.md": {"texts": []}}}',
                                               "the entry of docs/de/a.md is not a source and its texts' fingerprints")])
def test_a_record_that_is_not_one_is_a_one_line_error_and_nothing_is_written(trained_tiny, tmp_path, content, problem):
    root = tmp_path / "site"
    _write(root, {"docs/en/guide.md": PAGE, RECORD_NAME: content})
    with pytest.raises(NmtError, match="nmt-translations.json: " + problem.replace("(", r"\(").replace(")", r"\)")):
        TranslationRecord.read(root)
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    one_line_error(CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(root), "--update", str(root)]),
                   problem)
    assert sorted(_files(root)) == ["docs/en/guide.md", RECORD_NAME]


def test_a_folder_of_translations_is_brought_up_to_date_with_its_sources(trained_tiny, tmp_path):
    """`-i SOURCES --update TRANSLATED`, TRANSLATED an earlier `-o` of SOURCES file by file: what
    changed in a source translated (a reviewer's edit elsewhere kept), a new file translated, a
    copied file copied again only where its source changed (a translated picture kept); a folder
    whose translations go beside their sources is refused, pointing at the update in place."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    sources, translated = tmp_path / "book", tmp_path / "book.de"
    _write(sources, {"guide.md": PAGE, "notes.txt": NOTES})
    (sources / "dog.png").write_bytes(b"\x89PNG one")
    runner = CliRunner()
    assert runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(sources), "-o", str(translated)]).exit_code == 0
    assert TranslationRecord.read(translated).entries["dog.png"].copied is not None
    paragraphs = (translated / "guide.md").read_text(encoding="utf-8").split("\n\n")
    _edit(translated / "guide.md", paragraphs[1], "Ein schwarzer Hund rennt (geprüft).")
    (translated / "dog.png").write_bytes(b"\x89PNG eins")  # a picture of its own for the translation
    _edit(sources / "guide.md", "A woman sings.", "A woman dances.")
    _edit(sources / "notes.txt", "A girl reads a book.", "A boy sleeps.")
    _write(sources, {"more.md": "A cat sleeps.\n"})
    fresh = tmp_path / "fresh"
    assert runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(sources), "-o", str(fresh)]).exit_code == 0
    update = ["translate", "-c", checkpoint, "-i", str(sources), "--update", str(translated)]
    result = runner.invoke(app, update)
    assert result.exit_code == 0, result.output
    assert "guide.md, more.md, notes.txt written" in " ".join(result.output.split()), result.output
    page, made_anew = ((folder / "guide.md").read_text(encoding="utf-8").split("\n\n") for folder in (translated, fresh))
    assert page == [paragraphs[0], "Ein schwarzer Hund rennt (geprüft).", paragraphs[2], made_anew[3]]
    for name in ("more.md", "notes.txt"):
        assert (translated / name).read_bytes() == (fresh / name).read_bytes()
    assert (translated / "dog.png").read_bytes() == b"\x89PNG eins"
    (sources / "dog.png").write_bytes(b"\x89PNG two")  # the source's picture changed: copied again
    (sources / "notes.txt").unlink()  # a source gone: its translation left there, with a note
    result = runner.invoke(app, update)
    assert result.exit_code == 0 and (translated / "dog.png").read_bytes() == b"\x89PNG two"
    assert "notes.txt: its source is no longer in" in " ".join(result.output.split()) and (translated / "notes.txt").is_file()
    files = {p: p.read_bytes() for p in translated.rglob("*") if p.is_file()}
    result = runner.invoke(app, update)
    assert result.exit_code == 0 and "its translations are up to date; nothing written" in result.output
    assert {p: p.read_bytes() for p in translated.rglob("*") if p.is_file()} == files
    # translations beside their sources (a program's messages) are updated in place, not into a folder
    _write(tmp_path / "app", {"locales/en.json": MESSAGES})
    one_line_error(runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "app"), "--update",
                                       str(translated)]),
                   "its translations go beside their sources (locales/de.json)", "--update")


def test_a_files_translation_is_updated_with_the_record_beside_it(trained_tiny, tmp_path):
    """`-i FILE -o OUT --update OUT`: the first update takes OUT as made from FILE as it is now (a
    warning says so) and records it in OUT's folder; then a page gets only its changed paragraph
    translated (a reviewer's edit elsewhere kept), and a message whose English changed under its
    key is translated again; a file of another kind is refused."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    runner = CliRunner()
    _write(tmp_path, {"guide.md": PAGE, "en.json": MESSAGES})

    def translate(source: str, out: str, *update: str):
        result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / source), "-o",
                                     str(tmp_path / out), *update])
        assert result.exit_code == 0, result.output
        return " ".join(result.output.split())

    for source, out in (("guide.md", "guide.de.md"), ("en.json", "de.json")):
        translate(source, out)
        said = translate(source, out, "--update", str(tmp_path / out))
        assert f"{out} is not in" in said and "taken as the translation of" in said, said
        assert ("unchanged since" in said) == (source == "guide.md")  # (a message file's: kept by its keys)
    assert set(TranslationRecord.read(tmp_path).entries) == {"guide.de.md", "de.json"}
    paragraphs = (tmp_path / "guide.de.md").read_text(encoding="utf-8").split("\n\n")
    _edit(tmp_path / "guide.de.md", paragraphs[1], "Ein schwarzer Hund rennt (geprüft).")
    _edit(tmp_path / "guide.md", "A woman sings.", "A woman dances.")
    translate("guide.md", "fresh.md")
    assert "1 translated" in translate("guide.md", "guide.de.md", "--update", str(tmp_path / "guide.de.md"))
    made_anew = (tmp_path / "fresh.md").read_text(encoding="utf-8").split("\n\n")
    assert (tmp_path / "guide.de.md").read_text(encoding="utf-8").split("\n\n") == [
        paragraphs[0], "Ein schwarzer Hund rennt (geprüft).", paragraphs[2], made_anew[3]]
    german = json.loads((tmp_path / "de.json").read_text(encoding="utf-8"))
    _edit(tmp_path / "en.json", "Two cats sleep.", "A man sleeps.")
    said = translate("en.json", "de.json", "--update", str(tmp_path / "de.json"))
    assert "1 message(s) translated again (line 3): their source changed" in said
    assert json.loads((tmp_path / "de.json").read_text(encoding="utf-8"))["hello"] == german["hello"] and \
        json.loads((tmp_path / "de.json").read_text(encoding="utf-8"))["bye"] != german["bye"]
    one_line_error(runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "guide.md"), "-o",
                                       str(tmp_path / "x.md"), "--update", str(tmp_path / "de.json")]),
                   "not a translation of")
    source = (tmp_path / "guide.md").read_bytes()  # the output named as the input: refused, the source kept
    one_line_error(runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "guide.md"), "-o",
                                       str(tmp_path / "guide.md"), "--update", str(tmp_path / "guide.de.md")]),
                   "is the input")
    assert (tmp_path / "guide.md").read_bytes() == source
    # the record beside them is copied as it is where their folder is translated (not read as messages)
    from nmt.decode.folders import _translated
    assert not _translated(tmp_path / RECORD_NAME, tmp_path.parent)
