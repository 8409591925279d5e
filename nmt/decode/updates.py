"""A file's translation brought up to date with its source (`nmt translate -i FILE -o OUT --update
EARLIER`): the texts and messages that changed in FILE since EARLIER was made from it translated
again, the rest of EARLIER kept as it stands (a reviewer's edits included). What EARLIER was made
from is recorded beside it, in its folder's `nmt-translations.json` (nmt.decode.translation_record),
as a folder's update records it.

The first update of a translation the record does not know takes it as made from the source as it
is now (a message file's messages kept by their keys, as before there was a record), and records
so; from then on, a change to the source is found. XLIFF files and gettext catalogs hold their
sources, and are merged by them, with no record.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from nmt.config import DecodeConfig
from nmt.decode.stream import (BILINGUAL, KEYED, StreamReport, file_format, file_texts, refuse_to_overwrite,
                               translate_file)
from nmt.decode.translation_record import RECORD_NAME, Made, TranslationRecord, fingerprint
from nmt.errors import NmtError
from nmt.files import replaced_whole


def update_file(translator, source: str, output: str, cfg: DecodeConfig, update: Path,
                warn: Callable[[str], None], input_format: str | None = None,
                done: Callable[[int], None] = lambda _: None) -> StreamReport:
    """`source` translated into `output` as an update of `update`, its earlier translation (see
    the module's text); the report says what was kept (`kept`, `kept_texts`), or that the source
    is unchanged and the earlier translation written as it stands (`unchanged`)."""
    if source == "-":
        raise NmtError(f"--update {update}: names the translation of a file; give the file with -i, not standard input")
    kind = input_format or file_format(source)
    if kind in BILINGUAL:  # (XLIFF, gettext: merged by the sources they hold; Qt's, String Catalogs: filled)
        return translate_file(translator, source, output, cfg, warn=warn, input_format=input_format, done=done,
                              update=str(update))
    if not update.is_file():
        raise NmtError(f"{update}: file not found (--update)")
    refuse_to_overwrite(output, [source])
    if input_format is None and file_format(str(update)) != kind:
        raise NmtError(f"--update {update}: not a translation of {source} (a file of another kind); name the file "
                       f"translated from it")
    before = TranslationRecord.read(update.parent).made(Path(update.name), _relative(source, update.parent))
    if before is None:
        warn(f"{update} is not in {update.parent / RECORD_NAME}: taken as the translation of {source} as it is now "
             f"({'its messages kept by their keys; ' if kind in KEYED else ''}a later change to {source} is translated)")
    if kind in KEYED:
        report = translate_file(translator, source, output, cfg, warn=warn, input_format=input_format, done=done,
                                update=str(update), before=before)
    else:
        now = tuple(map(fingerprint, file_texts(Path(source), kind)))
        if before is None or before.texts is None or before.texts == now:  # (up to date, or taken as so)
            _copied(update, output)
            report = StreamReport(made=Made("", now), unchanged=True)
        else:  # (an earlier translation that no longer lines up with its source: stream's one-line error)
            report = translate_file(translator, source, output, cfg, warn=warn, input_format=input_format, done=done,
                                    update=str(update), before=before)
    if output != "-" and report.made is not None:  # what the output was made from, recorded in its folder
        folder = Path(output).parent
        record = TranslationRecord.read(folder)
        record.set(Path(Path(output).name), replace(report.made, source=_relative(source, folder).as_posix()))
        if record.changed:
            with replaced_whole(folder / RECORD_NAME) as f:
                f.write(record.content())
    return report


def _relative(path: str, folder: Path) -> Path:
    return Path(os.path.relpath(path, folder))


def _copied(update: Path, output: str) -> None:
    """The earlier translation, up to date, as the output (standard output, or another file)."""
    if output == "-":
        sys.stdout.buffer.write(update.read_bytes())
        sys.stdout.flush()
    elif Path(output).resolve() != update.resolve():
        with replaced_whole(output, "wb") as f:
            f.write(update.read_bytes())
