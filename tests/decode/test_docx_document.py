"""Word documents (nmt.decode.docx_document): paragraphs read by hand into markup (formatting,
links, tabs, bookmarks), written back with each in its place, and `nmt translate` of a .docx with
the tiny model, each paragraph against its markup translated as one line."""

from __future__ import annotations

import io
import re
import sys

from typer.testing import CliRunner

from nmt.cli import app
from tests.conftest import one_line_error, optional_module

docx, pytestmark = optional_module("docx")

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
LINK = "https://example.org/guide"


def _document() -> bytes:
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = docx.Document()
    document.add_heading("A dog runs & jumps", level=1)
    p = document.add_paragraph("A man in a red shirt is riding a ")
    p.runs[0]._r.append(OxmlElement("w:lastRenderedPageBreak"))  # Word's own marks: left out
    p._p.append(OxmlElement("w:proofErr"))
    p.add_run("black").bold = True
    p.add_run(" bike.")
    p = document.add_paragraph("Read ")
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), document.part.relate_to(LINK, RELATIONSHIP_TYPE.HYPERLINK, is_external=True))
    run = OxmlElement("w:r")
    text = OxmlElement("w:t")
    text.text = "the guide"
    run.append(text)
    link.append(run)
    p._p.append(link)
    p.add_run(" now.\tTwo dogs <play>.")
    bookmark = OxmlElement("w:bookmarkStart")
    bookmark.set(qn("w:id"), "0")
    bookmark.set(qn("w:name"), "end")
    p._p.append(bookmark)
    document.add_paragraph("2026")
    document.add_table(rows=1, cols=1).cell(0, 0).paragraphs[0].add_run("A cat")
    document.sections[0].header.paragraphs[0].text = "A girl"
    document.styles["Normal"].element.get_or_add_rPr().append(_lang("en-US"))
    _add_footnote(document, "A boy with a kite.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _add_footnote(document, text: str) -> None:
    """A footnotes part (python-docx writes none) with a separator and one footnote of `text`."""
    from docx.opc.constants import CONTENT_TYPE, RELATIONSHIP_TYPE
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part

    xml = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:footnotes xmlns:w="{W[1:-1]}">'
           '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
           f'<w:footnote w:id="1"><w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:footnote></w:footnotes>')
    part = Part(PackURI("/word/footnotes.xml"), CONTENT_TYPE.WML_FOOTNOTES, xml.encode(), document.part.package)
    document.part.relate_to(part, RELATIONSHIP_TYPE.FOOTNOTES)


def _footnotes(data: bytes) -> list[str]:
    import zipfile

    from lxml import etree

    root = etree.fromstring(zipfile.ZipFile(io.BytesIO(data)).read("word/footnotes.xml"))
    return ["".join(t.text for t in p.iter(f"{W}t")) for p in root.iter(f"{W}p")]


def _lang(value: str):
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    lang = OxmlElement("w:lang")
    lang.set(qn("w:val"), value)
    return lang


def _upper(markup: str) -> str:
    return re.sub(r"(<[^>]*>|&\w+;)|([^<&]+)", lambda m: m.group(1) or m.group(2).upper(), markup)


def test_paragraphs_are_markup_of_their_formatting_links_and_points_and_come_back_in_place():
    from nmt.decode.docx_document import DocxDocument

    document = DocxDocument.read(_document(), "a.docx")
    assert document.texts == [
        "A dog runs &amp; jumps", "A man in a red shirt is riding a <f1>black</f1> bike.",
        "Read <a1>the guide</a1> now.<p1/>Two dogs &lt;play&gt;.<p2/>", "A cat", "A girl", "A boy with a kite."]
    # the words in capitals; the bold word moved, the tab taken as a space, the bookmark left out
    translations = [_upper(t) for t in document.texts]
    translations[1] = "<f1>BLACK</f1> A MAN IN A RED SHIRT IS RIDING A BIKE."
    translations[2] = "READ <a1>THE GUIDE</a1> NOW. <p1/> TWO DOGS &lt;PLAY&gt;."
    written = document.write(translations, "deu_Latn")
    assert _footnotes(written) == ["", "A BOY WITH A KITE."]  # the separator's paragraph, the footnote
    out = docx.Document(io.BytesIO(written))
    heading, formatted, linked, year = out.paragraphs
    assert (heading.text, heading.style.name) == ("A DOG RUNS & JUMPS", "Heading 1")
    assert [(r.text, r.bold) for r in formatted.runs] == [("BLACK", True), (" A MAN IN A RED SHIRT IS RIDING A BIKE.", None)]
    assert linked.text == "READ THE GUIDE NOW.\tTWO DOGS <PLAY>."
    [hyperlink] = linked._p.findall(f"{W}hyperlink")
    assert [t.text for t in hyperlink.iter(f"{W}t")] == ["THE GUIDE"]
    assert out.part.rels[hyperlink.get("{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id")].target_ref == LINK
    assert [e.get(f"{W}name") for e in linked._p.iter(f"{W}bookmarkStart")] == ["end"]  # never lost
    assert year.text == "2026"  # no letter: left as it was
    assert out.tables[0].cell(0, 0).text == "A CAT" and out.sections[0].header.paragraphs[0].text == "A GIRL"
    assert {lang.get(f"{W}val") for lang in out.styles.element.iter(f"{W}lang")} == {"de"}  # the template's and ours


def test_translate_writes_each_paragraph_translated_whole_and_refuses_what_is_not_a_document(
        trained_tiny, translator, cfg, tmp_path):
    from nmt.decode.docx_document import DocxDocument
    from nmt.decode.text.end_marks import without_stop_its_source_lacks
    from nmt.decode.translate import translate_lines

    source = tmp_path / "letter.docx"
    source.write_bytes(_document())
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(source), "-o", str(tmp_path / "out.docx")])
    assert result.exit_code == 0, result.output
    texts = DocxDocument.read(source.read_bytes(), "in").texts
    hyps = translate_lines(translator, texts, cfg, markup=[True] * len(texts))
    expected = DocxDocument.read(source.read_bytes(), "in")
    again = DocxDocument.read(expected.write([without_stop_its_source_lacks(t, h[0].text or t) for h, t in zip(hyps, texts)]),
                                "expected")  # (each without a full stop its source lacks)
    assert DocxDocument.read((tmp_path / "out.docx").read_bytes(), "out").texts == again.texts
    assert again.texts != texts
    # not a Word document: one line naming the file, exit 2, nothing written
    (tmp_path / "notes.docx").write_text("A dog.\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "notes.docx"),
                                      "-o", str(tmp_path / "notes.de.docx")])
    one_line_error(result, "notes.docx: not a Word document (.docx)")
    assert not (tmp_path / "notes.de.docx").exists()


def test_without_python_docx_a_word_document_is_a_one_line_error_naming_the_extra(trained_tiny, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "docx", None)  # as if not installed
    (tmp_path / "a.docx").write_bytes(b"PK")
    result = CliRunner().invoke(app, ["translate", "-c", str(trained_tiny.out / "checkpoints" / "last.pt"),
                                      "-i", str(tmp_path / "a.docx"), "-o", str(tmp_path / "b.docx")])
    one_line_error(result, "Word documents need python-docx: pip install 'nmt[office]'")
    assert not (tmp_path / "b.docx").exists()
