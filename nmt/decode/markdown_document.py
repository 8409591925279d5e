"""Markdown documents (`--input-format markdown`, the default for .md, .mdx and .markdown files):
a README or a documentation site's page, translated as its reader sees it.

- Prose is read as wrapped text is (nmt.decode.wrapped): each paragraph, list item or block quote
  whole, its lines joined (a list item's indented lines too), and written back over as many lines;
  its marker ("- ", "1. ", "> ") kept in front. Inline marks, code spans, links, shortcodes and
  math are carried by decode.markdown (nmt.decode.text.markdown), on for this format.
- A unit without a mark at its end (a heading, a list's item, a table's cell) is written without
  the full stop a model may end its translation with.
- A heading is a unit of its own, its anchor kept (`## Install {#install}`); so is an
  admonition's title, a content tab's, a footnote's text and the page's title and description in
  its front matter (nmt.decode.markdown_lines).
- An MkDocs admonition's or content tab's body (the indented lines under `!!! note`, `=== "Tab"`)
  is read as a page of its own and written back indented; so is a footnote's text with the
  indented lines after it, written after its label (`[^1]: `).
- An HTML block (a line that opens with a tag, through the next blank line: MDX's components too)
  is read as an HTML page is (nmt.decode.html_document): each block's text whole, its tags kept.
- A table's cells are translated one by one, its pipes and its separator row kept.
- A MyST directive whose body is prose (```` ```{note} ````, `:::{dropdown} Title`: Jupyter
  Book's and Sphinx's MyST pages) has its title translated, its options copied and its body
  read as a page of its own; any other (`{code-cell}`, `{math}`, `{eval-rst}`) is copied.
- Copied as they stand: fenced code blocks (``` or ~~~), indented code blocks, math blocks
  (`$$`), the code and raw blocks of Jekyll's and Hugo's templates, front matter's other fields,
  HTML comments, MDX's `import` and `export` statements, link definitions ("[id]: https://..."),
  abbreviations ("*[HTML]: ..."), attribute lines ("{: .note}"), a heading's underline and
  thematic breaks ("---", "***"). A site reads each of them as code or data: a translated
  `import` line stops an MDX page from building.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nmt.decode import markdown_lines
from nmt.decode.html_document import HtmlDocument
from nmt.decode.markdown_lines import Framed
from nmt.decode.text.end_marks import without_stop_its_source_lacks
from nmt.decode.text.markdown import CODE_SPAN
from nmt.decode.wrapped import Wrapped

_FENCE = re.compile(r"\s*(?:>\s?)*\s*(`{3,}|~{3,})")  # indented (a list item's code) or quoted too
_QUOTED = re.compile(r"^\s*(?:>\s?)*")
_LINK_DEFINITION = re.compile(r"\s*\[([^\]]+)\]:\s*\S+")
_ABBREVIATION = re.compile(r"\*\[[^\]]+\]:")
_WHOLE_BRACES = re.compile(r"\s*\{[^{}]*\}\s*$")  # "{: .note}", "{#id}", MDX's "{/* a comment */}"
_RULE = re.compile(r"\s*(?:=+|-+|(?:\*\s*){3,}|(?:_\s*){3,})\s*$")  # a heading's underline, a thematic break
_HEADING = re.compile(r"\s{0,3}#{1,6}(?:\s|$)")
_TABLE_SEPARATOR = re.compile(r"\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?\s*$|\s*\|\s*:?-+:?\s*\|\s*$")
_LIST_ITEM = re.compile(r"\s*(?:[-*+]|\d{1,9}[.)])\s")
_HTML_START = re.compile(r"\s{0,3}</?[A-Za-z][\w.-]*(?:\s|/?>|$)")
# CommonMark's HTML blocks of other tags: one whose content is raw (1st kind), or a whole tag alone
# on its line (7th kind); "<small>(source: [a link](url))</small>" is a paragraph, its link Markdown's
_RAW_TAG = re.compile(r"\s{0,3}<(?:script|pre|style|textarea)(?:\s|>|$)", re.I)
_TAG_ON_ITS_OWN = re.compile(r"\s{0,3}(?:<[A-Za-z][\w.-]*(?:\s[^<>]*)?/?>|</[A-Za-z][\w.-]*\s*>)\s*$")
# a block-level tag, which starts an HTML block even right after a paragraph's line (CommonMark's 6th kind)
_BLOCK_TAG = re.compile(r"\s{0,3}</?(?:address|article|aside|blockquote|center|details|dialog|dd|div|dl|dt|fieldset|"
                        r"figcaption|figure|footer|form|h[1-6]|header|hr|li|main|nav|ol|p|section|summary|table|tbody|"
                        r"td|tfoot|th|thead|tr|ul)(?:\s|/?>|$)", re.I)
_JSX_TAG = re.compile(r"\s*</?[A-Za-z][\w.-]*(?:\s.*)?>\s*$")
_TAG_ALONE = re.compile(r"\s*<[A-Za-z][\w.-]*\s*$")
_ESM = re.compile(r"(?:import\s+(?:[\w*{][^'\"]*\sfrom\s*)?['\"]|export\s+(?:const|let|var|function|default|class|async|\{|\*))")
_TEMPLATE_OPEN = re.compile(r"\s*(\{\{<|\{\{%|\{%)")
_TEMPLATE_CLOSE = {"{{<": ">}}", "{{%": "%}}", "{%": "%}"}
_MATH = re.compile(r"\s*\$\$")
_SHORT_REFERENCE = re.compile(r"(?<![\]\\])(!?\[)([^\[\]\n]+)\](?:\[\])?(?![(\[:])")  # [label], [label][]
_FOOTNOTE = re.compile(r"(\s{0,3}\[\^[^\]\s]+\]:\s*)(.*)$")  # "[^1]: its text", or "[^1]:" and indented lines
_COMMENT = re.compile(r"<!--.*?-->")
# a MyST directive (```{note}, :::{tip} Title; Jupyter Book's and Sphinx's MyST pages): its name, its title
_MYST_FENCE = re.compile(r"(\s*)(`{3,}|:{3,})\{([\w:-]+)\}(.*)$")
# the MyST directives whose bodies are prose (Sphinx's admonitions, sphinx-design's, Jupyter Book's);
# any other ({code-cell}, {math}, {eval-rst}, {figure}'s options, ...) is copied as a fence is
MYST_PROSE = {"note", "warning", "tip", "important", "caution", "danger", "attention", "hint", "error", "admonition",
              "seealso", "topic", "sidebar", "margin", "epigraph", "dropdown", "tab-item", "card", "grid-item-card",
              "versionadded", "versionchanged", "deprecated", "exercise", "solution", "proof", "prf:proof", "prf:theorem",
              "prf:definition", "prf:lemma", "prf:example", "example", "list-table", "grid", "grid-item", "tab", "tab-set",
              "only", "div", "toggle", "figure", "figure-md"}
_MYST_NOT_TITLES = {"figure", "figure-md", "only", "div", "grid"}  # (their argument is a path, an expression, a class)
_SNIPPET = re.compile(r"\s*<<<\s")  # VitePress' "<<< @/snippets/a.js": a file's code
_TEMPLATE_CODE = re.compile(  # a Jekyll or Hugo template's block of code: {% highlight js %}, {{< code-toggle >}}
    r"\s*(?:\{%-?\s*(highlight|raw|comment|codeblock)\b"
    r"|\{\{[<%]\s*([\w-]*(?:code|highlight|mermaid|katex|math|chart|diagram)[\w-]*)(?=[\s/%>]))")


@dataclass
class _Segment:
    kind: str  # "copied", "prose" (a Wrapped), "html" (an HtmlDocument), "table", "framed" (a Framed line),
    lines: list[str]  # "nested" (a MarkdownDocument of lines indented by `indent`) or "title" (reStructuredText's)
    reader: Wrapped | HtmlDocument | Framed | MarkdownDocument | None = None  # what reads and writes its units
    indent: str = ""
    head: str | None = None  # a nested segment's first line's start in place of `indent` (a footnote's "[^1]: ")


class MarkdownDocument:
    """A Markdown document read for translation: its `texts` (each prose unit's, each table cell's,
    in order) in, its lines with their translations out (`write`)."""

    def __init__(self, segments: list[_Segment], starts: list[int], labels: frozenset[str] = frozenset()):
        self.segments, self.starts = segments, starts  # starts: each segment's first line, from 0
        self.labels = labels  # the labels its link definitions define, in _label's form

    @classmethod
    def read(cls, lines: list[str], labels: frozenset[str] | None = None, mdx: bool = False) -> "MarkdownDocument":
        """`labels`: the link labels defined around these lines (an MkDocs admonition's body is
        read with its page's). `mdx`: read as MDX reads a page (an .mdx file): an indented line
        is not code, and a component may be indented."""
        if labels is None:
            labels = frozenset(_label(match.group(1)) for line in lines
                               if (match := _LINK_DEFINITION.match(line)) and not match.group(1).startswith("^"))
        blocks = _Blocks(lines, labels, mdx)
        blocks.read()
        for segment in blocks.segments:
            if segment.kind == "prose":
                segment.reader = Wrapped.read(segment.lines, markdown=True)
        return cls(blocks.segments, blocks.starts, labels)

    @property
    def texts(self) -> list[str]:
        """Each unit's text, a shortcut reference link in it written in full ("[label]" as
        "[label][label]"), so that its words are translated and its label kept."""
        return [self._full_references(text) for segment in self.segments for text, _ in _units(segment)]

    def _full_references(self, text: str) -> str:
        if not self.labels or "[" not in text:
            return text
        parts = CODE_SPAN.split(text)  # (with each span's backticks as a group): the text, a span's ticks, ...
        spans = [match.group() for match in CODE_SPAN.finditer(text)]
        out = []
        for k, part in enumerate(parts[::2]):
            out.append(_SHORT_REFERENCE.sub(lambda m: f"{m.group(1)}{m.group(2)}][{m.group(2)}]"
                                            if _label(m.group(2)) in self.labels else m.group(), part))
            if k < len(spans):
                out.append(spans[k])
        return "".join(out)

    @property
    def markup(self) -> list[bool]:
        """Whether each text is read as markup: an HTML block's is (Markdown's marks are not read
        in it); any other is Markdown, its inline HTML tags read with its marks (a tag in
        ``<meta>`` is code, `<!-- ignore -->` a note: nmt.decode.text.markup.mark)."""
        flags = []
        for segment in self.segments:
            if segment.kind == "nested":
                flags += segment.reader.markup
            else:
                flags += [segment.kind == "html" for _ in _units(segment)]
        return flags

    @property
    def numbers(self) -> list[int]:
        """Each text's line, counted from 1 (for warnings)."""
        return [start + 1 + offset for segment, start in zip(self.segments, self.starts)
                for _, offset in _units(segment)]

    def write(self, translations: list[str]) -> list[str]:
        out, at = [], 0
        for segment in self.segments:
            units = _units(segment)
            given, at = translations[at:at + len(units)], at + len(units)
            if segment.kind in ("prose", "framed", "table", "title"):  # a heading, a list's item: no full stop added
                given = [without_stop_its_source_lacks(_shown(self._full_references(text)), translation) for (text, _), translation in zip(units, given)]
            if segment.kind in ("prose", "html", "title"):
                out += segment.reader.write(given)
            elif segment.kind == "framed":
                out.append(segment.reader.write(given))
            elif segment.kind == "nested":
                out += [(segment.head if k == 0 and segment.head is not None else segment.indent) + line
                        if line.strip() else line for k, line in enumerate(segment.reader.write(given))]
            elif segment.kind == "table":
                out += _table_written(segment.lines, given)
            else:
                out += segment.lines
        return out


def _shown(text: str) -> str:
    """A unit's text as its reader sees its end: without a link's target ("[Details](a.md)",
    "[Details][id]"), an emoji's shortcode (":tada:") or the marks closing a span ("**", "`")."""
    text = re.sub(r"\]\([^()]*(?:\([^()]*\)[^()]*)*\)|\]\[[^\]]*\]", "", text)
    return re.sub(r"(?:\s*:[a-z0-9+][\w+-]*:)+$", "", text.rstrip()).rstrip("*_`~ ")


def _label(text: str) -> str:
    """A link label as Markdown matches it: case and runs of spaces aside."""
    return " ".join(text.split()).casefold()


class _Blocks:
    """Markdown's blocks, read line by line into segments."""

    def __init__(self, lines: list[str], labels: frozenset[str], mdx: bool):
        self.lines, self.labels, self.mdx = lines, labels, mdx
        self.segments: list[_Segment] = []
        self.starts: list[int] = []

    def add(self, kind: str, start: int, end: int, reader=None, indent: str = "", head: str | None = None) -> int:
        """Lines start..end as a segment (prose and copied lines joining the segment before them
        of their kind); returns `end`."""
        last = self.segments[-1] if self.segments else None
        if reader is None and last is not None and last.kind == kind and kind in ("prose", "copied"):
            last.lines += self.lines[start:end]
        else:
            self.segments.append(_Segment(kind, self.lines[start:end], reader, indent, head))
            self.starts.append(start)
        return end

    def framed(self, i: int, framed: Framed) -> int:
        return self.add("framed", i, i + 1, framed) if framed.texts else self.add("copied", i, i + 1)

    def read(self) -> None:
        lines = self.lines
        i = self.front_matter()
        in_list = False  # the prose before the last blank line was a list item
        while i < len(lines):
            line = lines[i]
            blank_before = i == 0 or not lines[i - 1].strip() or self.segments[-1].kind != "prose"
            end = self.block(i, blank_before, in_list)
            if end is not None:
                i, in_list = end, False
                continue
            if line.strip():
                in_list = bool(_LIST_ITEM.match(line)) or (in_list and line[:1].isspace())
            i = self.add("prose", i, i + 1)

    def front_matter(self) -> int:
        """The front matter's lines (YAML between "---" lines at the top, or TOML between "+++"
        lines): its page's words framed, the rest copied; returns the line after it."""
        lines = self.lines
        if not lines or lines[0].strip() not in ("---", "+++"):
            return 0
        mark = lines[0].strip()
        end = next((j for j in range(1, len(lines)) if lines[j].strip() in (mark, "..." if mark == "---" else mark)),
                   None)
        if end is None:
            return 0
        self.add("copied", 0, 1)
        for j in range(1, end):
            field = markdown_lines.front_matter_field(lines[j], toml=mark == "+++")
            self.framed(j, field) if field else self.add("copied", j, j + 1)
        return self.add("copied", end, end + 1)

    def block(self, i: int, blank_before: bool, in_list: bool) -> int | None:
        """The line after the block that starts at line i, once added; None where line i is prose.
        Blocks of several lines first: code, comments, a template's code, math, MDX's statements
        and components, HTML, tables."""
        lines, line = self.lines, self.lines[i]
        myst = _MYST_FENCE.match(line)
        if myst and myst.group(3).lower().split(":")[-1] in MYST_PROSE:
            return self.myst_directive(i, myst)
        fence = _FENCE.match(line)
        if fence:
            mark = fence.group(1)
            unquoted = [_QUOTED.sub("", text).strip() for text in lines[i + 1:]]
            end = i + 1 + next((j for j, text in enumerate(unquoted) if text.startswith(mark[0] * len(mark))
                                and not text.strip(mark[0])), len(unquoted) - 1)
            return self.add("copied", i, end + 1)
        if line.lstrip().startswith("<!--"):
            return self.add("copied", i, self.through(i, lambda text: "-->" in text) + 1)
        template_code = _TEMPLATE_CODE.match(line)
        if template_code and not re.search(r"/\s*[%>]\}\}\s*$", line):  # (not one closed in itself: "/>}}")
            name = re.escape(template_code.group(1) or template_code.group(2))
            closing = re.compile(rf"\{{%-?\s*end{name}\b|\{{\{{[<%]\s*/{name}\s*[%>]\}}\}}")
            end = next((j for j in range(i + 1, len(lines)) if closing.search(lines[j])), None)
            if end is not None:
                return self.add("copied", i, end + 1)
        opener = _TEMPLATE_OPEN.match(line)
        if opener and _TEMPLATE_CLOSE[opener.group(1)] not in line[opener.end():]:  # a shortcode over several lines
            closer = _TEMPLATE_CLOSE[opener.group(1)]
            end = next((j for j in range(i + 1, len(lines)) if closer in lines[j]), None)
            if end is not None:
                return self.add("copied", i, end + 1)
        if _MATH.match(line):
            one_line = line.strip() != "$$" and line.rstrip().endswith("$$")
            end = i if one_line else self.through(i + 1, lambda text: "$$" in text) if i + 1 < len(lines) else i
            return self.add("copied", i, end + 1)
        if blank_before and not in_list and not self.mdx and line.startswith(("    ", "\t")) and line.strip():
            return self.add("copied", i, self.indented_end(i, ""))
        if blank_before and _ESM.match(line):
            return self.add("copied", i, next((j for j in range(i, len(lines)) if not lines[j].strip()), len(lines)))
        if _TAG_ALONE.match(line):  # a tag whose attributes follow on lines of their own (MDX's props)
            end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip().endswith(">")
                        and not lines[j].rstrip().endswith("=>")), None)
            if end is not None:
                return self.add("copied", i, end + 1)
        if _JSX_TAG.match(line) and "={" in line:  # a component's tag with props that are code: <Tabs values={[...]}>
            return self.add("copied", i, i + 1)
        if (blank_before or _BLOCK_TAG.match(line)) and self._html_block(line, in_list):
            end = next((j for j in range(i + 1, len(lines)) if not lines[j].strip()), len(lines))
            return self.add("html", i, end, HtmlDocument.read(lines[i:end]))
        if "|" in line and i + 1 < len(lines) and _TABLE_SEPARATOR.match(lines[i + 1]):
            end = i + 1
            while end + 1 < len(lines) and "|" in lines[end + 1] and lines[end + 1].strip():
                end += 1
            return self.add("table", i, end + 1)
        return self.line(i)

    def myst_directive(self, i: int, opening: re.Match) -> int:
        """A MyST directive whose body is the page's words (```{note}, :::{dropdown} Title, as
        Jupyter Book and Sphinx's MyST read them): its title translated, its options (`:class:
        tip`) copied, its body read as a page of its own, up to the fence that closes it."""
        lines, mark, indent = self.lines, opening.group(2), opening.group(1)
        close = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(mark[0] * len(mark))
                      and not lines[j].strip().strip(mark[0])), len(lines))
        title = opening.group(4).strip()
        if title and any(char.isalpha() for char in title) and opening.group(3).lower() not in _MYST_NOT_TITLES:
            start = lines[i].index(title, opening.start(4))
            self.add("framed", i, i + 1, Framed([lines[i][:start], title, lines[i][start + len(title):]]))
        else:
            self.add("copied", i, i + 1)
        start = i + 1
        while start < close and re.match(r"\s*:[\w-]+:(?:\s|$)", lines[start]):
            start += 1  # (its options)
        if start < close and re.match(r"\s*---\s*$", lines[start]):  # (options as YAML between "---" lines)
            start = next((j + 1 for j in range(start + 1, close) if re.match(r"\s*---\s*$", lines[j])), start)
        if start > i + 1:
            self.add("copied", i + 1, start)
        if close > start:
            body = [text[len(indent):] if text.startswith(indent) else text.lstrip() for text in lines[start:close]]
            self.add("nested", start, close, MarkdownDocument.read(body, self.labels, self.mdx), indent)
        return self.add("copied", close, close + 1) if close < len(lines) else close

    def _html_block(self, line: str, in_list: bool) -> bool:
        """Whether `line` starts an HTML block: by CommonMark's rules (a block-level tag, a tag
        whose content is raw, a tag alone on its line), indented in a list's item too; in MDX,
        any tag (JSX)."""
        if self.mdx:
            return bool(_HTML_START.match(line.lstrip() if line.lstrip().startswith("<") else line))
        start = line.lstrip() if in_list and line.lstrip().startswith("<") else line
        return bool(_BLOCK_TAG.match(start) or _RAW_TAG.match(start) or _TAG_ON_ITS_OWN.match(start))

    def line(self, i: int) -> int | None:
        """The line after line i where it is a block of its own (copied, or its words framed by
        syntax), once added; None where it is prose."""
        lines, line = self.lines, self.lines[i]
        if (_RULE.match(line) or _ABBREVIATION.match(line) or _SNIPPET.match(line) or _WHOLE_BRACES.match(line)
                or markdown_lines.is_directive_end(line)):
            return self.add("copied", i, i + 1)
        mkdocs = markdown_lines.mkdocs_block(line)
        if mkdocs:
            self.framed(i, mkdocs)
            indent = line[:len(line) - len(line.lstrip())] + "    "
            end = self.indented_end(i + 1, indent) if i + 1 < len(lines) else i + 1
            if end > i + 1:
                body = [text[len(indent):] if text.strip() else "" for text in lines[i + 1:end]]
                self.add("nested", i + 1, end, MarkdownDocument.read(body, self.labels, self.mdx), indent)
            return end
        footnote = _FOOTNOTE.match(line)
        if footnote:  # its text and the indented lines after it: a page of its own, written after its label
            indent = line[:len(line) - len(line.lstrip())] + "    "
            end = self.indented_end(i + 1, indent) if i + 1 < len(lines) else i + 1
            body = [text[len(indent):] if text.strip() else "" for text in lines[i + 1:end]]
            if not footnote.group(2).strip():
                self.add("copied", i, i + 1)
                return self.add("nested", i + 1, end, MarkdownDocument.read(body, self.labels, self.mdx), indent) \
                    if body else i + 1
            document = MarkdownDocument.read([footnote.group(2), *body], self.labels, self.mdx)
            return self.add("nested", i, end, document, indent, head=footnote.group(1))
        if _LINK_DEFINITION.match(line):
            return self.add("copied", i, i + 1)
        for frame in (markdown_lines.directive, markdown_lines.template_line, markdown_lines.alert):
            framed = frame(line)
            if framed:
                return self.framed(i, framed)
        if _HEADING.match(line):
            framed = markdown_lines.heading(line)
            return self.framed(i, framed) if framed else self.add("copied", i, i + 1)
        return None

    def through(self, i: int, ends) -> int:
        """The first line from i on for which `ends` holds (the last line where none does)."""
        return next((j for j in range(i, len(self.lines)) if ends(self.lines[j])), len(self.lines) - 1)

    def indented_end(self, i: int, indent: str) -> int:
        """The line after the block of lines from i indented past `indent` (by four spaces or a
        tab where `indent` is empty) or blank; blank lines at its end are left out."""
        starts = (indent,) if indent else ("    ", "\t")
        end = i
        while end < len(self.lines) and (self.lines[end].startswith(starts) or not self.lines[end].strip()):
            end += 1
        while end > i and not self.lines[end - 1].strip():
            end -= 1
        return end


def _units(segment: _Segment) -> list[tuple[str, int]]:
    """(text, its line in the segment) of each unit a segment translates."""
    if segment.kind in ("prose", "html", "nested", "title"):
        return [(text, number - 1) for text, number in zip(segment.reader.texts, segment.reader.numbers)]
    if segment.kind == "framed":
        return [(text, 0) for text in segment.reader.texts]
    if segment.kind == "table":
        return [(cell.strip().replace("\\|", "|"), offset) for offset, line in enumerate(segment.lines)
                if not _TABLE_SEPARATOR.match(line) for cell in _cells(line) if _translated(cell)]
    return []


def _cells(row: str) -> list[str]:
    """A table row cut at its pipes ("\\|" is a pipe in a cell's text): its cells, and the
    whitespace outside its first and last pipes."""
    return re.split(r"(?<!\\)\|", row)


def _translated(cell: str) -> bool:
    return any(char.isalpha() for char in cell)


def _table_written(rows: list[str], translations: list[str]) -> list[str]:
    """The table's rows with each translated cell's text replaced, its padding and pipes kept."""
    out, given = [], iter(translations)
    for row in rows:
        if _TABLE_SEPARATOR.match(row):
            out.append(row)
            continue
        cells = []
        for cell in _cells(row):
            if _translated(cell):
                lead, trail = cell[:len(cell) - len(cell.lstrip())], cell[len(cell.rstrip()):]
                cell = lead + next(given).replace("|", "\\|") + trail
            cells.append(cell)
        out.append("|".join(cells))
    return out
