"""Where a recipe error points: the line of the recipe file that wrote the key, or the --set
override that did; and, for an unknown key, the known key it most resembles."""

from __future__ import annotations

import difflib
import typing
from pathlib import Path

import yaml
from pydantic import BaseModel


def override_of(overrides: list[str], loc: tuple) -> str | None:
    """The last `KEY=VALUE` override that wrote the key at `loc` (or a key in it, or its section)."""
    dotted = ".".join(str(part) for part in loc)
    for assignment in reversed(overrides):
        key = assignment.partition("=")[0].strip()
        if key == dotted or key.startswith(dotted + ".") or dotted.startswith(key + "."):
            return assignment
    return None


class KeyPlaces:
    """The places of a recipe's keys: its file's lines (from the YAML node tree of `text`) and the
    overrides applied after it, which take precedence."""

    def __init__(self, path: Path, text: str, overrides: list[str], loader: type[yaml.SafeLoader]):
        self.path, self.overrides = path, overrides
        try:
            self.root = yaml.compose(text, Loader=loader)
        except yaml.YAMLError:
            self.root = None

    def of(self, loc: tuple) -> str:
        """`--set KEY=VALUE` where an override wrote the key (or a key in it, or its section),
        else `FILE: line N` of the deepest key along `loc` the file has, else the file."""
        if override := override_of(self.overrides, loc):
            return f"--set {override}"
        line = self._line(loc)
        return f"{self.path}: line {line}" if line else str(self.path)

    def _line(self, loc: tuple) -> int | None:
        node, line = self.root, None
        for part in loc:
            if isinstance(node, yaml.MappingNode):
                found = [(key, value) for key, value in node.value if key.value == str(part)]
                if not found:
                    break
                line, node = found[-1][0].start_mark.line + 1, found[-1][1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                break
        return line


class DecodeSettingPlaces:
    """The places of a translation's decode settings (nmt.decode.translate.decode_settings), each
    over the one before: the checkpoint's recipe, another recipe's decode section
    (`--decode-from FILE`), the CLI's shortcut flags (`--beam-size 5`) and the --set overrides."""

    def __init__(self, decode_from: Path | None, shortcuts: dict, overrides: list[str]):
        self.decode_from, self.shortcuts, self.overrides = decode_from, shortcuts, overrides

    def of(self, loc: tuple) -> str:
        """Asked only for an error: the --decode-from file is read for its lines then."""
        if override := override_of(self.overrides, loc):
            return f"--set {override}"
        key = ".".join(str(part) for part in loc[1:])
        if loc[:1] == ("decode",) and key in self.shortcuts:  # the flag is named after the key or its section
            flag, value = f"--{key.split('.')[0].replace('_', '-')}", self.shortcuts[key]
            return flag if value is True else f"{flag} {value}"  # a switch such as --sampling takes no value
        if self.decode_from is not None and loc[:1] == ("decode",):  # its decode section replaced the checkpoint's
            text = self.decode_from.read_text(encoding="utf-8")  # (its lines only: no loader of recipe values)
            return KeyPlaces(self.decode_from, text, [], yaml.SafeLoader).of(loc)
        return "the checkpoint's recipe"


def closest_key(root: type[BaseModel], loc: tuple) -> str | None:
    """The known key (dotted, as `loc` spells its parents) nearest in spelling to `loc`'s last
    part, an unknown key; None where no key is near."""
    model: type[BaseModel] | None = root
    for part in loc[:-1]:
        if isinstance(part, int):
            continue  # an item of a list of sections
        field = model.model_fields.get(str(part)) if model else None
        model = _model_in(field.annotation) if field else None
    if model is None:
        return None
    near = difflib.get_close_matches(str(loc[-1]), list(model.model_fields), n=1, cutoff=0.6)
    return ".".join([*(str(part) for part in loc[:-1]), near[0]]) if near else None


def _model_in(annotation) -> type[BaseModel] | None:
    """The section type in a field's annotation (SomeConfig, SomeConfig | None, list[SomeConfig], ...)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in typing.get_args(annotation):
        if found := _model_in(argument):
            return found
    return None
