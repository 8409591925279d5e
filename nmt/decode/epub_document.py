"""E-books in, e-books out (`--input-format epub`, the default for .epub files): each XHTML
document of the book (its chapters, by the package's manifest) translated as an HTML page
(nmt.decode.html_document: each block whole, its markup kept), the package's dc:language made the
target's, and every other file of the book (images, styles, the table of contents) copied as it
was, in the order it had (the mimetype first and stored, as EPUB readers need).
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import unquote

from nmt.decode.html_document import HtmlDocument
from nmt.errors import NmtError
from nmt.files import rezipped

_ROOTFILE = re.compile(r"""<rootfile\b[^>]*\bfull-path\s*=\s*["']([^"']+)["']""", re.I)
_ITEM = re.compile(r"<item\b[^>]*>", re.I)
_ATTRIBUTE = re.compile(r"""\b([\w:-]+)\s*=\s*["']([^"']*)["']""")
_LANGUAGE = re.compile(r"(<dc:language\b[^>]*>)([^<]*)(</dc:language>)", re.I)
XHTML = "application/xhtml+xml"


@dataclass
class _Chapter:
    name: str  # its path in the book
    document: HtmlDocument


class EpubDocument:
    """An .epub file read for translation: its `texts` (every chapter's blocks and attributes, in
    the order of the book's files) in, the book with their translations out (`write`)."""

    def __init__(self, data: bytes, package: str, chapters: list[_Chapter]):
        self.data, self.package, self.chapters = data, package, chapters

    @classmethod
    def read(cls, data: bytes, name: str) -> "EpubDocument":
        try:
            book = zipfile.ZipFile(io.BytesIO(data))
            container = book.read("META-INF/container.xml").decode("utf-8")
            package = _ROOTFILE.search(container)
            if package is None:
                raise NmtError(f"{name}: META-INF/container.xml names no package (a rootfile's full-path)")
            package = package.group(1)
            manifest = book.read(package).decode("utf-8")
            folder = PurePosixPath(package).parent
            wanted = {posixpath.normpath(str(folder / unquote(attributes["href"])))
                      for attributes in map(_attributes, _ITEM.findall(manifest))
                      if attributes.get("media-type") == XHTML and "href" in attributes}
            chapters = [_Chapter(info.filename, HtmlDocument.read(_text(book.read(info), name, info.filename).split("\n")))
                        for info in book.infolist() if info.filename in wanted]
        except (zipfile.BadZipFile, KeyError) as e:
            raise NmtError(f"{name}: not an EPUB book: {e}") from None
        return cls(data, package, chapters)

    @property
    def texts(self) -> list[str]:
        return [text for chapter in self.chapters for text in chapter.document.texts]

    @property
    def numbers(self) -> list[int]:
        """Each text's line in its chapter (for warnings)."""
        return [number for chapter in self.chapters for number in chapter.document.numbers]

    def write(self, translations: list[str], language: str | None = None) -> bytes:
        """The book with each chapter's translations in place, and its package's dc:language the
        target's (`language`, where given)."""
        from nmt.data.languages import language_tag

        replaced, at = {}, 0
        for chapter in self.chapters:
            count = len(chapter.document.texts)
            replaced[chapter.name] = "\n".join(chapter.document.write(translations[at:at + count], language)).encode()
            at += count
        if language:
            manifest = zipfile.ZipFile(io.BytesIO(self.data)).read(self.package).decode("utf-8")
            replaced[self.package] = _LANGUAGE.sub(lambda m: m[1] + language_tag(language) + m[3], manifest).encode()
        return rezipped(self.data, replaced)


def _attributes(tag: str) -> dict[str, str]:
    return {name.lower(): value for name, value in _ATTRIBUTE.findall(tag)}


def _text(data: bytes, name: str, member: str) -> str:
    try:
        return data.decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError as e:
        raise NmtError(f"{name}: {member}: invalid UTF-8 at byte {e.start}") from None
