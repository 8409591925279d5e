"""E-books (nmt.decode.epub_document): the chapters the manifest names read as HTML pages, the
rest of the book copied byte for byte, and `nmt translate` of an .epub with the tiny model."""

from __future__ import annotations

import io
import zipfile

from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.epub_document import EpubDocument
from nmt.decode.html_document import HtmlDocument
from tests.conftest import one_line_error

CONTAINER = """<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>"""
PACKAGE = """<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:title>A dog</dc:title><dc:language>en</dc:language>
  </metadata>
  <manifest>
    <item id="c1" href="Text/chapter%201.xhtml" media-type="application/xhtml+xml"/>
    <item id="c2" href="Text/two.xhtml" media-type="application/xhtml+xml"/>
    <item id="css" href="style.css" media-type="text/css"/>
  </manifest>
  <spine><itemref idref="c1"/><itemref idref="c2"/></spine>
</package>"""
CHAPTERS = {
    "OEBPS/Text/chapter 1.xhtml": '<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml" '
                                  'xml:lang="en" lang="en">\n<head><title>One</title></head>\n<body>\n'
                                  '<h1>A black dog</h1>\n<p>A black dog leaps\nover a <i>log</i>.</p>\n</body>\n</html>\n',
    "OEBPS/Text/two.xhtml": '<html><body><p>Asian man sweeping the walkway.<br/></p></body></html>\n'}


def _book() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as book:
        book.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        book.writestr("META-INF/container.xml", CONTAINER)
        book.writestr("OEBPS/content.opf", PACKAGE)
        for name, text in CHAPTERS.items():
            book.writestr(name, text)
        book.writestr("OEBPS/style.css", "p { margin: 0 } /* A dog */")
        book.writestr("OEBPS/images/a.png", b"\x89PNG\r\n\x1a\n\x00\xff")
    return out.getvalue()


def test_the_chapters_are_html_pages_and_the_rest_of_the_book_is_copied():
    book = EpubDocument.read(_book(), "book.epub")
    pages = [HtmlDocument.read(text.split("\n")) for text in CHAPTERS.values()]
    assert book.texts == pages[0].texts + pages[1].texts == [
        "One", "A black dog", "A black dog leaps over a <i>log</i>.", "Asian man sweeping the walkway.<br/>"]
    translations = ["Eins", "Ein schwarzer Hund", "Ein schwarzer Hund springt über einen <i>Baumstamm</i>.", "X<br/>"]
    written = zipfile.ZipFile(io.BytesIO(book.write(translations, "deu_Latn")))
    source = zipfile.ZipFile(io.BytesIO(_book()))
    assert [i.filename for i in written.infolist()] == [i.filename for i in source.infolist()]
    assert written.infolist()[0].compress_type == zipfile.ZIP_STORED and written.read("mimetype") == b"application/epub+zip"
    for name in ("META-INF/container.xml", "OEBPS/style.css", "OEBPS/images/a.png"):
        assert written.read(name) == source.read(name)
    assert written.read("OEBPS/content.opf").decode() == PACKAGE.replace("<dc:language>en<", "<dc:language>de<")
    assert written.read("OEBPS/Text/chapter 1.xhtml").decode() == "\n".join(pages[0].write(translations[:3], "deu_Latn"))
    assert 'xml:lang="de" lang="de"' in written.read("OEBPS/Text/chapter 1.xhtml").decode()
    assert written.read("OEBPS/Text/two.xhtml").decode() == "<html><body><p>X<br/></p></body></html>\n"


def test_translate_writes_the_book_and_refuses_what_is_not_one(trained_tiny, translator, cfg, tmp_path):
    from nmt.decode.text.end_marks import without_stop_its_source_lacks
    from nmt.decode.translate import translate_lines

    data = _book()  # (a zip's bytes hold the time it was written)
    (tmp_path / "book.epub").write_bytes(data)
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "book.epub"),
                                      "-o", str(tmp_path / "book.de.epub")])
    assert result.exit_code == 0, result.output
    book = EpubDocument.read(data, "book.epub")
    hyps = translate_lines(translator, book.texts, cfg, markup=[True] * len(book.texts))
    expected = book.write([without_stop_its_source_lacks(t, h[0].text or t) for h, t in zip(hyps, book.texts)], "de")
    assert (tmp_path / "book.de.epub").read_bytes() == expected
    # not an e-book: one line naming the file, exit 2, nothing written
    for name, content in (("notes.epub", b"A dog."), ("empty.epub", _zip({"mimetype": "application/epub+zip"}))):
        (tmp_path / name).write_bytes(content)
        result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / name),
                                          "-o", str(tmp_path / "out.epub")])
        one_line_error(result, f"{name}: not an EPUB book")
        assert not (tmp_path / "out.epub").exists()


def _zip(files: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as book:
        for name, text in files.items():
            book.writestr(name, text)
    return out.getvalue()
