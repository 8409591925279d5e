"""OpenDocument text and presentations (nmt.decode.odf_document): paragraphs read by hand into
markup (styles, a link, spaces, a tab, a note), written back in place with every other file
copied, and `nmt translate` of an .odt and an .odp with the tiny model."""

from __future__ import annotations

import io
import zipfile

from typer.testing import CliRunner

from nmt.cli import app
from tests.conftest import one_line_error, optional_module
from tests.decode.conftest import PICTURE, translated_both_ways, zipped

etree, pytestmark = optional_module("lxml.etree")

T = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
NAMESPACES = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
              'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
              'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
              'xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:dc="http://purl.org/dc/elements/1.1/"')
TEXT = (f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content {NAMESPACES}><office:body><office:text>'
        '<text:h text:outline-level="1">A dog &amp; a cat</text:h>'
        '<text:p text:style-name="P1">A man rides a <text:span text:style-name="T1">black</text:span> bike'
        '<text:soft-page-break/><text:s text:c="2"/>on the<text:tab/><text:a xlink:href="https://example.org">street</text:a>.'
        '<text:note text:id="n1"><text:note-citation>1</text:note-citation><text:note-body>'
        '<text:p>A girl sings.</text:p></text:note-body></text:note></text:p>'
        '<text:p>2026</text:p></office:text></office:body></office:document-content>')
STYLES = (f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-styles {NAMESPACES}><office:master-styles>'
          '<text:p>Two dogs</text:p></office:master-styles></office:document-styles>')
META = f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-meta {NAMESPACES}><dc:language>en-US</dc:language></office:document-meta>'
SLIDES = (f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content {NAMESPACES}><office:body><office:presentation>'
          '<draw:page><draw:frame><draw:text-box><text:p>A boy with a kite</text:p></draw:text-box></draw:frame></draw:page>'
          '</office:presentation></office:body></office:document-content>')


def _package(kind: str, content: str) -> bytes:
    return zipped({"mimetype": f"application/vnd.oasis.opendocument.{kind}", "content.xml": content,
                   "styles.xml": STYLES, "meta.xml": META, "Pictures/a.png": PICTURE})


def test_paragraphs_are_markup_of_their_spans_and_come_back_in_place():
    from nmt.decode.odf_document import OdfDocument

    document = OdfDocument.read(_package("text", TEXT), "letter.odt", "odt")
    assert document.texts == ["A dog &amp; a cat", "A man rides a <f1>black</f1> bike  on the<p1/><a1>street</a1>.<p2/>",
                              "A girl sings.", "Two dogs"]
    written = zipfile.ZipFile(io.BytesIO(document.write(
        ["EIN HUND &amp; EINE KATZE", "<f1>SCHWARZ</f1> FÄHRT EIN MANN AUF DER <p1/> <a1>STRASSE</a1>.<p2/>",
         "EIN MÄDCHEN SINGT.", "ZWEI HUNDE"], "deu_Latn")))
    source = zipfile.ZipFile(io.BytesIO(_package("text", TEXT)))
    assert [i.filename for i in written.infolist()] == [i.filename for i in source.infolist()]
    assert written.infolist()[0].compress_type == zipfile.ZIP_STORED
    assert written.read("Pictures/a.png") == source.read("Pictures/a.png")
    assert b"<dc:language>de</dc:language>" in written.read("meta.xml")
    assert b"<text:p>ZWEI HUNDE</text:p>" in written.read("styles.xml")
    heading, paragraph, note, year = etree.fromstring(written.read("content.xml")).iter(f"{T}h", f"{T}p")
    assert heading.text == "EIN HUND & EINE KATZE" and heading.get(f"{T}outline-level") == "1"
    assert paragraph.get(f"{T}style-name") == "P1" and paragraph.text is None
    assert [(child.tag.removeprefix(T), child.text, child.tail) for child in paragraph] == [
        ("span", "SCHWARZ", " FÄHRT EIN MANN AUF DER"), ("tab", None, None), ("a", "STRASSE", "."), ("note", None, None)]
    assert paragraph[0].get(f"{T}style-name") == "T1" and paragraph[2].get("{http://www.w3.org/1999/xlink}href")
    assert note.text == "EIN MÄDCHEN SINGT." and year.text == "2026"


def test_translate_writes_text_and_presentations_and_refuses_what_is_not_one(trained_tiny, translator, cfg, tmp_path):
    from nmt.decode.odf_document import OdfDocument

    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    for kind, content in (("odt", TEXT), ("odp", SLIDES)):
        data = _package("text" if kind == "odt" else "presentation", content)  # (a zip's bytes hold the time)
        (tmp_path / f"a.{kind}").write_bytes(data)
        written, expected = translated_both_ways(checkpoint, translator, cfg, tmp_path / f"a.{kind}", tmp_path / f"b.{kind}",
                                                 lambda data, kind=kind: OdfDocument.read(data, "in", kind))
        assert written == expected != data
    (tmp_path / "c.odp").write_bytes(_package("text", TEXT))  # a text document named as a presentation
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "c.odp"), "-o", str(tmp_path / "d.odp")])
    one_line_error(result, "c.odp: not an OpenDocument presentation (.odp)")
    assert not (tmp_path / "d.odp").exists()


def test_a_link_that_holds_spans_is_translated_whole_its_target_kept():
    from nmt.decode.odf_document import OdfDocument

    content = TEXT.replace('<text:a xlink:href="https://example.org">street</text:a>',
                           '<text:a xlink:href="https://example.org"><text:span text:style-name="T2">busy</text:span>'
                           '<text:s/>street</text:a>')
    document = OdfDocument.read(_package("text", content), "letter.odt", "odt")
    assert document.texts[1] == "A man rides a <f1>black</f1> bike  on the<p1/><a1>busy street</a1>.<p2/>"
    texts = list(document.texts)
    texts[1] = "<f1>SCHWARZ</f1> FÄHRT EIN MANN AUF DER <p1/> <a1>BELEBTEN STRASSE</a1>.<p2/>"
    written = zipfile.ZipFile(io.BytesIO(document.write(texts, "de")))
    paragraph = list(etree.fromstring(written.read("content.xml")).iter(f"{T}p"))[0]
    [link] = paragraph.findall(f"{T}a")
    assert link.text == "BELEBTEN STRASSE" and len(link) == 0 and link.get("{http://www.w3.org/1999/xlink}href")
    # a link that holds anything else (a frame) is still copied as it stands
    framed = TEXT.replace("street</text:a>", "street<draw:frame/></text:a>")
    assert "street" not in OdfDocument.read(_package("text", framed), "letter.odt", "odt").texts[1]


def test_a_spreadsheets_cells_of_text_are_translated_and_its_values_shown_as_they_were():
    """An .ods: a cell of text (value-type string, or none) translated; one that shows a date,
    a number or a currency, whose text the application writes again from its value, left as it is."""
    from nmt.decode.odf_document import OdfDocument

    table = 'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"'
    content = (f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content {NAMESPACES} {table}><office:body>'
               '<office:spreadsheet><table:table table:name="Prices"><table:table-row>'
               '<table:table-cell office:value-type="string"><text:p>A red bike</text:p></table:table-cell>'
               '<table:table-cell><text:p>A girl sings</text:p></table:table-cell>'
               '<table:table-cell office:value-type="date" office:date-value="2026-12-05"><text:p>Dec 5</text:p></table:table-cell>'
               '<table:table-cell office:value-type="currency" office:value="3.5"><text:p>EUR 3.50</text:p></table:table-cell>'
               '</table:table-row></table:table></office:spreadsheet></office:body></office:document-content>')
    document = OdfDocument.read(_package("spreadsheet", content), "in.ods", "ods")
    assert document.texts == ["A red bike", "A girl sings", "Two dogs"]  # (the last: styles.xml's)
    written = document.write(["Ein rotes Fahrrad", "Ein Mädchen singt", "Zwei Hunde"], "de")
    cells = etree.fromstring(zipfile.ZipFile(io.BytesIO(written)).read("content.xml")).iter(f"{T}p")
    assert [p.text for p in cells] == ["Ein rotes Fahrrad", "Ein Mädchen singt", "Dec 5", "EUR 3.50"]
