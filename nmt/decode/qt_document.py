"""Qt Linguist's translation files in and out (`--input-format qt`, the default for a .ts file
that is XML, not TypeScript; lxml, `pip install 'nmt[localization]'`): the files lupdate writes
from a Qt program's tr() calls, pre-translated for a translator to review in Qt Linguist.

Each message whose translation is empty is translated, and marked `type="unfinished"`, as Linguist
marks a translation it has not accepted yet; finished, obsolete and vanished messages are kept. A
plural message (`numerus="yes"`, its number `%n`) gets a numerus form for each of the target
language's plural forms (gettext's count: nmt.decode.plural_categories), each the translation of
its source, which a reviewer adapts. A menu's shortcut (`&File`) is taken out for the model and
put before the translation's first letter (`&Datei`); `&&` is an ampersand. Qt's placeholders
(`%1`, `%n`, `%L1`) are kept. The file's `language` is set to the target where it has none; one that
differs from the model's is warned about. Everything else stays as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nmt.data.languages import language_tag
from nmt.decode.plural_categories import gettext_plural_forms, plural_form_count
from nmt.decode.message_file import MessageFile
from nmt.decode.text.messages import Message, as_markup
from nmt.decode.xml_file import XmlFile, claim_language

_SHORTCUT = re.compile(r"(?<!&)&(?=[^\s&])")  # (&& is an ampersand)
_DONE = ("obsolete", "vanished")


def _without_shortcut(text: str) -> tuple[str, bool]:
    """A text without its menu shortcut's `&`, and whether it had one."""
    plain = re.sub(r"&&|" + _SHORTCUT.pattern, lambda m: m.group(0) if m.group(0) == "&&" else "", text)
    return plain, plain != text


def _with_shortcut(text: str) -> str:
    """A translation given a shortcut at its first letter, where it has none of its own."""
    if _SHORTCUT.search(text.replace("&&", "")):
        return text
    letter = re.search(r"[^\W\d_]", text)
    return text[:letter.start()] + "&" + text[letter.start():] if letter else text


@dataclass
class _Message(Message):
    """One message to translate and where its translation goes."""
    target: object  # its <translation> element
    markup: str
    shortcut: bool
    forms: int  # numerus forms to write; 0: not a plural
    line: int

    def put(self, translations) -> None:
        text = self.translation(translations)
        text = _with_shortcut(text) if self.shortcut else text
        element = self.target
        for child in list(element):
            element.remove(child)
        element.set("type", "unfinished")
        if not self.forms:
            element.text = text
            return
        indent = (element.getparent().text or "\n") + "    "  # (the message's children's, one deeper)
        element.text = indent
        for number in range(self.forms):
            form = element.makeelement("numerusform", {})
            form.text, form.tail = text, indent if number < self.forms - 1 else indent[:-4]
            element.append(form)


class QtDocument(MessageFile):
    """A Qt .ts file read for translation: its `texts` in, the file with their translations out
    (`write`)."""

    def __init__(self, file: XmlFile, messages: list[_Message]):
        self.file, self.messages = file, messages
        self.warnings: list[str] = []

    @classmethod
    def read(cls, data: bytes, name: str) -> "QtDocument":
        file = XmlFile.read(data, name, "Qt translation files", "TS", "a Qt translation file")
        root = file.root
        messages = []
        for message in root.iter("message"):
            source, translation = message.find("source"), message.find("translation")
            if source is None or (translation is not None and (translation.get("type") in _DONE or _filled(translation))):
                continue
            if translation is None:
                translation = message.makeelement("translation", {})
                source.addnext(translation)
            text, shortcut = _without_shortcut("".join(source.itertext()))
            forms = (len(translation.findall("numerusform")) or 2) if message.get("numerus") == "yes" else 0
            messages.append(_Message(translation, as_markup(text), shortcut, forms, source.sourceline or 0))
        return cls(file, messages)

    @property
    def target_language(self) -> str | None:
        """The language the file is for (its `language`), or None."""
        return self.file.root.get("language") or None

    def write(self, translations: list[str], target: str) -> bytes:
        rule = gettext_plural_forms(self.target_language or target)
        forms = plural_form_count(rule) if rule else None
        translated = iter(translations)
        for message in self.messages:
            if message.forms and forms:
                message.forms = forms
            message.put(translated)
        claim_language(self.file.root, "language", target, language_tag(target).replace("-", "_"), self.warnings)
        return self.file.bytes()


def _filled(translation) -> bool:
    """Whether a translation has text already (its own, or a numerus form's, or a length variant's)."""
    return any((text or "").strip() for text in translation.itertext())
