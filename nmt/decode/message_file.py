"""What every file of a program's messages gives `nmt translate` (nmt.decode.json_messages,
android_strings, string_catalog, apple_strings, stringsdict_document, qt_document, resx_document,
properties_document, yaml_messages, ini_messages): its messages' parts to translate and the lines
they stand on, and the helpers its reading and writing share."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from nmt.data.corpus import not_utf8
from nmt.decode.text.messages import Message, Part, as_markup, message_parts
from nmt.decode.text.verbatim import PLACEHOLDER


class MessageFile:
    """A file read for translation, its `messages` (nmt.decode.text.messages.Message) in order. In
    a file of keys and texts (JSON, Android's, .strings, .properties, .resx, YAML, .stringsdict),
    each message has a `key`, and `keep_from` keeps the translations an earlier translation of the
    file has for its keys."""

    messages: list
    target_language: str | None = None  # the language the file says it is for, where it says one
    kept: dict[int, list[str]] = {}  # a message's place: its parts' translations, kept (never changed in place)
    earlier: dict = {}  # an earlier translation's messages by key, for the plural forms a file adds
    stale: list[int] = []  # the lines of messages whose earlier translation was not kept: placeholders gone

    @property
    def texts(self) -> list[str]:
        """Each message's parts to translate (its lines, its ICU branches), but for those kept."""
        return [part.model_text for index, message in enumerate(self.messages) if index not in self.kept
                for part in message.parts if part.translated]

    @property
    def numbers(self) -> list[int]:
        """Each text's line in the file (for warnings)."""
        return [message.line for index, message in enumerate(self.messages) if index not in self.kept
                for part in message.parts if part.translated]

    def keep_from(self, earlier: "MessageFile") -> int:
        """The translations of `earlier` (this file's translation of an earlier version of it) kept
        for each message whose key it has; how many messages. Only the others are then translated
        (`texts`). Both files are read as translations (nmt.decode.text.messages.read_as_translation),
        so that a translator's text is kept for a message a source would keep as written ("00:00,0"
        for "00:00.0", "JA" for "YES"); a message without one is then taken as a source's again. A
        translation with a placeholder its source no longer has (an argument removed or renamed,
        which would fail or show in the program) is not kept: its message's line is in `stale`. Nor is
        a source's text copied as it is under a key that is that text (Laravel's `lang/de.json`, whose
        strings are their own keys, as its exporters write the ones not translated yet)."""
        before = {message.key: message for message in earlier.messages if getattr(message, "key", None) is not None}
        self.earlier = before
        self.kept, self.stale = {}, []
        for index, message in enumerate(self.messages):
            old = before.get(getattr(message, "key", None))
            if old is not None and old.markup == message.markup and message.key == (message.text,):
                old = None  # a string that is its own key, copied: Laravel's JSON exporters' untranslated entry
            if old is not None and not _arguments(old.markup) <= _arguments(message.markup):
                self.stale.append(message.line)
                old = None
            lines = message_parts(message.markup, every_line=True)
            if old is not None and not any(part.branch for part in lines):  # the translator's text whole
                message.parts, self.kept[index] = [Part(message.markup, True, kept=True)], [old.markup]
                continue
            # an ICU plural or select: each branch's text, as many as the source's
            parts = [part.model_text for part in message_parts(old.markup, every_line=True) if part.translated] \
                if old is not None else None
            if parts is not None and len(parts) == sum(part.translated for part in lines):
                message.parts = [replace(part, kept=True) if part.translated else part for part in lines]
                self.kept[index] = parts
            else:
                message.parts = message.cut()  # a source's message: what it keeps as written stays
        return len(self.kept)

    @property
    def message_count(self) -> int:
        """The messages kept or to translate (not those kept as written)."""
        return sum(index in self.kept or message.to_translate for index, message in enumerate(self.messages))

    def holds_translations(self) -> bool:
        """Whether the file has a message (as a translation: a file of one language)."""
        return bool(self.messages)

    def contents(self) -> dict:
        """Each message's text by its key: what two versions of a file must share to say the same."""
        return {message.key: message.markup for message in self.messages}

    def with_kept(self, translations: list[str]) -> list[str]:
        """The translations of `texts` with the kept ones in their places: every part's, in order."""
        given, every = iter(translations), []
        for index, message in enumerate(self.messages):
            every += self.kept.get(index) or [next(given) for part in message.parts if part.translated]
        return every


@dataclass
class TextValue(Message):
    """A message that is a value in its file's text, from `start` to `end` (its quotes included
    where the file quotes it), under its `key`."""
    start: int
    end: int
    markup: str
    line: int
    key: tuple


@dataclass
class ElementText(Message):
    """A message that is an XML element's text (a .resx <value>, a .stringsdict <string>)."""
    element: object
    markup: str
    key: tuple | None = None

    @classmethod
    def of(cls, element, key: tuple | None = None) -> "ElementText":
        return cls(element, as_markup(element.text or ""), key)

    @property
    def line(self) -> int:
        return self.element.sourceline or 0


def utf8_text(data: bytes, name: str) -> str:
    """A file's text in UTF-8 (a byte-order mark left out); an NmtError naming the line where it is not."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise not_utf8(name, data[:e.start].count(b"\n") + 1, data, e, where="") from None


def backslash_unescaped(text: str, escaped: dict[str, str], unicode: str = "u") -> str:
    """`text` with its backslash escapes undone: `\\uXXXX` (and, where `unicode` says so, `\\UXXXX`)
    a character, `escaped`'s letters theirs (n: a line break), any other the character itself."""
    pattern = re.compile(rf"\\([{unicode}][0-9a-fA-F]{{4}}|.)", re.S)
    return pattern.sub(lambda m: chr(int(m.group(1)[1:], 16)) if len(m.group(1)) == 5 else
                       escaped.get(m.group(1), m.group(1)), text)


def double_quoted(text: str) -> str:
    """`text` in double quotes, its backslashes, quotes, line breaks and tabs escaped (as a .strings
    file and YAML read them)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def spliced(text: str, edits: list[tuple[int, int, str]]) -> str:
    """`text` with each (start, end, new text) edit made; edits do not overlap, and those at one
    place are made in their order."""
    pieces, position = [], 0
    for _, (start, end, replacement) in sorted(enumerate(edits), key=lambda e: (e[1][0], e[0])):
        pieces += [text[position:start], replacement]
        position = end
    return "".join(pieces) + text[position:]  # (in one pass: a file of 100,000 cells, in a second)


def some_lines(lines: list[int]) -> str:
    """Line numbers for a warning: the first five, then "..." where there are more."""
    return ", ".join(map(str, lines[:5])) + (", ..." if len(lines) > 5 else "")


def _arguments(text: str) -> set[str]:
    """The placeholders of a message that stand for the program's arguments (not `%%`, a percent sign)."""
    return set(PLACEHOLDER.findall(text)) - {"%%"}
