"""Jupyter notebooks (`--input-format ipynb`, the default for .ipynb files): a tutorial, a course's
lesson, a paper's companion notebook, whose prose is in Markdown cells between code cells.

- Each Markdown cell is read as a Markdown page is (nmt.decode.markdown_document): its paragraphs,
  items, headings and table cells translated, its code and math copied.
- Code cells, raw cells, outputs, attachments and metadata are copied: a notebook translated still
  runs as it did, and shows the outputs it showed.
- The notebook is written back as Jupyter writes it: a cell's source as a list of lines or as one
  string, as it was; the file's indentation and key order kept, non-ASCII text written as it is.
"""

from __future__ import annotations

import json
import re

from nmt.decode.markdown_document import MarkdownDocument
from nmt.errors import NmtError

_SOURCE_KEY = re.compile(r'^\s*"source"\s*:')


class NotebookDocument:
    """A notebook read for translation: its Markdown cells' `texts` in, its lines (the notebook's
    JSON) with their translations out (`write`)."""

    def __init__(self, notebook: dict, pages: list[tuple[dict, MarkdownDocument, int]], indent: int | None):
        self.notebook, self.pages = notebook, pages  # pages: (a Markdown cell, its page, its source's first line)
        self.indent = indent

    @classmethod
    def read(cls, lines: list[str], name: str) -> "NotebookDocument":
        text = "\n".join(lines)
        try:
            notebook = json.loads(text)
        except json.JSONDecodeError as e:
            raise NmtError(f"{name}: line {e.lineno}: not a notebook's JSON: {e.msg}") from None
        cells = notebook.get("cells") if isinstance(notebook, dict) else None
        if not isinstance(cells, list) or not all(isinstance(cell, dict) for cell in cells):
            raise NmtError(f'{name}: not a Jupyter notebook: no "cells" list (nbformat 4)')
        source_lines = [number for number, line in enumerate(lines, 1) if _SOURCE_KEY.match(line)]
        pages = []
        for k, cell in enumerate(cells):
            source = cell.get("source", "")
            if cell.get("cell_type") != "markdown":
                continue
            if not isinstance(source, (str, list)) or isinstance(source, list) and not all(isinstance(s, str) for s in source):
                raise NmtError(f"{name}: cell {k + 1}: its source is neither a string nor a list of strings")
            joined = source if isinstance(source, str) else "".join(source)
            key_line = source_lines[k] if len(source_lines) == len(cells) else 0  # (each cell's "source" key, in order)
            first = key_line + (1 if key_line and lines[key_line - 1].rstrip().endswith("[") else 0)
            pages.append((cell, MarkdownDocument.read(joined.split("\n")), first))
        indent = next((len(line) - len(line.lstrip(" ")) for line in lines[1:2] if line.startswith(" ")), None)
        return cls(notebook, pages, indent)

    @property
    def texts(self) -> list[str]:
        return [text for _, page, _ in self.pages for text in page.texts]

    @property
    def markup(self) -> list[bool]:
        return [flag for _, page, _ in self.pages for flag in page.markup]

    @property
    def numbers(self) -> list[int]:
        """Each text's line in the notebook's file (where Jupyter wrote it a line per source line),
        counted from 1."""
        return [first + number - 1 if first else 0 for _, page, first in self.pages for number in page.numbers]

    def write(self, translations: list[str]) -> list[str]:
        at = 0
        for cell, page, _ in self.pages:
            given, at = translations[at:at + len(page.texts)], at + len(page.texts)
            written = "\n".join(page.write(given))
            if isinstance(cell["source"], list):
                cell["source"] = [line + "\n" for line in written.split("\n")]
                cell["source"][-1] = cell["source"][-1][:-1]
                if not cell["source"][-1]:
                    cell["source"].pop()
            else:
                cell["source"] = written
        return json.dumps(self.notebook, indent=self.indent, ensure_ascii=False).split("\n")
