"""A program's messages in TOML in and out (`--input-format toml`, the default for .toml files
read as messages): Hugo's string tables (i18n/en.toml) and go-i18n's message files
(active.en.toml), translated into the file for the target language (i18n/de.toml).

Every string value is a message and is translated (its lines apart: nmt.decode.text.messages; Go
templates' `{{ .Count }}` and other placeholders kept), but a go-i18n message's `description`,
`hash`, `id` and delimiters, which are data. A table of plural forms (`one`, `other`, ...) is given
the target language's categories that it lacks (nmt.decode.plural_categories), each with the
`other` form's translation for a reviewer to adapt, and a category the language does not use is
left out.

Each translation is written in its value's place and quotes (a literal '...' string that cannot
hold it in double quotes); keys, tables, comments and the other values stay byte for byte. A
multi-line string ("\"\"\"...\"\"\"") is copied as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser as the tomli package (pyproject.toml)
    import tomli as tomllib

from nmt.decode.message_file import MessageFile, backslash_unescaped, spliced, utf8_text
from nmt.decode.plural_categories import ORDER, plural_forms
from nmt.decode.text.messages import Message, as_markup
from nmt.errors import NmtError

_DATA_KEYS = {"description", "hash", "id", "leftdelim", "rightdelim"}  # a go-i18n message's fields that are not its text
_BARE_KEY = r"[A-Za-z0-9_-]+"
_KEY_PART = rf'(?:{_BARE_KEY}|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\')'
_KEY = rf"{_KEY_PART}(?:\s*\.\s*{_KEY_PART})*"
_TABLE = re.compile(rf"\s*\[(\[?)\s*({_KEY})\s*\]\]?\s*(?:#.*)?$")
_PAIR = re.compile(rf'\s*({_KEY})\s*=\s*("(?:[^"\\\n]|\\.)*"(?!")|\'[^\'\n]*\'(?!\'))\s*(?:#.*)?$')
_ESCAPED = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", '"': '"', "\\": "\\"}


def _key_parts(key: str) -> tuple[str, ...]:
    return tuple(backslash_unescaped(part[1:-1], _ESCAPED, "uU") if part.startswith('"') else
                 part[1:-1] if part.startswith("'") else part
                 for part in re.findall(_KEY_PART, key))


@dataclass
class _Value(Message):
    """One string value to translate: where it stands in the text, and its quotes."""
    start: int
    end: int
    markup: str
    literal: bool  # written in single quotes
    line: int
    key: tuple
    indent: str  # its line's indentation (for the plural forms added beside it)


class TomlMessages(MessageFile):
    """A TOML file of messages read for translation: its `texts` in, the file with their
    translations out (`write`)."""

    def __init__(self, text: str, values: list[_Value], plurals: dict[tuple, dict[str, _Value]], bom: bool):
        self.text, self.messages, self.plurals, self.bom = text, values, plurals, bom
        self.warnings: list[str] = []

    @classmethod
    def read(cls, data: bytes, name: str) -> "TomlMessages":
        text = utf8_text(data, name)
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            where = re.search(r"line (\d+)", str(e))
            raise NmtError(f"{name}{':' + where.group(1) if where else ''}: not valid TOML ({str(e).split(' (at')[0]})") \
                from None
        values: list[_Value] = []
        table: tuple = ()
        arrays: dict[tuple, int] = {}
        at = 0
        for number, line in enumerate(text.splitlines(keepends=True), start=1):
            start, at = at, at + len(line)
            header = _TABLE.match(line.rstrip("\r\n"))
            if header and not _PAIR.match(line.rstrip("\r\n")):
                table = _key_parts(header.group(2))
                if header.group(1):  # [[an array of tables]]: each its own place
                    arrays[table] = arrays.get(table, -1) + 1
                    table = (*table, arrays[table])
                continue
            pair = _PAIR.match(line.rstrip("\r\n"))
            if pair is None:
                continue
            key = (*table, *_key_parts(pair.group(1)))
            if str(key[-1]).lower() in _DATA_KEYS and len(key) > 1:
                continue
            raw = pair.group(2)
            literal = raw.startswith("'")
            value = raw[1:-1] if literal else backslash_unescaped(raw[1:-1], _ESCAPED, "uU")
            found = _Value(start + pair.start(2), start + pair.end(2), as_markup(value), literal, number, key,
                           line[:len(line) - len(line.lstrip())])
            if found.to_translate:
                values.append(found)
        return cls(text, values, _plurals(values), data.startswith(b"\xef\xbb\xbf"))

    target_language = None  # (named by the file's name: i18n/de.toml)

    def write(self, translations: list[str], target: str) -> bytes:
        translated = iter(translations)
        done = {value.key: value.translation(translated) for value in self.messages}
        edits = [(value.start, value.end, _written(done[value.key], value.literal)) for value in self.messages
                 if done[value.key] != value.text]  # (unchanged: as written, escapes and all)
        added = 0
        for table, forms in self.plurals.items():
            added += _plural_edits(self.text, table, forms, target, done, edits, self.earlier)
        if added:
            self.warnings.append(f"{added} plural keys added for {target} with their 'other' key's translation: "
                                 "review them")
        return ("\ufeff" * self.bom + spliced(self.text, edits)).encode()


def _plurals(values: list[_Value]) -> dict[tuple, dict[str, _Value]]:
    """The tables of plural forms (`one`, `other`, ... and nothing else to translate), by their keys."""
    tables: dict[tuple, dict[str, _Value]] = {}
    for value in values:
        tables.setdefault(value.key[:-1], {})[str(value.key[-1])] = value
    return {table: forms for table, forms in tables.items()
            if table and "other" in forms and len(forms) > 1 and set(forms) <= set(ORDER)}


def _plural_edits(text: str, table: tuple, forms: dict[str, _Value], target: str, done: dict, edits: list,
                  earlier: dict) -> int:
    """The edits that give a plural table the target language's categories: a line added for each
    it lacks (before the next category in CLDR's order, or after the last), a line removed for each
    it does not use; how many were added from `other`."""
    wanted, new = plural_forms(target, {category: done[value.key] for category, value in forms.items()})
    for category, value in forms.items():
        if category not in wanted:
            start = text.rfind("\n", 0, value.start) + 1
            end = text.find("\n", value.end) + 1 or len(text)
            edits[:] = [edit for edit in edits if not start <= edit[0] < end]
            edits.append((start, end, ""))
    other = forms["other"]
    for category in new:
        later = next((forms[name] for name in ORDER[ORDER.index(category):] if name in forms and name in wanted), None)
        place = text.rfind("\n", 0, later.start) + 1 if later is not None else (text.find("\n", other.end) + 1 or len(text))
        kept = earlier.get((*table, category))
        form = kept.text if kept is not None else wanted[category]
        newline = "" if later is not None or text.endswith("\n") or place < len(text) else "\n"
        edits.append((place, place, f"{newline}{other.indent}{category} = {_written(form, other.literal)}\n"))
    return sum((*table, category) not in earlier for category in new)


def _written(text: str, literal: bool) -> str:
    """A translation in the value's quotes: single where it was and can stay so, else double."""
    if literal and "'" not in text and not any(ord(char) < 32 for char in text):
        return f"'{text}'"
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return '"' + re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\u{ord(m.group()):04X}", escaped) + '"'
