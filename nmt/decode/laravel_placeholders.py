"""Laravel's placeholders (`:attribute`, `:Name`, `:COUNT`, which Laravel replaces by name in any
case) given to the model as placeholders it keeps (`{:name}`), and written back as the file has
them: in its PHP language files (nmt.decode.php_messages) and its JSON strings (json_messages)."""

from __future__ import annotations

import re

# a colon and a name, not after a letter, a digit, a colon or a slash ("10:30", "http://")
_PLACEHOLDER = re.compile(r"(?<![\w:/\\]):[A-Za-z_]\w*")
_MARKED = re.compile(r"\{(:[A-Za-z_]\w*)\}")  # as the model's side sees one: a {placeholder}


def marked(text: str) -> tuple[str, frozenset]:
    """`text` with its placeholders marked (`:name` → `{:name}`), and those placeholders; a text
    that has a `{:` of its own is left as it is."""
    found = frozenset(_PLACEHOLDER.findall(text)) if "{:" not in text else frozenset()
    return (_PLACEHOLDER.sub(lambda m: "{" + m.group(0) + "}", text) if found else text), found


def unmarked(text: str, placeholders: frozenset) -> str:
    """A text with its placeholders as the file writes them (`{:name}` → `:name`)."""
    return _MARKED.sub(lambda m: m.group(1) if m.group(1) in placeholders else m.group(0), text) if placeholders else text
