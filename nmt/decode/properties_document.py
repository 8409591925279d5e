"""Java's .properties files in and out (`--input-format properties`, the default for .properties
files): a resource bundle's messages (messages.properties, Spring's and Java's ResourceBundle)
translated into the bundle for the target language (messages_de.properties).

Each value is translated, its lines apart; keys, separators, comments and blank lines stay as
they were, and a value continued over lines (a line ending in `\\`) is written on one. The file's
escapes (`\\n`, `\\t`, `\\uXXXX`, `\\=`, a leading `\\ `) are read and written again. A value with a
MessageFormat argument (`{0}`) writes an apostrophe as two (`don''t`), as MessageFormat reads it,
and is given to the model with one. A file in ASCII (ISO-8859-1, as Java read it before version 9)
writes what is not ASCII as `\\uXXXX`; one in UTF-8 stays UTF-8, and so does the translation
`--update` finds written in UTF-8.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nmt.decode.message_file import MessageFile, backslash_unescaped, spliced
from nmt.decode.text.messages import Message, as_markup

_ESCAPED = {"n": "\n", "t": "\t", "r": "\r", "f": "\f"}
_ARGUMENT = re.compile(r"\{\d")  # a MessageFormat argument: the value is a MessageFormat pattern
_KEY_END = re.compile(r"(?:[^\\:=\s]|\\.)*")  # a key: up to an unescaped separator or space
_SEPARATOR = re.compile(r"[ \t\f]*[:=]?[ \t\f]*")


def _read(value: str) -> str:
    return backslash_unescaped(value, _ESCAPED)


def _written(text: str, ascii_only: bool) -> str:
    text = (text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
            .replace("\f", "\\f"))
    if text.startswith((" ", "\t")):
        text = "\\" + text
    return "".join(c if c.isascii() else f"\\u{ord(c):04x}" for c in text) if ascii_only else text


@dataclass
class _Value(Message):
    """One value to translate: where it stands in the text (its continuation lines too)."""
    start: int
    end: int
    markup: str
    message_format: bool
    line: int
    key: tuple


def _logical_lines(text: str):
    """Each logical line: its start, its end (after its continuation lines) and its line number,
    comments and blank lines left out."""
    lines = text.splitlines(keepends=True)
    at, number = 0, 0
    while number < len(lines):
        start, first = at, number
        content = lines[number].rstrip("\r\n")
        at += len(lines[number])
        number += 1
        if not content.strip() or content.lstrip().startswith(("#", "!")):
            continue
        end = start + len(content)
        while (len(content) - len(content.rstrip("\\"))) % 2 == 1 and number < len(lines):  # continued
            content = lines[number].rstrip("\r\n")
            end = at + len(content)
            at += len(lines[number])
            number += 1
        yield start, end, first + 1


class PropertiesDocument(MessageFile):
    """A .properties file read for translation: its `texts` in, the file with their translations out
    (`write`)."""

    def __init__(self, text: str, values: list[_Value], encoding: str):
        self.text, self.messages, self.encoding = text, values, encoding
        self.ascii_only = encoding == "latin-1" or text.isascii()

    @classmethod
    def read(cls, data: bytes, name: str) -> "PropertiesDocument":
        try:
            text, encoding = data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:  # (ISO-8859-1, as Java reads a .properties file by default before 9)
            text, encoding = data.decode("latin-1"), "latin-1"
        values = []
        for start, end, line in _logical_lines(text):
            logical = text[start:end]
            key = _KEY_END.match(logical, len(logical) - len(logical.lstrip()))
            value_start = _SEPARATOR.match(logical, key.end()).end()
            raw = re.sub(r"\\\r?\n[ \t\f]*", "", logical[value_start:])  # (continuations joined)
            value = _read(raw)
            message_format = bool(_ARGUMENT.search(value))
            if message_format:
                value = value.replace("''", "'")
            found = _Value(start + value_start, end, as_markup(value), message_format, line, (_read(key.group(0)),))
            if found.to_translate:
                values.append(found)
        return cls(text, values, encoding)

    target_language = None  # (Java names it in the file's name: messages_de.properties)

    def keep_from(self, earlier: "MessageFile") -> int:
        """MessageFile.keep_from; a translation written in UTF-8 before (Java 9 and Spring read it
        so) stays UTF-8 though its source is ASCII."""
        if not earlier.ascii_only:
            self.ascii_only, self.encoding = False, earlier.encoding
        return super().keep_from(earlier)

    def write(self, translations: list[str], target: str) -> bytes:
        translated, edits = iter(translations), []
        for value in self.messages:
            text = value.translation(translated)
            if value.message_format:
                text = text.replace("'", "''")
            edits.append((value.start, value.end, _written(text, self.ascii_only)))
        return spliced(self.text, edits).encode(self.encoding)
