""".NET resource files in and out (`--input-format resx`, the default for .resx files; lxml, `pip
install 'nmt[localization]'`): a program's strings (Resources.resx, a WinForms form's Form1.resx)
translated into the file that goes beside it for the target language (Resources.de.resx).

Each string resource (a `<data>` with no `type` or `mimetype`: an image, a size or a font is not
one) is translated, its lines apart; its `<comment>` is kept for the translator. Composite-format
placeholders (`{0}`, `{0:N2}`) are kept. The translation holds the strings alone, with the file's
header and schema: .NET takes every other resource (images, sizes, the designer's entries whose
names begin with `>>`, a string kept as written) from the default file, as Visual Studio's
localized forms do, so that a control moved in the default form moves in every language.
"""

from __future__ import annotations

import copy

from nmt.data.tmx import local_name
from nmt.decode.message_file import ElementText, MessageFile
from nmt.decode.xml_file import XmlFile, remove_element
from nmt.errors import NmtError


class ResxDocument(MessageFile):
    """A .resx file read for translation: its `texts` in, the file with their translations out
    (`write`)."""

    def __init__(self, file: XmlFile, values: list[ElementText]):
        self.file, self.messages = file, values

    @classmethod
    def read(cls, data: bytes, name: str) -> "ResxDocument":
        file = XmlFile.read(data, name, ".NET resource files (.resx)")
        root = file.root
        if local_name(root.tag) != "root" or root.find("resheader") is None and root.find("data") is None:
            raise NmtError(f"{name}: not a .NET resource file (a <root> of <data> and <resheader> elements)")
        values = []
        for data_element in root.iter("data"):
            if not _string(data_element):
                continue
            found = ElementText.of(data_element.find("value"), (data_element.get("name"),))
            if found.to_translate:
                values.append(found)
        return cls(file, values)

    target_language = None  # (.NET names it in the file's name: Resources.de.resx)
    resources_kept: list = []  # an earlier translation's own other resources (a size set for the language)

    def keep_from(self, earlier: "MessageFile") -> int:
        """MessageFile.keep_from, and the earlier translation's resources that are not strings (a
        control made wider for the language, an image of its own), kept for the translation."""
        self.resources_kept = [copy.deepcopy(data_element) for data_element in earlier.file.root.iter("data")
                               if not _string(data_element)]
        return super().keep_from(earlier)

    def write(self, translations: list[str], target: str) -> bytes:
        translated = iter(translations)
        for value in self.messages:
            value.element.text = value.translation(translated)
        # a language's file holds its strings only: the rest (images, sizes, the designer's entries, a
        # string kept as written) comes from the default file, so that a change made there holds for it
        strings = {value.key for index, value in enumerate(self.messages) if index in self.kept or value.to_translate}
        for data_element in list(self.file.root.iter("data")):
            if (data_element.get("name"),) not in strings:
                remove_element(data_element)
        for resource in self.resources_kept:
            _append(self.file.root, resource)
        return self.file.bytes()


def _string(data_element) -> bool:
    """Whether a <data> is a string resource: no type or mimetype, not the designer's (>>name)."""
    value = data_element.find("value")
    return not (value is None or data_element.get("type") or data_element.get("mimetype")
                or data_element.get("name", "").startswith(">>") or len(value))


def _append(root, element) -> None:
    """`element` put last in `root`, indented as the element before it."""
    children = list(root)
    last = children[-1] if children else None
    if last is None:
        root.text, element.tail = "\n  ", "\n"
    else:
        before = children[-2].tail if len(children) > 1 else root.text
        element.tail, last.tail = last.tail, before
    root.append(element)
