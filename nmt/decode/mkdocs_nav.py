"""MkDocs' navigation translated for the i18n plugin (mkdocs-static-i18n): the titles of
mkdocs.yml's `nav` (`- Home: index.md`, a section's `- Guide:`) are the site's English in every
language until the language's entry under the plugin's `languages` maps them, in its
`nav_translations`. For a language the plugin lists, each title that entry lacks is added with
its translation, as lines of its own at the end of the entry (or of its `nav_translations`); the
rest of the file, its comments and tags (`!!python/name:...`, `!ENV`) included, stays as it was.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import yaml

from nmt.decode.text.end_marks import without_stop_its_source_lacks
from nmt.errors import NmtError


class _Loader(yaml.SafeLoader):
    """mkdocs.yml's YAML, read as nodes: its tags are left unread."""


def _node(text: str, name: str):
    try:
        return yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as e:
        line = getattr(getattr(e, "problem_mark", None), "line", None)
        raise NmtError(f"{name}:{line + 1 if line is not None else 1}: not valid YAML") from None


def _value(mapping, key: str):
    """A mapping node's value under `key` (None: none, or not a mapping)."""
    if not isinstance(mapping, yaml.MappingNode):
        return None
    return next((value for k, value in mapping.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)


def _titles(nav) -> list[str]:
    """The titles of a `nav` node: each entry's name (`Home` of `- Home: index.md`), sections' too, in order."""
    titles: list[str] = []
    for item in nav.value if isinstance(nav, yaml.SequenceNode) else []:
        if isinstance(item, yaml.MappingNode) and len(item.value) == 1:
            key, value = item.value[0]
            if isinstance(key, yaml.ScalarNode) and key.value.strip() and key.value not in titles:
                titles.append(key.value)
            titles += [title for title in _titles(value) if title not in titles]
    return titles


def _language_entry(root, tag: str):
    """The i18n plugin's entry for the language `tag` under its `languages`, a block mapping (None: not listed)."""
    for plugin in getattr(_value(root, "plugins"), "value", []):
        settings = _value(plugin, "i18n")
        for entry in getattr(_value(settings, "languages"), "value", []):
            locale = _value(entry, "locale")
            if isinstance(locale, yaml.ScalarNode) and locale.value.replace("_", "-").lower() == tag.lower():
                return entry if not entry.flow_style else None
    return None


def _untranslated(text: str, tag: str, name: str) -> tuple:
    """The plugin's entry for `tag` (None: not listed), and the navigation's titles it does not translate yet."""
    root = _node(text, name)
    entry = _language_entry(root, tag)
    if entry is None:
        return None, []
    known = _value(entry, "nav_translations")
    done = {k.value for k, _ in known.value} if isinstance(known, yaml.MappingNode) else set()
    return entry, [title for title in _titles(_value(root, "nav")) if title not in done]


def untranslated_titles(text: str, tag: str, name: str = "mkdocs.yml") -> list[str]:
    """The navigation's titles that the plugin's entry for `tag` does not translate yet ([] where
    the plugin does not list the language, or the site has no `nav`)."""
    return _untranslated(text, tag, name)[1]


def _with_translations(text: str, entry, translations: dict[str, str]) -> str:
    """mkdocs.yml (`text`) with `translations` (a title: its translation) added to the plugin's
    language `entry` (its node)."""
    known = _value(entry, "nav_translations")
    if isinstance(known, yaml.MappingNode) and known.value and not known.flow_style:
        under, indent, prefix = known, known.value[0][0].start_mark.column, ""
    elif known is None:
        under, indent = entry, entry.value[0][0].start_mark.column
        prefix, indent = " " * indent + "nav_translations:\n", indent + 2
    else:
        return text  # (an empty or flow mapping, `nav_translations: {}`, is the user's to write out)
    last = _last_scalar(under).end_mark.index  # (a collection's own end mark may lie on the next entry's line)
    at = text.find("\n", last) + 1 or len(text)
    lines = "".join(f"{' ' * indent}{json.dumps(title, ensure_ascii=False)}: {json.dumps(words, ensure_ascii=False)}\n"
                    for title, words in translations.items())
    head = text[:at] if text[:at].endswith("\n") or not text[:at] else text[:at] + "\n"
    return head + prefix + lines + text[at:]


def _last_scalar(node):
    """The last scalar a node holds, at any depth (a collection's last value's, or its own)."""
    while isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.value:
        node = node.value[-1][1] if isinstance(node, yaml.MappingNode) else node.value[-1]
    return node


def translate_nav(text: str, tag: str, translate: Callable[[list[str]], list[str]], name: str = "mkdocs.yml") -> str:
    """mkdocs.yml with the navigation's titles its entry for `tag` lacks translated by `translate`
    (texts in, translations out), each without a full stop its title lacks."""
    entry, titles = _untranslated(text, tag, name)
    if not titles:
        return text
    translated = [without_stop_its_source_lacks(title, words) or title for title, words in zip(titles, translate(titles))]
    return _with_translations(text, entry, dict(zip(titles, translated)))
