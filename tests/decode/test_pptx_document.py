"""PowerPoint presentations (nmt.decode.pptx_document): the slides' and notes' paragraphs read by
hand into markup (formatting, a link, a line break, a field), written back in place with every
other file copied, and `nmt translate` of a .pptx with the tiny model."""

from __future__ import annotations

import io
import sys
import zipfile

from typer.testing import CliRunner

from nmt.cli import app
from tests.conftest import one_line_error, optional_module
from tests.decode.conftest import PICTURE, translated_both_ways, zipped

etree, pytestmark = optional_module("lxml.etree")

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
NAMESPACES = ('xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
              'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
              'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"')


def _slide(paragraphs: str) -> str:
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<p:sld {NAMESPACES}><p:cSld><p:spTree>'
            f"<p:sp><p:txBody><a:bodyPr/>{paragraphs}</p:txBody></p:sp></p:spTree></p:cSld></p:sld>")


SLIDE_1 = _slide(
    '<a:p><a:r><a:rPr lang="en-US"/><a:t>A dog &amp; a cat</a:t></a:r></a:p>'
    '<a:p><a:pPr algn="ctr"/><a:r><a:rPr lang="en-US" dirty="0"/><a:t>A man rides a </a:t></a:r>'
    '<a:r><a:rPr lang="en-US" b="1"/><a:t>black</a:t></a:r><a:r><a:rPr lang="en-US" err="1"/><a:t> bike</a:t></a:r>'
    '<a:br><a:rPr lang="en-US"/></a:br><a:r><a:rPr lang="en-US"><a:hlinkClick r:id="rId2"/></a:rPr>'
    '<a:t>on the street</a:t></a:r><a:fld id="{1}" type="slidenum"><a:rPr lang="en-US"/><a:t>1</a:t></a:fld>'
    '<a:endParaRPr lang="en-US"/></a:p><a:p><a:r><a:rPr lang="en-US"/><a:t>2026</a:t></a:r></a:p>')
SLIDE_2 = _slide('<a:p><a:r><a:rPr lang="en-US"/><a:t>Two girls</a:t></a:r></a:p>')
NOTES = SLIDE_1.replace("p:sld", "p:notes").split("<a:p>")[0] + '<a:p><a:r><a:t>Say it slowly.</a:t></a:r></a:p>' \
    + "</p:txBody></p:sp></p:spTree></p:cSld></p:notes>"


def _presentation() -> bytes:
    return zipped({"[Content_Types].xml": "<Types/>", "ppt/presentation.xml": f"<p:presentation {NAMESPACES}/>",
                   "ppt/slides/slide10.xml": SLIDE_2,  # slide 10 after slide 1, by number
                   "ppt/slides/slide1.xml": SLIDE_1, "ppt/notesSlides/notesSlide1.xml": NOTES,
                   "ppt/slideLayouts/slideLayout1.xml": _slide("<a:p><a:r><a:t>Click to add a title</a:t></a:r></a:p>"),
                   "ppt/media/image1.png": PICTURE})


def test_paragraphs_are_markup_of_their_runs_and_come_back_in_place():
    from nmt.decode.pptx_document import PptxDocument

    presentation = PptxDocument.read(_presentation(), "talk.pptx")
    # lang, dirty and err are not formatting: "bike" is in the plain text; the link is a formatting
    assert presentation.texts == ["A dog &amp; a cat", "A man rides a <f1>black</f1> bike<p1/><f2>on the street</f2><p2/>",
                                  "Two girls", "Say it slowly."]
    translations = ["EIN HUND &amp; EINE KATZE", "EIN MANN FÄHRT EIN <f1>SCHWARZES</f1> RAD <p1/> <f2>AUF DER STRASSE</f2><p2/>",
                    "ZWEI MÄDCHEN", "LANGSAM SAGEN."]
    written = zipfile.ZipFile(io.BytesIO(presentation.write(translations, "deu_Latn")))
    source = zipfile.ZipFile(io.BytesIO(_presentation()))
    assert [i.filename for i in written.infolist()] == [i.filename for i in source.infolist()]
    for name in ("ppt/presentation.xml", "ppt/slideLayouts/slideLayout1.xml", "ppt/media/image1.png"):
        assert written.read(name) == source.read(name)  # layouts and the rest: copied
    slide = etree.fromstring(written.read("ppt/slides/slide1.xml"))
    first, second, year = slide.iter(f"{A}p")
    assert "".join(first.itertext()) == "EIN HUND & EINE KATZE"
    assert [child.tag.removeprefix(A) for child in second] == ["pPr", "r", "r", "r", "br", "r", "fld", "endParaRPr"]
    runs = second.findall(f"{A}r")
    assert [r.find(f"{A}t").text for r in runs] == ["EIN MANN FÄHRT EIN ", "SCHWARZES", " RAD", "AUF DER STRASSE"]
    assert [r.find(f"{A}rPr").get("b") for r in runs] == [None, "1", None, None]
    assert runs[3].find(f"{A}rPr/{A}hlinkClick") is not None and second.find(f"{A}fld/{A}t").text == "1"
    assert {e.get("lang") for e in slide.iter(f"{A}rPr", f"{A}endParaRPr")} == {"de"}
    assert "".join(year.itertext()) == "2026"  # no letter: left as it was
    assert b"LANGSAM SAGEN." in written.read("ppt/notesSlides/notesSlide1.xml")


def test_translate_writes_the_presentation_and_refuses_what_is_not_one(trained_tiny, translator, cfg, tmp_path,
                                                                         monkeypatch):
    from nmt.decode.pptx_document import PptxDocument

    data = _presentation()  # (a zip's bytes hold the time it was written)
    (tmp_path / "talk.pptx").write_bytes(data)
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    written, expected = translated_both_ways(checkpoint, translator, cfg, tmp_path / "talk.pptx", tmp_path / "talk.de.pptx",
                                             lambda data: PptxDocument.read(data, "in"))
    assert written == expected != data
    (tmp_path / "notes.pptx").write_bytes(b"A dog.")
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "notes.pptx"),
                                      "-o", str(tmp_path / "out.pptx")])
    one_line_error(result, "notes.pptx: not a PowerPoint presentation (.pptx)")
    monkeypatch.setitem(sys.modules, "lxml", None)  # as if not installed
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "talk.pptx"),
                                      "-o", str(tmp_path / "out.pptx")])
    one_line_error(result, "PowerPoint presentations need lxml: pip install 'nmt[office]'")
    assert not (tmp_path / "out.pptx").exists()
