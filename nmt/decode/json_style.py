"""A JSON file read, and written again in the style it was written in: its indentation (one for
the whole file), separators, line breaks, a byte-order mark, what followed the top value, and
non-ASCII text escaped (`\\u00e9`) only where it was. A file written by JavaScript's
JSON.stringify, Python's json or Xcode comes back byte for byte where nothing in it changed."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from nmt.decode.message_file import utf8_text
from nmt.errors import NmtError

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"(\s*:[ \t]*)?', re.S)
_EMPTY = re.compile(r'"(?:[^"\\]|\\.)*"|\{\}|\[\]')  # (strings matched, to be passed over)


@dataclass
class JsonStyle:
    indent: str | None
    separators: tuple[str, str]
    ascii_only: bool
    newline: str
    bom: bool
    end: str  # what followed the top value: a line break, as a rule
    open_empty: str = ""  # the empty containers written over a blank line ("{" and "[": Xcode's "{\n\n  }")

    @classmethod
    def of(cls, text: str, bom: bool = False) -> "JsonStyle":
        skeleton = _STRING.sub(lambda m: '""' + (m.group(1) or ""), text)  # (no comma nor line break of a string's)
        indent = re.search(r"\n([ \t]+)\S", skeleton)
        key = re.search(r'""(\s*:[ \t]*)', skeleton)
        item = re.search(r",([ \t]*)\S", skeleton)
        return cls(indent=indent.group(1) if indent else None,
                   separators=("," + ("" if indent or item is None else item.group(1)), key.group(1) if key else ": "),
                   ascii_only=text.isascii() and re.search(r"\\u[0-9a-fA-F]{4}", text) is not None,
                   newline="\r\n" if "\r\n" in skeleton else "\n", bom=bom, end=text[len(text.rstrip()):],
                   open_empty="".join(sorted(set(re.findall(r"([{\[])\r?\n\r?\n[ \t]*[}\]]", skeleton)))))

    def dumps(self, value) -> bytes:
        text = json.dumps(value, ensure_ascii=self.ascii_only, indent=self.indent, separators=self.separators)
        if self.open_empty:
            text = _EMPTY.sub(lambda m: self._empty(m, text), text)
        return ("\ufeff" * self.bom + text.replace("\n", self.newline) + self.end).encode()


    def _empty(self, match: re.Match, text: str) -> str:
        """An empty container as the file wrote it: over a blank line, closed at its line's indentation."""
        if match.group(0).startswith('"') or match.group(0)[0] not in self.open_empty:
            return match.group(0)
        line = text[text.rfind("\n", 0, match.start()) + 1:]
        return f"{match.group(0)[0]}\n\n{line[:len(line) - len(line.lstrip())]}{match.group(0)[1]}"


def read_json(data: bytes, name: str) -> tuple[object, str, JsonStyle]:
    """A JSON file's value, text and style; an NmtError naming the line where it is not UTF-8 or
    not valid JSON."""
    text = utf8_text(data, name)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise NmtError(f"{name}:{e.lineno}:{e.colno}: not valid JSON ({e.msg})") from None
    return value, text, JsonStyle.of(text, bom=data.startswith(b"\xef\xbb\xbf"))


def string_lines(text: str, keys: bool = False) -> list[tuple[int, str]]:
    """Each string value of a JSON text (or, with `keys`, each object's key) in order: its line
    and its text."""
    return [(text.count("\n", 0, m.start()) + 1, json.loads(m.group(0)[:len(m.group(0)) - len(m.group(1) or "")]))
            for m in _STRING.finditer(text) if (m.group(1) is not None) == keys]
