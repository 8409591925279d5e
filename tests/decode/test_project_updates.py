"""A program's folder translated, on projects drawn at random (nmt.decode.folders): whatever the
layouts and the translations already there, an update in place writes only the target language's
files (and the record of what they were made from), leaves every other file as it was, gives each source file its translation (the same as a
translation into a new folder makes), and a second update writes nothing."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from nmt.decode.folders import translate_folder
from nmt.decode.translation_record import RECORD_NAME
from tests.conftest import optional_module

etree, needs_lxml = optional_module("lxml.etree")
_, needs_polib = optional_module("polib")

TEXTS = ["A dog runs", "A black dog leaps over a log.", "Two cats", "OK", "00:00.0", "Save file", "A man with %1$s"]


def _android(messages: dict[str, str]) -> str:
    return "<resources>\n" + "".join(f'    <string name="{k}">{v}</string>\n' for k, v in messages.items()) + "</resources>\n"


def _json(messages: dict[str, str]) -> str:
    return json.dumps(messages, indent=2, ensure_ascii=False) + "\n"


def _properties(messages: dict[str, str]) -> str:
    return "".join(f"{k} = {v}\n" for k, v in messages.items())


def _strings(messages: dict[str, str]) -> str:
    return "".join(f'"{k}" = "{v}";\n' for k, v in messages.items())


def _yaml(language: str):
    return lambda messages: f"{language}:\n" + "".join(f"  {k}: \"{v}\"\n" for k, v in messages.items())


def _xliff(language: str):
    def written(messages: dict[str, str]) -> str:
        target = f' target-language="{language}"' if language != "en" else ""
        units = "".join(f'<trans-unit id="{k}"><source>{k}: A dog runs</source>'
                        + (f"<target>{v}</target>" if language != "en" else "") + "</trans-unit>\n"
                        for k, v in messages.items())
        return (f'<?xml version="1.0" encoding="UTF-8"?>\n<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">\n'
                f'<file source-language="en" datatype="plaintext" original="t"{target}><body>\n{units}</body></file>\n</xliff>\n')
    return written


def _po(language: str):
    def written(messages: dict[str, str]) -> str:
        header = 'msgid ""\nmsgstr ""\n' + (f'"Language: {language}\\n"\n' if language != "en" else "")
        return header + '"Content-Type: text/plain; charset=UTF-8\\n"\n\n' + "".join(
            f'msgid "{k}: A dog runs"\nmsgstr "{v if language != "en" else ""}"\n\n' for k, v in messages.items())
    return written


# (the source file's path, the German's, the French's, how a file of messages is written)
LAYOUTS = [("res/values/strings.xml", "res/values-de/strings.xml", "res/values-fr/strings.xml", lambda _: _android),
           ("locales/en.json", "locales/de.json", "locales/fr.json", lambda _: _json),
           ("src/messages.properties", "src/messages_de.properties", "src/messages_fr.properties", lambda _: _properties),
           ("en.lproj/Localizable.strings", "de.lproj/Localizable.strings", "fr.lproj/Localizable.strings", lambda _: _strings),
           ("config/locales/en.yml", "config/locales/de.yml", "config/locales/fr.yml", _yaml),
           ("src/locale/messages.xlf", "src/locale/messages.de.xlf", "src/locale/messages.fr.xlf", _xliff),
           ("po/app.pot", "po/de.po", "po/fr.po", _po)]


def _project(root: Path, rng: random.Random) -> None:
    """Some of the layouts, each with its English, maybe part of its German (some keys, some gone
    from the source since), maybe French; and files that are no one's messages."""
    for source, german, french, writer in rng.sample(LAYOUTS, rng.randint(1, len(LAYOUTS))):
        keys = [f"k{i}" for i in range(rng.randint(1, 5))]
        english = {key: rng.choice(TEXTS) for key in keys} | {"k0": "A dog runs"}  # (one at least to translate)
        files = {source: writer("en")(english)}
        if rng.random() < 0.6:  # a German translation of an earlier version
            kept = rng.sample(keys, rng.randint(0, len(keys)))
            files[german] = writer("de")({**{key: f"Deutsch {i}" for i, key in enumerate(kept)}, "gone": "Alt"})
        if rng.random() < 0.5:
            files[french] = writer("fr")({key: "Français" for key in keys})
        for name, content in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(content, encoding="utf-8")
    (root / "README.md").write_text("A dog runs.\n", encoding="utf-8")
    (root / "package.json").write_text('{"name": "dogs"}\n', encoding="utf-8")


def _files(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in root.rglob("*") if path.is_file()}


@needs_lxml
@needs_polib
@pytest.mark.parametrize("seed", range(4))
def test_an_update_in_place_writes_only_the_targets_files_and_a_second_writes_nothing(translator, cfg, tmp_path, seed):
    root = tmp_path / "project"
    _project(root, random.Random(seed))
    before = _files(root)
    german = {german for _, german, _, _ in LAYOUTS} | {RECORD_NAME}  # (and what each was made from)
    translate_folder(translator, root, tmp_path / "new", cfg, lambda path: lambda message: None)  # into a new folder
    made = _files(tmp_path / "new")
    assert set(before) <= set(made) and set(made) - set(before) <= german
    assert {name for name in before if made[name] != before[name]} <= german | {"README.md"}  # (a document: translated)
    report = translate_folder(translator, root, None, cfg, lambda path: lambda message: None)  # in place
    after = _files(root)
    assert {name: content for name, content in after.items() if name in german} == \
        {name: content for name, content in made.items() if name in german}  # the same German either way
    assert set(after) - set(before) <= german  # new files: German ones
    assert {name for name in before if after[name] != before[name]} <= german  # changed: German ones
    for source, target, _, _ in LAYOUTS:  # every source has its German
        assert source not in before or target in after, (source, sorted(after))
    assert {str(path) for path in report.written} | ({RECORD_NAME} if report.recorded else set()) == \
        {name for name in after if before.get(name) != after[name]}
    again = translate_folder(translator, root, None, cfg, lambda path: lambda message: None)
    assert again.written == [] and _files(root) == after
