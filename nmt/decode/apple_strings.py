"""Apple's .strings files in and out (`--input-format strings`, the default for .strings files):
an iOS or macOS app's `"key" = "value";` pairs (Localizable.strings, InfoPlist.strings) translated
into the file that goes to the target language's .lproj folder.

Each value is translated (its lines apart, ICU plural and select branch by branch:
nmt.decode.text.messages); keys, comments and spacing stay as they were. The file's escapes are
read (`\\"`, `\\\\`, `\\n`, `\\U00E9`) and written again (a `\\U00E9` as the letter itself), and its encoding (UTF-16 with its byte-order mark,
as Xcode wrote it for years, or UTF-8) is kept. Format specifiers (`%@`, `%lld`, `%1$@`) are
placeholders, kept.
"""

from __future__ import annotations

import codecs
import re

from nmt.decode.message_file import MessageFile, TextValue, backslash_unescaped, double_quoted, spliced
from nmt.decode.text.messages import as_markup
from nmt.errors import NmtError

_TOKEN = re.compile(r'(?P<space>\s+)|(?P<comment>/\*.*?\*/|//[^\n]*)|(?P<string>"(?:[^"\\]|\\.)*")'
                    r"|(?P<word>[\w.$:/-]+)|(?P<mark>[=;])", re.S)
_ESCAPED = {"n": "\n", "t": "\t", "r": "\r"}
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def _read(quoted: str) -> str:
    """A quoted string's text, its escapes undone."""
    return backslash_unescaped(quoted[1:-1], _ESCAPED, unicode="uU")


class AppleStrings(MessageFile):
    """A .strings file read for translation: its `texts` in, the file with the values translated
    out (`write`)."""

    def __init__(self, text: str, values: list[TextValue], bom: bytes, encoding: str):
        self.text, self.messages, self.bom, self.encoding = text, values, bom, encoding

    @classmethod
    def read(cls, data: bytes, name: str) -> "AppleStrings":
        bom, encoding = next(((bom, encoding) for bom, encoding in _BOMS if data.startswith(bom)), (b"", "utf-8"))
        try:
            text = data[len(bom):].decode(encoding)
        except UnicodeDecodeError as e:
            raise NmtError(f"{name}: invalid {encoding.upper()} at byte {e.start + len(bom)}") from None
        tokens = []  # (kind, token, start, line), spaces and comments left out
        position = 0
        while position < len(text):
            token = _TOKEN.match(text, position)
            line = text.count("\n", 0, position) + 1
            if token is None:
                raise NmtError(f"{name}:{line}: not a .strings file (unexpected {text[position]!r})")
            if token.lastgroup not in ("space", "comment"):
                tokens.append((token.lastgroup, token.group(0), token.start(), line))
            position = token.end()
        values = []
        for at in range(0, len(tokens), 4):  # key = value ;
            entry = tokens[at:at + 4]
            shape = [kind if kind != "mark" else token for kind, token, _, _ in entry]
            if len(entry) < 4 or shape[0] not in ("string", "word") or shape[1:] != ["=", "string", ";"]:
                raise NmtError(f'{name}:{entry[0][3]}: not a .strings file (an entry is "key" = "value";)')
            _, quoted, start, line = entry[2]
            key = entry[0][1]
            value = TextValue(start, start + len(quoted), as_markup(_read(quoted)), line,
                           (_read(key) if key.startswith('"') else key,))
            if value.to_translate:
                values.append(value)
        return cls(text, values, bom, encoding)

    target_language = None  # (Apple names it in the folder: de.lproj)

    def write(self, translations: list[str], target: str) -> bytes:
        translated = iter(translations)
        edits = [(value.start, value.end, double_quoted(value.translation(translated))) for value in self.messages]
        return self.bom + spliced(self.text, edits).encode(self.encoding)
