"""A program's messages in JSON in and out (`--input-format json`, the default for .json and .arb
files): the message files of i18next, FormatJS (react-intl), vue-i18n, ngx-translate, Flutter
(.arb), browser extensions (messages.json) and most web frameworks, translated into a file of the
same keys for the target language.

Every string value is a message, at any depth of objects and lists, and is translated (its lines
apart, ICU MessageFormat's plural and select branch by branch: nmt.decode.text.messages; its
placeholders and HTML tags kept: nmt.decode.text.markup), but for what a format keeps for its
programmers:
- Flutter's metadata: a key beginning with "@" (`"@title": {"description": …}`), whose
  `@@locale` is set to the target language;
- a browser extension's `{"message": …, "description": …, "placeholders": …}` and FormatJS'
  `{"defaultMessage": …, "description": …}`: the message alone.
A string that is its own key (Laravel's lang/en.json) is read as Laravel reads it: its
placeholders (`:name`) kept, its plural forms (`:count dog|:count dogs`) the target language's
(nmt.decode.laravel_messages). i18next's plural keys (`files_one`, `files_other`) become the target language's
(nmt.decode.plural_categories): Russian's `files_few` and `files_many` are added with the `other`
form's translation, which a reviewer adapts, and a category the language lacks is left out.

The file is written as it was read: its keys in their order, its indentation, its separators, a
final line break, and non-ASCII text escaped (`\\u00e9`) only where it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nmt.data.languages import language_tag
from nmt.decode.json_style import JsonStyle, read_json, string_lines
from nmt.decode.laravel_messages import LaravelMessage, marked, unmarked
from nmt.decode.plural_categories import ORDER, plural_forms
from nmt.decode.message_file import MessageFile
from nmt.decode.text.messages import as_markup
from nmt.errors import NmtError

_PLURAL_KEY = re.compile(rf"(.+)_({'|'.join(ORDER)})")
_WRAPPERS = {"message": {"description", "placeholders"},  # a browser extension's message
             "defaultMessage": {"description", "id"}}  # FormatJS' extracted message


@dataclass
class _Message(LaravelMessage):
    """One string value to translate, and where it goes."""
    holder: dict | list
    slot: str | int  # its key in `holder`, or its place
    markup: str  # as_markup of its text
    line: int
    key: tuple  # the keys (and places) from the top to it
    placeholders: frozenset = frozenset()  # Laravel's, as the model's side marks them ({:name})
    laravel: bool = False  # a string that is its own key (Laravel's lang/en.json): its plural forms read as Laravel's

    @property
    def text(self) -> str:
        return unmarked(super().text, self.placeholders)


class JsonMessages(MessageFile):
    """A JSON file of messages read for translation: its `texts` in, the file with their
    translations out (`write`)."""

    def __init__(self, top: dict, messages: list[_Message], style: JsonStyle):
        self.top, self.messages, self.style = top, messages, style
        self.warnings: list[str] = []

    @classmethod
    def read(cls, data: bytes, name: str) -> "JsonMessages":
        top, text, style = read_json(data, name)
        if not isinstance(top, dict):
            raise NmtError(f"{name}: not a file of messages (its top level is {_kind(top)}, not an object)")
        # each string value's line, in the order json.loads meets them
        lines = iter([line for line, _ in string_lines(text)])
        messages: list[_Message] = []
        _collect(top, lines, messages, translated=True)
        return cls(top, messages, style)

    def write(self, translations: list[str], target: str) -> bytes:
        translated, forms_added = iter(translations), 0
        for index, message in enumerate(self.messages):
            done, new = (message.translation(translated), 0) if index in self.kept else \
                message.translation_into(translated, target)
            message.holder[message.slot], forms_added = done, forms_added + new
        if forms_added:
            self.warnings.append(f"{forms_added} plural forms added for {target} with the translation of the source's "
                                 "form of their kind, else of its last (Laravel's): review them")
        added = _plural_keys(self.top, target, (), self.earlier)
        if added:
            self.warnings.append(f"{added} plural keys added for {target} with their 'other' key's translation "
                                 "(i18next's): review them")
        if "@@locale" in self.top:  # Flutter's: the language the file is in
            self.top["@@locale"] = language_tag(target).replace("-", "_")
        return self.style.dumps(self.top)


def _kind(value) -> str:
    return {list: "a list", str: "a string", bool: "true or false", type(None): "null"}.get(type(value), "a number")


def _collect(value, lines, messages: list[_Message], translated: bool, path: tuple = ()) -> None:
    """The messages in `value` (an object or list at `path`), in order, each given its line from
    `lines` (every string value's, which it takes in the same order, translated or not)."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    wrapper = _wrapped_message(value) if isinstance(value, dict) else None
    for key, item in items:
        keep = translated and not (isinstance(key, str) and key.startswith("@")) and (wrapper is None or key == wrapper)
        if isinstance(item, str):
            line = next(lines, 0)
            laravel = key == item and not path
            text, placeholders = marked(item) if laravel else (item, frozenset())
            message = _Message(value, key, as_markup(text), line, (*path, key), placeholders, laravel) if keep else None
            if message is not None and message.to_translate:
                messages.append(message)
        elif isinstance(item, (dict, list)):
            _collect(item, lines, messages, keep, (*path, key))


def _wrapped_message(value: dict) -> str | None:
    """The key of the one message in an object that wraps it with notes for translators, if it is
    such an object."""
    for key, others in _WRAPPERS.items():
        if isinstance(value.get(key), str) and set(value) - {key} <= others:
            return key
    return None


def _plural_keys(value, target: str, path: tuple, earlier: dict) -> int:
    """i18next's plural keys in `value` (at `path`) and the objects inside it made the target
    language's (in place, each group where its first key was), a key added taking its text from
    `earlier` translations where they have it; how many were added from `other`."""
    added = 0
    for key, item in value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ():
        added += _plural_keys(item, target, (*path, key), earlier)
    if not isinstance(value, dict):
        return added
    groups: dict[str, dict[str, str] | None] = {}
    for key, item in value.items():
        match = _PLURAL_KEY.fullmatch(key) if isinstance(key, str) else None
        if match and isinstance(item, str) and not match.group(1).endswith("_ordinal"):
            groups.setdefault(match.group(1), {})[match.group(2)] = item
    groups = {base: forms for base, forms in groups.items() if "other" in forms and len(forms) > 1}
    if not groups:
        return added
    rebuilt: dict = {}
    for key, item in value.items():
        match = _PLURAL_KEY.fullmatch(key) if isinstance(key, str) else None
        base = match.group(1) if match else None
        if base not in groups:
            rebuilt[key] = item
        elif groups[base] is not None:  # the group's first key: the whole group, where it was
            forms, new = plural_forms(target, groups[base])
            for category, form in forms.items():
                name = f"{base}_{category}"
                kept = earlier.get((*path, name)) if category in new else None
                rebuilt[name] = kept.text if kept is not None else form
                added += category in new and (*path, name) not in earlier
            groups[base] = None
    value.clear()
    value.update(rebuilt)
    return added
