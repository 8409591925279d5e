"""What every file of a program's messages gives `nmt translate` (nmt.decode.json_messages,
android_strings, string_catalog, apple_strings, stringsdict_document, qt_document, resx_document,
properties_document, yaml_messages): its messages' parts to translate and the lines they stand on,
and the helpers its reading and writing share."""

from __future__ import annotations

from dataclasses import dataclass

from nmt.decode.text.messages import Message, as_markup
from nmt.errors import NmtError


class MessageFile:
    """A file read for translation, its `messages` (nmt.decode.text.messages.Message) in order."""

    messages: list
    target_language: str | None = None  # the language the file says it is for, where it says one

    @property
    def texts(self) -> list[str]:
        """Each message's parts to translate: its lines, its ICU branches."""
        return [part.model_text for message in self.messages for part in message.parts if part.translated]

    @property
    def numbers(self) -> list[int]:
        """Each text's line in the file (for warnings)."""
        return [message.line for message in self.messages for part in message.parts if part.translated]


@dataclass
class ElementText(Message):
    """A message that is an XML element's text (a .resx <value>, a .stringsdict <string>)."""
    element: object
    markup: str

    @classmethod
    def of(cls, element) -> "ElementText":
        return cls(element, as_markup(element.text or ""))

    @property
    def line(self) -> int:
        return self.element.sourceline or 0


def utf8_text(data: bytes, name: str) -> str:
    """A file's text in UTF-8 (a byte-order mark left out); an NmtError naming the line where it is not."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise NmtError(f"{name}:{line}: invalid UTF-8 at byte {e.start}") from None


def spliced(text: str, edits: list[tuple[int, int, str]]) -> str:
    """`text` with each (start, end, new text) edit made; edits do not overlap, and those at one
    place are made in their order."""
    for _, (start, end, replacement) in sorted(enumerate(edits), key=lambda e: (e[1][0], e[0]), reverse=True):
        text = text[:start] + replacement + text[end:]
    return text
