"""What a folder's translations were made from (`nmt-translations.json` at the folder's root), so
that `nmt translate --update` finds the sources changed since and translates what changed in them,
keeping the rest of each translation as it stands (a reviewer's edits included): `-i FOLDER
--update FOLDER` of translations beside their sources, `-i SOURCES --update FOLDER` of a folder
that `-o FOLDER` translated SOURCES into, file by file.

For each translation beside its source (a documentation site's page under i18n/de/, a program's
de.json beside en.json), or each file of a folder of translations (a file copied there too, by
its bytes), the record holds the source's path and a fingerprint of each of the texts it was
translated from: a page's in order (its paragraphs, headings, items, cells: what its reader
gives the model), a message file's by key. Fingerprints, not the texts: the record stays small and
says nothing a repository does not already hold. A translation the record does not know (made by
hand, or before the record) is taken as a translation of its source as it is now.

A page whose source changed keeps the translation of each text its source still has (lined up by
their fingerprints, as `diff` lines up lines) and gets the others translated; a message file keeps
each message whose source is unchanged. Where a page's translation no longer has as many texts as
the source it was made from (a reviewer joined two paragraphs), its texts cannot be lined up, and
it is left as it is, with a note.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from nmt.errors import NmtError

RECORD_NAME = "nmt-translations.json"
_ABOUT = ("What each translation in this folder was made from: its source and a fingerprint of each of "
          "the source's texts. `nmt translate --update` (-i FOLDER --update FOLDER for translations beside "
          "their sources, -i SOURCES --update FOLDER for a folder of translations) translates again what "
          "changed since. Written by nmt; keep it with the translations.")


def fingerprint(text: str) -> str:
    """A text's fingerprint: its words, runs of spaces and line breaks aside (a paragraph wrapped
    anew is the same paragraph)."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()[:16]


def key_name(key) -> str:
    """A message's key as the record writes it (a .resx or .stringsdict key is a tuple)."""
    return "/".join(map(str, key)) if isinstance(key, tuple) else str(key)


def file_fingerprint(path: Path) -> str:
    """A file's fingerprint, of its bytes (a file copied, not translated)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


@dataclass(frozen=True)
class Made:
    """One translation's entry: its source's path (relative to the folder, '/'-separated) and the
    fingerprints of the texts it was translated from: a page's `texts` in order, or a message
    file's `messages` by key; or, of a file copied into a folder of translations, its bytes'
    (`copied`)."""
    source: str
    texts: tuple[str, ...] | None = None
    messages: dict[str, str] | None = None
    copied: str | None = None

    def as_json(self) -> dict:
        return {"source": self.source, **({"texts": list(self.texts)} if self.texts is not None else {}),
                **({"messages": dict(sorted(self.messages.items()))} if self.messages is not None else {}),
                **({"copied": self.copied} if self.copied is not None else {})}


class TranslationRecord:
    """A folder's record, read at the start of a run and written at its end where it changed."""

    def __init__(self, entries: dict[str, Made] | None = None):
        self.entries = dict(entries or {})
        self._read = dict(self.entries)

    @classmethod
    def read(cls, folder: Path) -> "TranslationRecord":
        """The folder's record (empty where it has none); a file that is not one is a one-line
        error naming it and, for broken JSON, its line."""
        path = folder / RECORD_NAME
        if not path.is_file():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            raise NmtError(f"{path}: not UTF-8 text; remove it to take the folder's translations as made from "
                           "their sources as they are now") from None
        except json.JSONDecodeError as e:
            raise NmtError(f"{path}: line {e.lineno}: not valid JSON ({e.msg}); fix it, or remove it to take the "
                           "folder's translations as made from their sources as they are now") from None
        translations = data.get("translations") if isinstance(data, dict) else None
        if not isinstance(translations, dict):
            raise NmtError(f'{path}: not a record of translations (no "translations" object); remove it to take '
                           "the folder's translations as made from their sources as they are now")
        entries = {}
        for target, entry in translations.items():
            if not _valid(entry):
                raise NmtError(f"{path}: the entry of {target} is not a source and its texts' fingerprints; remove it "
                               "to take that translation as made from its source as it is now")
            texts, messages = entry.get("texts"), entry.get("messages")
            entries[target] = Made(entry["source"], tuple(texts) if texts is not None else None, messages,
                                   entry.get("copied"))
        return cls(entries)

    def made(self, target: Path, source: Path) -> Made | None:
        """What `target` was translated from, where the record knows it as a translation of `source`."""
        entry = self.entries.get(target.as_posix())
        return entry if entry is not None and entry.source == source.as_posix() else None

    def set(self, target: Path, made: Made) -> None:
        self.entries[target.as_posix()] = made

    @property
    def changed(self) -> bool:
        return self.entries != self._read

    def content(self) -> str:
        """The record as its file holds it: one entry per translation, sorted, for a readable diff."""
        translations = {target: self.entries[target].as_json() for target in sorted(self.entries)}
        return json.dumps({"about": _ABOUT, "translations": translations}, indent=1, ensure_ascii=False) + "\n"


def _valid(entry) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("source"), str):
        return False
    texts, messages = entry.get("texts"), entry.get("messages")
    return isinstance(entry.get("copied", ""), str) and (texts is None or isinstance(texts, list) and all(isinstance(t, str) for t in texts)) and \
        (messages is None or isinstance(messages, dict) and all(isinstance(m, str) for m in messages.values()))


def kept_translations(before: tuple[str, ...], now: list[str], earlier: list[str]) -> dict[int, str] | None:
    """For a page whose source's texts had the fingerprints `before` when it was translated into
    `earlier` (that translation's texts, read as the source's are) and are `now`'s texts now: each
    unchanged text's place in `now` -> its translation in `earlier`; None where `earlier` has not
    as many texts as `before` (they cannot be lined up)."""
    if len(earlier) != len(before):
        return None
    matcher = difflib.SequenceMatcher(None, before, [fingerprint(text) for text in now], autojunk=False)
    return {i + k: earlier[j + k] for j, i, size in matcher.get_matching_blocks() for k in range(size)}


def of_language(made: Made | None, language: str) -> dict[str, str]:
    """Of a file that holds every language (a table of texts by language, translated in its place),
    what its `language`'s texts were made from, by key: its record's messages keyed `LANGUAGE:KEY`."""
    prefix = f"{language}:"
    return {key[len(prefix):]: mark for key, mark in (made.messages or {}).items() if key.startswith(prefix)} \
        if made is not None else {}


def with_language(made: Made | None, language: str, messages: dict[str, str]) -> Made:
    """Such a file's record with its `language`'s entries now `messages` (by key), the other languages' kept."""
    others = {key: mark for key, mark in (made.messages or {}).items() if not key.startswith(f"{language}:")} \
        if made is not None else {}
    return Made("", messages={**others, **{f"{language}:{key}": mark for key, mark in messages.items()}})
