""".NET resource files in and out (`--input-format resx`, the default for .resx files; lxml, `pip
install 'nmt[localization]'`): a program's strings (Resources.resx, a WinForms form's Form1.resx)
translated into the file that goes beside it for the target language (Resources.de.resx).

Each string resource (a `<data>` with no `type` or `mimetype`: an image, a size or a font is not
one) is translated, its lines apart; its `<comment>` is kept for the translator. The designer's own
entries (names beginning with `>>`, which name controls and their order) are kept, and so is
everything else. Composite-format placeholders (`{0}`, `{0:N2}`) are kept.
"""

from __future__ import annotations


from nmt.data.tmx import local_name
from nmt.decode.message_file import ElementText, MessageFile
from nmt.decode.xml_file import XmlFile
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
            value = data_element.find("value")
            if (value is None or data_element.get("type") or data_element.get("mimetype")
                    or data_element.get("name", "").startswith(">>") or len(value)):
                continue
            found = ElementText.of(value, (data_element.get("name"),))
            if found.to_translate:
                values.append(found)
        return cls(file, values)

    target_language = None  # (.NET names it in the file's name: Resources.de.resx)

    def write(self, translations: list[str], target: str) -> bytes:
        translated = iter(translations)
        for value in self.messages:
            value.element.text = value.translation(translated)
        return self.file.bytes()
