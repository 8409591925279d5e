"""A PHP program's messages in and out (`--input-format php`, the default for .php files read as
messages): Laravel's language files (lang/en/auth.php, `return [...]`), CodeIgniter's and Moodle's
(`$lang['key'] = '...';`, `$string['key'] = '...';`) and phpBB's (`$lang = array_merge($lang,
array(...));`), translated into the file for the target language (lang/de/auth.php).

Each string in an array, at any depth, is a message, and so is a string assigned to an element of
an array (`$lang['key'] = '...'`); a string before `=>` is a key. A message is translated as
others are (nmt.decode.text.messages: its lines apart, HTML tags and entities kept), and Laravel's
placeholders (`:attribute`) are kept as written, as are Moodle's (`{$a}`, `{$a->name}`:
nmt.decode.text.verbatim), and a message of Laravel's plural forms (`:count file|:count files`) is
translated form by form and given the target language's (nmt.decode.laravel_messages).

Each translation is written in its string's place and quotes; keys, comments, code and the other
strings stay byte for byte. A string that is code (a double-quoted one with a variable in it,
one joined to another with `.`, heredoc and nowdoc text) is copied as it is.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import NamedTuple

from nmt.decode.laravel_messages import LaravelMessage, marked, unmarked
from nmt.decode.message_file import MessageFile, spliced, utf8_text
from nmt.decode.text.messages import as_markup
from nmt.errors import NmtError

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>(?://|\#(?!\[))[^\n]*?(?=\?>|\r?\n|$)|/\*.*?\*/)
  | (?P<single>'(?:[^'\\]|\\.)*')
  | (?P<double>"(?:[^"\\]|\\.)*")
  | (?P<heredoc><<<[ \t]*(["']?)([A-Za-z_]\w*)\6\r?\n.*?^[ \t]*\7\b)
  | (?P<open_string>['"])
  | (?P<close_tag>\?>)
  | (?P<variable>\$[A-Za-z_]\w*)
  | (?P<word>\w+)
  | (?P<arrow>=>)
  | (?P<other>.)
""", re.X | re.S | re.M)
_INTERPOLATED = re.compile(r"(?<!\\)(?:\\\\)*\$[A-Za-z_{]|\{\$")  # "$name", "{$user->name}": code in a double-quoted string
_DOUBLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "v": "\v", "e": "\x1b", "f": "\f", "\\": "\\", "$": "$", '"': '"'}
_KEYWORDS = {"return", "yield", "echo", "print", "case", "else", "and", "or", "xor"}  # before "[", an array


@dataclass
class _Value(LaravelMessage):
    """One string to translate: where it stands in the text, and its quotes."""
    start: int
    end: int
    markup: str
    double: bool  # written in double quotes
    line: int
    key: tuple
    placeholders: frozenset = frozenset()  # Laravel's, as the model's side marks them ({:name})


class PhpMessages(MessageFile):
    """A PHP file of messages read for translation: its `texts` in, the file with their
    translations out (`write`)."""

    def __init__(self, text: str, values: list[_Value], bom: bool):
        self.text, self.messages, self.bom = text, values, bom
        self.warnings: list[str] = []

    @classmethod
    def read(cls, data: bytes, name: str) -> "PhpMessages":
        text = utf8_text(data, name)
        if "<?php" not in text:
            raise NmtError(f"{name}:1: not a PHP file (no <?php); --input-format text translates it line by line")
        values = [value for value in _strings(text, name) if value.to_translate]
        document = cls(text, values, data.startswith(b"\xef\xbb\xbf"))
        if not values:  # (a page's template, most likely: its HTML is another format's)
            document.warnings.append("no messages (strings in an array) to translate: the file is written as it is; "
                                     "--input-format html translates a template's HTML, its PHP kept")
        return document

    target_language = None  # (named by the file's folder: lang/de/auth.php)

    def write(self, translations: list[str], target: str) -> bytes:
        translated, edits, added = iter(translations), [], 0
        for index, value in enumerate(self.messages):
            done, new = (value.translation(translated), 0) if index in self.kept else \
                value.translation_into(translated, target)
            added += new
            if done != unmarked(value.text, value.placeholders):
                edits.append((value.start, value.end, _written(done, value.double)))
        if added:
            self.warnings.append(f"{added} plural forms added for {target} with the translation of the source's "
                                 "form of their kind, else of its last: review them")
        return ("\ufeff" * self.bom + spliced(self.text, edits)).encode()


def _strings(text: str, name: str) -> list[_Value]:
    """The messages of a PHP file's text: strings inside arrays (but keys), and strings assigned to
    an array's element, each with its key."""
    significant = _tokens(text, name)
    line_starts = [0, *(match.end() for match in re.finditer("\n", text))]
    values: list[_Value] = []
    frames: list[dict] = []  # the open brackets: {"array": bool, "key": tuple, "next": int, "pending": key or None}
    none = _Token("", len(text), "")
    for at, token in enumerate(significant):
        before = significant[at - 1] if at else none
        after = significant[at + 1] if at + 1 < len(significant) else none
        frame = frames[-1] if frames else None
        if token.text in ("[", "("):
            is_array = before.text.lower() == "array" if token.text == "(" else _array_literal(before)
            key = _element_key(frame) if is_array and frame and frame["array"] else ()
            frames.append({"array": is_array, "key": key, "next": 0, "pending": None})
        elif token.text in ("]", ")"):
            if frames:
                frames.pop()
        elif token.text == "," and frame is not None:
            frame["pending"] = None
        elif token.kind in ("single", "double", "word") and frame is not None and frame["array"] and after.kind == "arrow":
            frame["pending"] = token.key
        elif token.kind in ("single", "double"):
            key = _message_key(significant, at, frame)
            ends = after.text in (",", "]", ")", ";")
            if key is None or not ends or "." in (before.text, after.text) or \
                    token.kind == "double" and _INTERPOLATED.search(token.text[1:-1]):
                continue  # (joined to another string with ".", or a variable in it: code)
            raw = token.key
            text, found = marked(raw)
            values.append(_Value(token.start, token.start + len(token.text), as_markup(text), token.kind == "double",
                                 bisect.bisect_right(line_starts, token.start), key, found))
    return values


class _Token(NamedTuple):  # (a tuple: a file has hundreds of thousands)
    kind: str  # _TOKEN's group: single, double, heredoc, variable, word, arrow, other
    start: int
    text: str

    @property
    def key(self) -> str:
        """The token as an array's key: a string's value, a word or number as written."""
        return string_value(self.text) if self.kind in ("single", "double") else self.text


def _array_literal(before: _Token) -> bool:
    """Whether a "[" after the token `before` opens an array (`return [`, `=> [`), not an index
    (`$lang[`, `f()[`)."""
    if before.kind == "variable" or before.text in ("]", ")", "}"):
        return False
    return before.kind != "word" or before.text.lower() in _KEYWORDS


def _element_key(frame: dict) -> tuple:
    """The key of the next element of an array (its own, else the next number), the frame moved on."""
    if frame["pending"] is not None:
        key, frame["pending"] = frame["pending"], None
    else:
        key, frame["next"] = frame["next"], frame["next"] + 1
    return (*frame["key"], key)


def _message_key(significant: list[_Token], at: int, frame: dict | None) -> tuple | None:
    """A string's key as a message: its place in the array it stands in, or the element it is
    assigned to (`$lang['key'] = ...`); None where it is neither (a function's argument, code)."""
    if frame is not None and frame["array"]:
        return _element_key(frame)
    if frame is not None or at < 2 or significant[at - 1].text != "=":
        return None
    keys, position = [], at - 2  # back over ['a']['b'] to the variable
    while position >= 2 and significant[position].text == "]":
        index, opening = significant[position - 1], significant[position - 2]
        if index.kind not in ("single", "double", "word") or opening.text != "[":
            return None
        keys.insert(0, index.key)
        position -= 3
    return tuple(keys) if keys and significant[position].kind == "variable" else None


def _tokens(text: str, name: str) -> list[_Token]:
    """The PHP code's tokens but its spaces and comments; outside it (before <?php, after ?>) none."""
    tokens, position = [], 0
    while (opening := text.find("<?php", position)) >= 0:
        position = opening + len("<?php")
        while position < len(text):
            match = _TOKEN.match(text, position)
            kind = match.lastgroup
            if kind == "open_string":
                line = text.count("\n", 0, position) + 1
                raise NmtError(f"{name}:{line}: a string whose closing quote ({match.group(0)}) never comes")
            position = match.end()
            if kind == "close_tag":
                break
            if kind not in ("space", "comment"):
                tokens.append(_Token(kind, match.start(), match.group(0)))
    return tokens


def string_value(token: str) -> str:
    """A PHP string literal's value: single quotes undo only \\' and \\\\; double quotes PHP's escapes."""
    body = token[1:-1]
    if token.startswith("'"):
        return re.sub(r"\\([\\'])", r"\1", body)

    def escape(match: re.Match) -> str:
        code = match.group(1)
        if code in _DOUBLE_ESCAPES:
            return _DOUBLE_ESCAPES[code]
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        if code[0] == "x":
            return chr(int(code[1:], 16))
        if code[0] == "u":
            return chr(int(code[2:-1], 16))
        return match.group(0)  # an unknown escape stays as written
    return re.sub(r"\\([0-7]{1,3}|x[0-9A-Fa-f]{1,2}|u\{[0-9A-Fa-f]+\}|.)", escape, body, flags=re.S)


def _written(text: str, double: bool) -> str:
    """A translation in its string's quotes."""
    if not double:
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    escaped = escaped.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return '"' + re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\x{ord(m.group()):02x}", escaped) + '"'
