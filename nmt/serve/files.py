"""Files through LibreTranslate's API (`POST /translate_file`, then `GET /download_file/NAME`):
a text file (.txt) translated line by line, subtitles (.srt, .vtt) cue by cue with their
numbers and timings kept (nmt.decode.subtitles), HTML documents (.html, .htm) block by block
with their markup kept (nmt.decode.html_document), Markdown, reStructuredText and AsciiDoc
documents (.md, .markdown, .mdx, .rst, .adoc, .asciidoc) block by block with their syntax kept
(nmt.decode.markdown_document, rst_document, asciidoc_document), Jupyter notebooks (.ipynb) by
their Markdown cells, their code copied (nmt.decode.notebook_document), e-books (.epub) chapter by chapter likewise
(nmt.decode.epub_document), and Word documents (.docx, where python-docx is installed) paragraph
by paragraph with their formatting kept (nmt.decode.docx_document), and PowerPoint presentations,
Excel workbooks and OpenDocument files (.pptx, .xlsx, .odt, .odp, .ods, where lxml is installed)
likewise (nmt.decode.pptx_document, xlsx_document, odf_document), and PDF files (.pdf, where pdfminer.six, pypdf and reportlab are
installed) paragraph by paragraph, drawn again in their places (nmt.decode.pdf_document), and
XLIFF files (.xlf, .xliff, where lxml is installed) and gettext catalogs (.po, .pot, where polib
is) segment by segment (nmt.decode.xliff_document, po_document), and a program's messages (.json,
.arb, .xcstrings, .strings, .properties, .yml, .toml, .php, .ini; tables, .csv and .tsv: nmt.decode.csv_table; where lxml is installed Android's strings.xml,
Qt's .ts, .NET's .resx and Apple's .stringsdict) message by message (nmt.decode.json_messages,
string_catalog, apple_strings, properties_document, yaml_messages, toml_messages, php_messages, ini_messages,
android_strings, qt_document,
resx_document, stringsdict_document), as `nmt translate` writes them
(in the server's decode.pdf_font). A translated
file is kept in memory for its download, the last KEPT of them."""

from __future__ import annotations

import importlib.util
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath

from nmt.config import DecodeConfig
from nmt.decode.html_document import HtmlDocument
from nmt.decode.stream import DOCUMENTS, PAGES, file_format, read_document, read_page
from nmt.decode.subtitles import Subtitles
from nmt.errors import NmtError
from nmt.serve.libretranslate import LibreError

FORMATS = (".txt", ".srt", ".vtt", ".html", ".htm", ".md", ".markdown", ".mdx", ".rst", ".adoc", ".asciidoc", ".ipynb", ".epub", *((".docx",) if importlib.util.find_spec("docx") else ()),
           *((".pptx", ".xlsx", ".odt", ".odp", ".ods") if importlib.util.find_spec("lxml") else ()),
           *((".pdf",) if all(importlib.util.find_spec(m) for m in ("pdfminer", "pypdf", "reportlab")) else ()),
           *((".xlf", ".xliff", ".xml", ".ts", ".resx", ".stringsdict") if importlib.util.find_spec("lxml") else ()), ".json", ".arb",
           ".xcstrings", ".strings", ".properties", ".yml", ".yaml", ".toml", ".php", ".ini", ".csv", ".tsv",
           *((".po", ".pot") if importlib.util.find_spec("polib") else ()))
KEPT = 100  # translated files kept for download
MEDIA_TYPES = {".txt": "text/plain", ".srt": "application/x-subrip", ".vtt": "text/vtt", ".html": "text/html",
               ".htm": "text/html", ".epub": "application/epub+zip", ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
               ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
               ".odt": "application/vnd.oasis.opendocument.text", ".odp": "application/vnd.oasis.opendocument.presentation",
               ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
               ".ods": "application/vnd.oasis.opendocument.spreadsheet",
               ".pdf": "application/pdf", ".xlf": "application/xliff+xml", ".xliff": "application/xliff+xml",
               ".po": "text/x-gettext-translation", ".pot": "text/x-gettext-translation", ".json": "application/json",
               ".arb": "application/json", ".xml": "application/xml", ".xcstrings": "application/json", ".ts": "application/xml",
               ".resx": "application/xml", ".properties": "text/x-java-properties",
               ".yml": "application/yaml", ".yaml": "application/yaml", ".stringsdict": "application/xml",
               ".strings": "text/plain", ".md": "text/markdown", ".markdown": "text/markdown", ".mdx": "text/markdown",
               ".rst": "text/x-rst", ".adoc": "text/asciidoc", ".asciidoc": "text/asciidoc", ".ipynb": "application/x-ipynb+json", ".toml": "application/toml",
               ".php": "application/x-php", ".ini": "text/plain", ".csv": "text/csv", ".tsv": "text/tab-separated-values"}


@dataclass
class Upload:
    name: str  # the file's name as uploaded, without folders
    texts: list[str]  # what is translated: its lines, or its cues' texts
    write: Callable[[list[str], str], bytes]  # the translated file from the texts' translations and target language
    markup: bool | list[bool] | None = None  # whether the texts are markup (a list: each text's); None: each where it looks so
    # a text whose translation comes back empty keeps its own words, as `nmt translate` writes a
    # document (nmt.decode.stream); a text file's line is left empty, as it writes a line
    whole: bool = True
    # a full stop the model ended a text with where its source has none (a heading, a cell) dropped,
    # as `nmt translate` writes a document; a page's reader drops it by its own marks, a line keeps it
    stops: bool = True


def read_upload(name: str, data: bytes, decode: DecodeConfig | None = None, target: str | None = None,
                source: str | None = None) -> Upload:
    """An uploaded file's texts to translate (a PDF's drawn in `decode.pdf_font`; a String Catalog's
    those it lacks in `target`, the language asked for; a table's as `decode` and the `source`
    language asked for choose them: nmt.decode.csv_table); LibreError where its
    format is not one of FORMATS, it is not UTF-8 text, or its subtitles are malformed (the message
    names the line)."""
    decode = decode if decode is not None else DecodeConfig()
    name = PurePath(name.replace("\\", "/")).name
    suffix = PurePath(name).suffix.lower()
    if suffix not in FORMATS:
        raise LibreError(f"Invalid request: file format not supported ({name}: choose {', '.join(FORMATS)})")
    kind = "android" if suffix == ".xml" else file_format(name)  # (an upload's name has no values/ folder)
    if kind in DOCUMENTS:
        try:
            document = read_document(kind, data, name, decode.pdf_font)
        except NmtError as e:
            raise LibreError(f"Invalid request: {e}") from None
        if hasattr(document, "for_target") or hasattr(document, "for_direction"):
            if target is None:
                raise LibreError("Invalid request: missing target")
        if hasattr(document, "for_target"):
            document.for_target(target)
        if hasattr(document, "for_direction"):
            try:
                document.for_direction(None if source in (None, "auto") else source, target, decode.table_header,
                                       decode.table_columns)
            except NmtError as e:
                raise LibreError(f"Invalid request: {e}") from None
        return Upload(name, document.texts, document.write, markup=True)
    try:
        lines = data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as e:
        raise LibreError(f"Invalid request: {name}: invalid UTF-8 at byte {e.start}") from None
    if suffix == ".txt":
        return Upload(name, lines, lambda translations, _: _file(translations), whole=False, stops=False)
    if suffix in (".html", ".htm"):
        document = HtmlDocument.read(lines)
        return Upload(name, document.texts, lambda translations, target: _file(document.write(translations, target)),
                      markup=True)
    if kind in PAGES:  # (an HTML block's text markup, the others Markdown, as nmt translate reads them)
        page = read_page(kind, lines, name)
        return Upload(name, page.texts, lambda translations, _: _file(page.write(translations)), markup=page.markup,
                      stops=False)
    try:
        subtitles = Subtitles.read(lines, suffix[1:], name)
    except NmtError as e:
        raise LibreError(f"Invalid request: {e}") from None
    return Upload(name, subtitles.texts, lambda translations, _: _file(subtitles.write(translations)))


def _file(lines: list[str]) -> bytes:
    return "".join(f"{line}\n" for line in lines).encode("utf-8")


class TranslatedFiles:
    """The last KEPT translated files, by their download names (a random id, then the file's name)."""

    def __init__(self, kept: int = KEPT):
        self.kept, self.files = kept, OrderedDict()

    def add(self, name: str, content: bytes) -> str:
        key = f"{uuid.uuid4().hex}.{name}"
        self.files[key] = content
        while len(self.files) > self.kept:
            self.files.popitem(last=False)
        return key

    def get(self, key: str) -> tuple[str, bytes, str] | None:
        """(the name to save it as, its content, its media type), or None where unknown or gone."""
        if key not in self.files:
            return None
        name = key.split(".", 1)[1]
        return name, self.files[key], MEDIA_TYPES.get(PurePath(name).suffix.lower(), "text/plain")
