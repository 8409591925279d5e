"""Apple's String Catalogs in and out (`--input-format xcstrings`, the default for .xcstrings files):
the one file Xcode keeps an app's texts in, every language together, given the model's target
language.

Each string that has no localization in the target language yet is translated from its source
language's (or, where it has none, from its key, as Xcode reads it), its variations too: each
plural category (made the target language's: nmt.decode.plural_categories; a category added takes
the `other` translation, for a reviewer to adapt), each device's, and each substitution's. Every
translation is marked `needs_review`, as Xcode marks one a translator should check. Strings marked
`shouldTranslate: false`, and stale ones (no longer in the code), are left as they are. Format
specifiers (`%@`, `%lld`, `%1$@`, `%#@files@`, a substitution's `%arg`) are placeholders, kept. A
string without a word to translate ("%@") is given no localization: the source's serves.

Written in Xcode's own style (nmt.decode.json_style), the target's localization among the others
in the order of their codes, so that a diff shows only what was added.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from nmt.data.languages import language_tag
from nmt.decode.json_style import JsonStyle, read_json, string_lines
from nmt.decode.plural_categories import ORDER, plural_forms
from nmt.decode.message_file import MessageFile
from nmt.decode.text.messages import Message, as_markup
from nmt.errors import NmtError


@dataclass
class _Unit(Message):
    """One stringUnit of the target's localization to fill."""
    unit: dict
    markup: str
    line: int

    def put(self, translations) -> None:
        self.unit["value"] = self.translation(translations)
        self.unit["state"] = "needs_review"


class StringCatalog(MessageFile):
    """An .xcstrings file read for translation into one language (`for_target`): its `texts` in,
    the catalog with that language's localizations added out (`write`)."""

    def __init__(self, catalog: dict, style: JsonStyle, lines: dict[str, int]):
        self.catalog, self.style, self.lines = catalog, style, lines
        self.source = catalog.get("sourceLanguage", "en")
        self.messages: list[_Unit] = []
        self.made: list[dict] = []  # the localizations for_target made (those the catalog had stay as they are)
        self.target: str | None = None
        self.warnings: list[str] = []

    @classmethod
    def read(cls, data: bytes, name: str) -> "StringCatalog":
        catalog, text, style = read_json(data, name)
        if not isinstance(catalog, dict) or not isinstance(catalog.get("strings"), dict):
            raise NmtError(f'{name}: not a String Catalog (no "strings" object at its top)')
        lines: dict[str, int] = {}
        for line, key in string_lines(text, keys=True):
            lines.setdefault(key, line)
        return cls(catalog, style, lines)

    target_language = None  # (it holds every language: the model's target is the one added)

    def for_target(self, target: str) -> "StringCatalog":
        """The catalog made ready to translate into `target`: a localization (to fill) for each
        string that lacks one."""
        tag = language_tag(target)
        self.target = tag
        for key, entry in self.catalog["strings"].items():
            if not isinstance(entry, dict) or entry.get("shouldTranslate") is False or entry.get("extractionState") == "stale":
                continue
            localizations = entry.get("localizations", {})
            if tag in localizations or language_tag(self.source) == tag:
                continue
            in_order = list(localizations) == sorted(localizations)  # (Xcode's: by code)
            source = localizations.get(self.source) or {"stringUnit": {"state": "translated", "value": key}}
            before = len(self.messages)
            mirrored = _mirrored(source, self.messages, self.lines.get(key, 0))
            if len(self.messages) == before:  # nothing to translate ("%@"): the source's serves
                continue
            localizations[tag] = mirrored
            self.made.append(mirrored)
            entry["localizations"] = dict(sorted(localizations.items())) if in_order else localizations
        return self

    def write(self, translations: list[str], target: str) -> bytes:
        if self.target != language_tag(target):
            raise ValueError(f"the catalog was made ready for {self.target}, not {target}")
        translated = iter(translations)
        for unit in self.messages:
            unit.put(translated)
        added = sum(_plural_categories(localization, target) for localization in self.made)
        if added:
            self.warnings.append(f"{added} plural categories added for {target} with their 'other' form's "
                                 "translation: review them")
        return self.style.dumps(self.catalog)


def _mirrored(source: dict, units: list[_Unit], line: int) -> dict:
    """A copy of a source localization (its stringUnit, its variations and substitutions at any
    depth) whose every stringUnit is to be filled with its translation: each added to `units`,
    but for a text with nothing to translate, copied."""
    mirrored = {}
    for key, value in source.items():
        if key == "stringUnit" and isinstance(value, dict):
            text = value.get("value", "")
            unit = {"state": "translated", "value": text}
            mirrored[key] = unit
            message = _Unit(unit, as_markup(text), line)
            if message.to_translate:
                units.append(message)
        elif isinstance(value, dict):
            mirrored[key] = _mirrored(value, units, line)
        else:
            mirrored[key] = copy.deepcopy(value)
    return mirrored


def _plural_categories(localization: dict, target: str) -> int:
    """Every plural variation in a localization (at any depth) given the target language's
    categories, in place; how many were added."""
    added = 0
    for key, value in localization.items():
        if not isinstance(value, dict):
            continue
        if key == "plural" and all(isinstance(form, dict) for form in value.values()):
            forms, new = plural_forms(target, value)
            if new or list(forms) != list(value):  # (in Xcode's order, by name, where the source's was)
                order = sorted(forms) if list(value) == sorted(value) else [c for c in ORDER if c in forms]
                localization[key] = {category: copy.deepcopy(forms[category]) if category in new else forms[category]
                                     for category in order}
            added += len(new)
        added += _plural_categories(localization[key], target)
    return added
