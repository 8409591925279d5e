"""Excel workbooks (nmt.decode.xlsx_document): shared strings, inline strings and comments read by
hand into markup (a bold run, plain text, a phonetic reading), written back in place with
numbers and every other file kept, and `nmt translate` of a workbook with the tiny model."""

from __future__ import annotations

import io
import zipfile

from typer.testing import CliRunner

from nmt.cli import app
from tests.conftest import one_line_error, optional_module
from tests.decode.conftest import PICTURE, translated_both_ways, zipped

etree, pytestmark = optional_module("lxml.etree")

S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
SHARED = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="{S}" count="5" uniqueCount="5">'
          "<si><t>A dog runs.</t></si>"
          '<si><r><t xml:space="preserve">A </t></r><r><rPr><b/><sz val="11"/></rPr><t>black</t></r>'
          '<r><t xml:space="preserve"> dog &amp; a cat</t></r></si>'
          "<si><t>2024</t></si>"
          '<si><t>A man</t><rPh sb="0" eb="1"><t>ア</t></rPh><phoneticPr fontId="1"/></si>'
          "<si><t>  </t></si></sst>")
SHEET = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="{S}"><sheetData>'
         '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1"><v>3.5</v></c><c r="C1" t="inlineStr"><is><t>A girl sings.</t></is></c>'
         '<c r="D1" t="str"><f>UPPER(A1)</f><v>A DOG RUNS.</v></c></row></sheetData></worksheet>')
COMMENTS = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<comments xmlns="{S}"><authors><author>Ann</author>'
            '</authors><commentList><comment ref="A1" authorId="0"><text><r><t>Two boys play.</t></r></text></comment>'
            "</commentList></comments>")
WORKBOOK = f'<workbook xmlns="{S}"><sheets><sheet name="Sheet1" sheetId="1"/></sheets></workbook>'


def _workbook(sheet: str = SHEET) -> bytes:
    return zipped({"[Content_Types].xml": "<Types/>", "xl/workbook.xml": WORKBOOK, "xl/sharedStrings.xml": SHARED,
                   "xl/worksheets/sheet1.xml": sheet, "xl/comments1.xml": COMMENTS, "xl/media/image1.png": PICTURE})


def test_strings_are_markup_of_their_runs_and_come_back_in_place():
    from nmt.decode.xlsx_document import XlsxDocument

    data = _workbook()
    document = XlsxDocument.read(data, "in.xlsx")
    assert document.texts == ["A dog runs.", "A <f1>black</f1> dog &amp; a cat", "A man", "A girl sings.", "Two boys play."]
    written = zipfile.ZipFile(io.BytesIO(document.write(["Ein Hund rennt.", "Ein <f1>schwarzer</f1> Hund &amp; eine Katze",
                                                         "Ein Mann", "Ein Mädchen singt.", "Zwei Jungen spielen."])))
    shared = etree.fromstring(written.read("xl/sharedStrings.xml"))
    strings = ["".join(t.text or "" for t in si.iter(f"{{{S}}}t")) for si in shared]
    assert strings == ["Ein Hund rennt.", "Ein schwarzer Hund & eine Katze", "2024", "Ein Mann", "  "]
    bold = [r for r in shared[1] if r.find(f"{{{S}}}rPr") is not None]
    assert [r.find(f"{{{S}}}t").text for r in bold] == ["schwarzer"]
    assert shared[3].find(f"{{{S}}}rPh") is None and shared[3][-1].tag == f"{{{S}}}phoneticPr"  # reading dropped, kept last
    sheet = written.read("xl/worksheets/sheet1.xml").decode()
    assert "Ein Mädchen singt." in sheet and "<v>3.5</v>" in sheet and "<v>A DOG RUNS.</v>" in sheet
    assert b"Zwei Jungen spielen." in written.read("xl/comments1.xml")
    source = zipfile.ZipFile(io.BytesIO(data))
    assert [i.filename for i in written.infolist()] == [i.filename for i in source.infolist()]
    assert all(written.read(n) == source.read(n) for n in ("[Content_Types].xml", "xl/workbook.xml", "xl/media/image1.png"))
    # a sheet without text is kept byte for byte
    data = _workbook(SHEET.replace('<c r="C1" t="inlineStr"><is><t>A girl sings.</t></is></c>', ""))
    document = XlsxDocument.read(data, "numbers.xlsx")
    written = zipfile.ZipFile(io.BytesIO(document.write(document.texts)))
    assert written.read("xl/worksheets/sheet1.xml") == zipfile.ZipFile(io.BytesIO(data)).read("xl/worksheets/sheet1.xml")


def test_translate_writes_a_workbook_and_refuses_what_is_not_one(trained_tiny, translator, cfg, tmp_path):
    from nmt.decode.xlsx_document import XlsxDocument

    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    (tmp_path / "a.xlsx").write_bytes(_workbook())
    written, expected = translated_both_ways(checkpoint, translator, cfg, tmp_path / "a.xlsx", tmp_path / "b.xlsx",
                                             lambda data: XlsxDocument.read(data, "in"))
    assert written == expected != (tmp_path / "a.xlsx").read_bytes()
    (tmp_path / "c.xlsx").write_bytes(b"PK not a zip")
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "c.xlsx"), "-o", str(tmp_path / "d.xlsx")])
    one_line_error(result, "c.xlsx: not an Excel workbook (.xlsx)")
    assert not (tmp_path / "d.xlsx").exists()
