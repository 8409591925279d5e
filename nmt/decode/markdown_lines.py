"""The lines of a Markdown page whose words are framed by syntax a documentation site reads
(nmt.decode.markdown_document): each is cut into parts, the words translated and the syntax
around them copied.

- A heading's marker and its anchor or attributes: `## Install {#install}` (Docusaurus, MkDocs,
  Hugo, Pandoc), `## Install ##`. A page's links point at the anchor, so it stays.
- The page's title and description in its front matter (`title:`, `description:`,
  `sidebar_label:`, `summary:`, `linkTitle:`, ...: the page's words that a site shows), and a home
  page's words nested under its fields (VitePress' `hero:` `text:` and `tagline:`, `features:`'
  `title:` and `details:`, a button's `text:`), in YAML (quoted as it must be) or Hugo's TOML;
  every other field is the site's data and is copied.
- An admonition's title: `:::note[Before you start]` and `:::tip Before you start` (Docusaurus,
  VitePress), `!!! warning "Old version"` and `??? note "Details"` (MkDocs), a content tab's
  `=== "Windows"`.
- A callout's title (Obsidian's `> [!tip] Title`), and GitHub's alert (`> [!NOTE]`) copied.
- A shortcode or include on a line of its own, where its words are the values of named
  parameters: `{{< figure src="dog.png" caption="A dog" >}}` (Hugo), `{% include note.html
  content="..." %}` (Jekyll); its other parameters are paths and names, copied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

FRONT_MATTER_TEXT = ("title", "subtitle", "description", "summary", "excerpt", "sidebar_label",
                     "pagination_label", "linkTitle")  # the fields a site shows as the page's words
# and, nested (a home page's hero, features and buttons: VitePress, Docusaurus), these too
NESTED_TEXT = (*FRONT_MATTER_TEXT, "tagline", "details", "text", "alt")
TEMPLATE_TEXT = ("title", "caption", "alt", "content", "description", "summary", "text", "label")

_ATTRIBUTES = r"\{:?\s*(?:[#.]|[\w-]+=)[^{}]*\}"  # {#id}, {: .class}, { data-toc-label="Install" }
_HEADING = re.compile(rf"(\s{{0,3}}#{{1,6}}\s+)(.*?)(\s*(?:{_ATTRIBUTES}|(?<=\s)#+))?\s*$")
_DIRECTIVE = re.compile(r"(\s*:{3,}\s*[\w-]+)(?:(\[)(.*)(\].*)|(\s+)(.*?)(?:\s*\{[^{}]*\})?)?\s*$")  # :::note[Title], ::: tip Title {open}
_MKDOCS_BLOCK = re.compile(r'(\s*(?:!!!|\?\?\?\+?)(?:\s+[\w-]+)+|\s*===[!+]?)(?:(\s+")(.*)("))?\s*$')
_ALERT = re.compile(r"(\s*(?:>\s*)+\[![\w-]+\][+-]?)(?:(\s+)(.*?))?\s*$")  # "> [!NOTE]", "> [!tip] Title"
_YAML_FIELD = re.compile(rf"({'|'.join(FRONT_MATTER_TEXT)}|\s*(?:-\s+)?(?<=\s)(?:{'|'.join(NESTED_TEXT)}))(\s*:\s+)(.*?)\s*$")
_TOML_FIELD = re.compile(rf'({"|".join(FRONT_MATTER_TEXT)})(\s*=\s*")((?:[^"\\]|\\.)*)(")\s*$')
_TEMPLATE_LINE = re.compile(r"\s*(\{\{[<%]|\{%)(?:(?!\{\{|\{%).)*(?:[%>]\}\}|%\})\s*$")
_TEMPLATE_VALUE = re.compile(rf'(\s(?:{"|".join(TEMPLATE_TEXT)})=")([^"]*)(")')
_YAML_PLAIN_UNSAFE = re.compile(r"^[\s\-?:,\[\]{}#&*!|>'\"%@`]|: |\s#|:$|\s$")


@dataclass
class Framed:
    """A line as parts: copied syntax and words to translate, alternately (parts[1::2] are the
    words); `quote` writes a translation as the syntax around it must hold it."""
    parts: list[str]
    quote: Callable[[str], str] = str

    @property
    def texts(self) -> list[str]:
        return self.parts[1::2]

    def write(self, translations: list[str]) -> str:
        parts = list(self.parts)
        parts[1::2] = [self.quote(translation) for translation in translations]
        return "".join(parts)


def _words(text: str) -> bool:
    return any(char.isalpha() for char in text)


def heading(line: str) -> Framed | None:
    match = _HEADING.match(line)
    if not match or not _words(match.group(2)):
        return None
    return Framed([match.group(1), match.group(2), line[match.end(2):]])


def directive(line: str) -> Framed | None:
    """An admonition's opening line (`:::note`, `::: tip Title`), its title as its words."""
    match = _DIRECTIVE.match(line)
    if not match:
        return None
    if match.group(2) and _words(match.group(3)):
        return Framed([match.group(1) + "[", match.group(3), match.group(4)])
    if match.group(5) and _words(match.group(6)):
        return Framed([match.group(1) + match.group(5), match.group(6), line[match.end(6):]])
    return Framed([line])


def is_directive_end(line: str) -> bool:
    return re.fullmatch(r"\s*:{3,}\s*", line) is not None


def mkdocs_block(line: str) -> Framed | None:
    """An MkDocs admonition's (`!!! note "Title"`, `??? tip`) or content tab's (`=== "Linux"`)
    opening line; its body is the indented lines after it."""
    match = _MKDOCS_BLOCK.match(line)
    if not match:
        return None
    if match.group(3) and _words(match.group(3)):
        return Framed([match.group(1) + match.group(2), match.group(3), line[match.end(3):]],
                      quote=lambda text: text.replace('"', "'"))  # the title ends at the next quote
    return Framed([line])


def alert(line: str) -> Framed | None:
    """GitHub's alert ("> [!NOTE]"), copied, or Obsidian's callout with its title ("> [!tip] Title")."""
    match = _ALERT.match(line)
    if not match:
        return None
    if match.group(3) and _words(match.group(3)):
        return Framed([match.group(1) + match.group(2), match.group(3), line[match.end(3):]])
    return Framed([line])


def template_line(line: str) -> Framed | None:
    """A shortcode, include or template tag alone on its line: its named text values as its words,
    or the whole line copied."""
    if not _TEMPLATE_LINE.fullmatch(line):
        return None
    parts, at = [], 0
    for match in _TEMPLATE_VALUE.finditer(line):
        if _words(match.group(2)):
            parts += [line[at:match.end(1)], match.group(2)]
            at = match.start(3)
    return Framed([*parts, line[at:]], quote=lambda text: text.replace('"', "'"))


def front_matter_field(line: str, toml: bool) -> Framed | None:
    """A front matter's line holding the page's words (a title, a description), or None."""
    if toml:
        match = _TOML_FIELD.fullmatch(line)
        if not match or not _words(match.group(3)):
            return None
        return Framed([match.group(1) + match.group(2), match.group(3), match.group(4)], quote=_toml_quoted)
    match = _YAML_FIELD.fullmatch(line)
    if not match:
        return None
    value = match.group(3)
    head = match.group(1) + match.group(2)
    if len(value) >= 2 and value[0] == value[-1] == '"' and '"' not in value[1:-1].replace('\\"', ""):
        text, quote = value[1:-1], _yaml_double_quoted
    elif len(value) >= 2 and value[0] == value[-1] == "'" and "'" not in value[1:-1].replace("''", ""):
        text, quote = value[1:-1].replace("''", "'"), _yaml_single_quoted
    elif value and not _YAML_PLAIN_UNSAFE.search(value):
        text, quote = value, _yaml_plain
    else:  # a block scalar, a list, an anchor: copied
        return None
    if not _words(text) or "\\" in text:
        return None
    return Framed([head, text, ""], quote=quote)


def _yaml_double_quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _yaml_single_quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _yaml_plain(text: str) -> str:
    """A translation written plain where YAML reads it back as the same string, else quoted."""
    plain = text and not _YAML_PLAIN_UNSAFE.search(text) and text.lower() not in (
        "true", "false", "yes", "no", "on", "off", "null", "~")
    try:
        float(text)
        plain = False
    except ValueError:
        pass
    return text if plain else _yaml_double_quoted(text)


def _toml_quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
