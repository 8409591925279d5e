"""A folder translated (`nmt translate -i FOLDER -o NEW_FOLDER`): a documentation site, a book's
chapters, a project's texts. Each text file (.txt) and each file that `nmt translate` reads in a
format of its own by its name (nmt.decode.stream.file_format) is translated as `nmt translate` translates it alone (nmt.decode.stream.translate_file); every other
file (images, styles, scripts, and JSON, .properties and YAML files other than a program's messages:
holds_messages) is copied as it is; the subfolders are made alike. The new folder
appears only when every file is done: it is written beside it under a hidden name, then renamed.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

from nmt.config import DecodeConfig
from nmt.decode.plural_categories import plural_categories
from nmt.decode.stream import StreamReport, file_format, translate_file
from nmt.errors import NmtError

_MESSAGE_FOLDERS = {"locales", "locale", "_locales", "i18n", "l10n", "lang", "langs", "languages", "translations",
                    "messages", "intl"}
_MESSAGE_NAME = re.compile(r"messages|strings|bundle|translation|i18n|l10n|locale", re.I)
_LANGUAGE_NAME = re.compile(r"(?:.*?[_.-])??([a-z]{2,3})(?:[-_][A-Za-z]{2,4})?", re.I)  # en, en-US, zh_Hans, messages_de


def translate_folder(translator, source: Path, output: Path, cfg: DecodeConfig,
                     warn_for: Callable[[Path], Callable[[str], None]],
                     done: Callable[[int], None] = lambda _: None) -> StreamReport:
    """Every file under `source` translated or copied into `output`, a folder that must not exist
    yet (or be empty) and must not lie inside `source`; `warn_for(path)` warns about a file's lines,
    `done(n)` hears of the files finished so far."""
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise NmtError(f"{output}: exists and is not an empty folder; name a new folder for the translations")
    if output.resolve().is_relative_to(source.resolve()):
        raise NmtError(f"{output}: inside {source}, the folder it is translated from; name a folder outside it")
    files = sorted(path for path in source.rglob("*") if path.is_file())
    building = output.with_name(f".{output.name}.tmp")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    report = StreamReport()
    try:
        for finished, path in enumerate(files, start=1):
            target = building / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            if _translated(path, source):
                translated = translate_file(translator, str(path), str(target), cfg, warn=warn_for(path))
                report.lines += translated.lines
                report.failed += translated.failed
            else:
                shutil.copy2(path, target)
            done(finished)
        if output.exists():
            output.rmdir()  # (empty)
        building.rename(output)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return report


def _translated(path: Path, folder: Path) -> bool:
    """Whether a file of the folder is translated (or copied): a text file, or one `nmt translate`
    reads in a format of its own, but for a JSON, .properties or YAML file that is not a program's
    messages (package.json, application.properties, docker-compose.yml) and a .ts file that is
    TypeScript, not Qt's XML."""
    kind = file_format(str(path))
    if kind == "qt":  # (.ts is TypeScript's too)
        with open(path, "rb") as f:
            return f.read(64).lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")
    if kind in ("json", "properties", "yaml"):
        return holds_messages(path.relative_to(folder))
    return path.suffix.lower() == ".txt" or kind is not None


def holds_messages(path: Path) -> bool:
    """Whether a JSON, .properties or YAML file's path says it holds a program's messages: an .arb file,
    a file in a folder named for them (locales/, i18n/, _locales/), one named so
    (messages.properties, strings.json) or named for a language (en.json, en-US.json,
    messages_en.json, locales/en/common.json). Other such files (package.json,
    application.properties: settings, data) are copied."""
    if (path.suffix.lower() == ".arb" or any(folder.lower() in _MESSAGE_FOLDERS for folder in path.parts[:-1])
            or _MESSAGE_NAME.search(path.stem)):
        return True
    for name in (path.stem, *path.parts[:-1]):
        language = _LANGUAGE_NAME.fullmatch(name)
        if language and plural_categories(language.group(1).lower()) is not None:
            return True
    return False
