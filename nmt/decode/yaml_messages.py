"""A program's messages in YAML in and out (`--input-format yaml`, the default for .yml and .yaml
files): Ruby on Rails' locale files (config/locales/en.yml) and others of their shape, translated
into the file for the target language.

Every string scalar is a message and is translated (its lines apart: nmt.decode.text.messages;
Ruby's `%{name}` and other placeholders kept); numbers, booleans and keys stay. A file whose top
holds one language's key (`en:`, as Rails writes it) gets the target's (`de:`). A plural (a
mapping of `one:`, `other:`, ...) is given the target language's categories that it lacks
(nmt.decode.plural_categories), each with the `other` form's translation for a reviewer to adapt,
and a category the language does not use is left out (Japanese has `other` alone).

Each translation is written in its scalar's own place and style (plain, quoted, or a `|` or `>`
block), quoted where a plain scalar would read otherwise; comments, anchors and everything else
stay byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from nmt.data.languages import language_tag
from nmt.decode.plural_categories import ORDER, plural_categories, plural_forms
from nmt.decode.message_file import MessageFile, double_quoted, spliced, utf8_text
from nmt.decode.text.messages import Message, as_markup
from nmt.errors import NmtError

_STRING = "tag:yaml.org,2002:str"
_FLOW = set(",[]{}")


@dataclass
class _Scalar(Message):
    """One string scalar to translate: its node (where it stands and how it is written)."""
    node: yaml.ScalarNode
    markup: str
    in_flow: bool  # inside a [list] or {mapping} written on one line
    key: tuple  # the keys (and places) to it, below the file's language key where it has one

    @property
    def line(self) -> int:
        return self.node.start_mark.line + 1


class YamlMessages(MessageFile):
    """A YAML file of messages read for translation: its `texts` in, the file with their
    translations out (`write`)."""

    def __init__(self, text: str, root, scalars: list[_Scalar], bom: bool):
        self.text, self.messages, self.bom = text, scalars, bom
        self.language = _language_key(root)  # the top's language key (`en:`), where it has one
        self.top = root.value[0][1] if self.language is not None else root  # the mapping of the messages
        self.warnings: list[str] = []

    @classmethod
    def read(cls, data: bytes, name: str) -> "YamlMessages":
        text = utf8_text(data, name)
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            where = f":{mark.line + 1}" if mark else ""
            raise NmtError(f"{name}{where}: not valid YAML ({e.problem or e.context})") from None
        except yaml.YAMLError as e:
            raise NmtError(f"{name}: not valid YAML ({e})") from None
        if not isinstance(root, yaml.MappingNode):
            raise NmtError(f"{name}: not a file of messages (its top is not a mapping of keys)")
        document = cls(text, root, [], data.startswith(b"\xef\xbb\xbf"))
        _collect(document.top, document.messages, set(), False, ())
        return document

    target_language = None  # (a Rails file names its source's: en)

    def write(self, translations: list[str], target: str) -> bytes:
        translated = iter(translations)
        edits: list[tuple[int, int, str]] = []  # (start, end, text), not overlapping
        done: dict[int, str] = {}
        for scalar in self.messages:
            value = scalar.translation(translated)
            done[id(scalar.node)] = value
            if value == scalar.node.value:  # (unchanged: as written)
                continue
            edits.append((scalar.node.start_mark.index, scalar.node.end_mark.index,
                          _written(value, scalar.node, self.text, scalar.in_flow)))
        if self.language is not None:
            edits.append((self.language.start_mark.index, self.language.end_mark.index, language_tag(target)))
        added = _plural_lines(self.top, target, done, self.text, edits, (), self.earlier)
        if added:
            self.warnings.append(f"{added} plural keys added for {target} with their 'other' key's translation: "
                                 "review them")
        return ("\ufeff" * self.bom + spliced(self.text, edits)).encode()


def _collect(node, scalars: list[_Scalar], seen: set[int], in_flow: bool, path: tuple) -> None:
    """The string scalars under `node` (at `path`) that hold words, each once (an alias is its
    anchor's node)."""
    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.ScalarNode):
        scalar = _Scalar(node, as_markup(node.value), in_flow, path) if node.tag == _STRING else None
        if scalar is not None and scalar.to_translate:
            scalars.append(scalar)
        return
    flow = in_flow or bool(node.flow_style)
    children = ([(key.value, value) for key, value in node.value] if isinstance(node, yaml.MappingNode)
                else list(enumerate(node.value)))
    for name, child in children:
        _collect(child, scalars, seen, flow, (*path, name))


def _language_key(root) -> yaml.ScalarNode | None:
    """The key naming the file's language where its top holds one key, a language's (`en:`)."""
    if len(root.value) != 1:
        return None
    key, value = root.value[0]
    known = isinstance(key, yaml.ScalarNode) and isinstance(value, yaml.MappingNode) and key.style is None
    return key if known and plural_categories(key.value) is not None else None


def _written(value: str, node: yaml.ScalarNode, text: str, in_flow: bool) -> str:
    """A scalar's new value written in its node's style: a block as a block, its header and
    indentation as they were; a plain scalar plain where it reads back the same, else in double
    quotes; a single-quoted one so, where it has no line break."""
    if node.style in ("|", ">"):
        header_end = text.index("\n", node.start_mark.index)
        header = text[node.start_mark.index:header_end]
        body = text[header_end + 1:node.end_mark.index]
        first = next((line for line in body.splitlines() if line.strip()), "  ")
        indent = first[:len(first) - len(first.lstrip(" "))]
        separator = "\n\n" if node.style == ">" else "\n"  # (a folded block's line break is an empty line)
        block = separator.join(indent + line if line else "" for line in value.rstrip("\n").split("\n"))
        return f"{header}\n{block}" + ("\n" if text[node.end_mark.index - 1] == "\n" else "")
    if node.style == "'" and "\n" not in value:
        return "'" + value.replace("'", "''") + "'"
    if node.style is None and _plain(value, in_flow):
        return value
    return double_quoted(value)


def _plain(value: str, in_flow: bool) -> bool:
    """Whether `value` written plain reads back as itself (a string, the same one)."""
    if not value or value != value.strip() or "\n" in value or (in_flow and _FLOW & set(value)):
        return False
    try:  # (in a [list] or {mapping} on one line, followed by a comma)
        return yaml.safe_load(f"[{value}, x]") == [value, "x"] if in_flow else yaml.safe_load(f"k: {value}") == {"k": value}
    except yaml.YAMLError:
        return False


def _plural_lines(node, target: str, done: dict[int, str], text: str, edits: list, path: tuple, earlier: dict) -> int:
    """Lines for the plural categories the target language needs and a plural mapping under `node`
    (at `path`) lacks, each before the first key it comes before in CLDR's order (added to
    `edits`), a category's text taken from `earlier` translations where they have it; how many
    were added from `other`."""
    added = 0
    if isinstance(node, yaml.SequenceNode):
        return sum(_plural_lines(child, target, done, text, edits, (*path, place), earlier)
                   for place, child in enumerate(node.value))
    if not isinstance(node, yaml.MappingNode):
        return 0
    keys = {key.value: (key, value) for key, value in node.value if isinstance(key, yaml.ScalarNode)}
    plural = (len(keys) > 1 and "other" in keys and set(keys) <= set(ORDER) and not node.flow_style
              and all(isinstance(value, yaml.ScalarNode) and value.tag == _STRING for _, value in keys.values()))
    if plural:
        forms, new = plural_forms(target, {category: done.get(id(value), value.value) for category, (_, value) in keys.items()})
        other = keys["other"][1]
        for category, (key, value) in keys.items():
            if category not in forms:  # a category the language does not use: its line goes
                start = text.rfind("\n", 0, key.start_mark.index) + 1
                end = value.end_mark.index if text[value.end_mark.index - 1] == "\n" else \
                    (text.find("\n", value.end_mark.index) + 1 or len(text))
                edits[:] = [edit for edit in edits if not start <= edit[0] < end]
                edits.append((start, end, ""))
        for category in new:
            before = next(keys[later][0] for later in ORDER[ORDER.index(category):] if later in keys and later in forms)
            line_start = text.rfind("\n", 0, before.start_mark.index) + 1
            indent = text[line_start:before.start_mark.index]
            kept = earlier.get((*path, category))
            form = kept.text if kept is not None else forms[category]
            written = double_quoted(form) if other.style in ("|", ">") else _written(form, other, text, False)
            edits.append((line_start, line_start, f"{indent}{category}: {written}\n"))
        return sum((*path, category) not in earlier for category in new)
    for key, value in node.value:
        added += _plural_lines(value, target, done, text, edits, (*path, key.value), earlier)
    return added
