"""Joomla's language files in and out (`--input-format ini`, the default for .ini files): a
site's or an extension's strings (language/en-GB/com_example.ini, and before Joomla 4
en-GB.com_example.ini) translated into the file for the target language (language/de-DE/...).

Each value is translated (its HTML, and placeholders such as %s, %1$s and %d, kept); keys,
comments (`;`), sections and blank lines stay byte for byte. A value is read in its double quotes,
where `\\"` and Joomla 3's `"_QQ_"` stand for a quote; its translation is written in double
quotes, a quote in it as the file writes them (`"_QQ_"` where the file uses it, else `\\"`). A
value without quotes (Joomla 1.5's files) is written in them. A key's plural forms (`_1`, `_MORE`,
as a language pack's localise.php names them) are translated key by key.
"""

from __future__ import annotations

import re

from nmt.decode.message_file import MessageFile, TextValue, spliced, utf8_text
from nmt.decode.text.messages import as_markup
from nmt.errors import NmtError

_QQ = '"_QQ_"'  # Joomla 3's quote inside a value
# a key, "=", and the value: in double quotes (a quote inside as \" or "_QQ_"; over lines, as PHP
# reads it) or the rest of the line
_PAIR = re.compile(r'^[ \t]*([^\s;#\[=][^=\r\n]*?)[ \t]*=[ \t]*(?:"((?:[^"\\]|\\.|"_QQ_")*)("?)|([^\r\n]*))', re.M)
_AFTER = re.compile(r"[ \t]*(?:;[^\r\n]*)?(?:\r?\n|$)")  # what may follow a value on its line
_SKIPPED = re.compile(r"[ \t]*(?:[;#][^\r\n]*|\[[^\r\n]*\])?(?:\r?\n|$)")  # a blank line, a comment, a section


class IniMessages(MessageFile):
    """A Joomla language file read for translation: its `texts` in, the file with their
    translations out (`write`)."""

    def __init__(self, text: str, values: list[TextValue], bom: bool):
        self.text, self.messages, self.bom = text, values, bom
        self.quote = _QQ if _QQ in text else '\\"'

    @classmethod
    def read(cls, data: bytes, name: str) -> "IniMessages":
        text = utf8_text(data, name)
        values, at, line, counted = [], 0, 1, 0
        while at < len(text):
            line, counted = line + text.count("\n", counted, at), at
            pair = _PAIR.match(text, at)
            if pair is None:
                skipped = _SKIPPED.match(text, at)
                if skipped is None or skipped.end() == at:
                    shown = text[at:].splitlines()[0].strip()[:40] if text[at:].strip() else ""
                    raise NmtError(f"{name}:{line}: not a line of a language file (KEY=\"text\"): {shown!r}")
                at = skipped.end()
                continue
            quoted = pair.group(2) is not None
            if quoted and not pair.group(3):
                raise NmtError(f"{name}:{line}: the value of {pair.group(1)} has no closing double quote")
            after = _AFTER.match(text, pair.end())
            if after is None:
                raise NmtError(f"{name}:{line}: text after the closing quote of {pair.group(1)}'s value "
                               '(a quote inside a value is written \\")')
            if quoted:
                value = pair.group(2).replace(_QQ, '"').replace('\\"', '"')
                start, end = pair.start(2) - 1, pair.end(3)
            else:
                value = pair.group(4).strip()
                start = pair.start(4) + len(pair.group(4)) - len(pair.group(4).lstrip())
                end = start + len(value)
            found = TextValue(start, end, as_markup(value), line, (pair.group(1),))
            if found.to_translate:
                values.append(found)
            at = after.end()
        return cls(text, values, data.startswith(b"\xef\xbb\xbf"))

    target_language = None  # (named by the file's folder: language/de-DE/)

    def write(self, translations: list[str], target: str) -> bytes:
        translated = iter(translations)
        edits = [(value.start, value.end, '"' + value.translation(translated).replace('"', self.quote) + '"')
                 for value in self.messages]
        return ("\ufeff" * self.bom + spliced(self.text, edits)).encode()
