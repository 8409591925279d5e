"""PDF files (nmt.decode.pdf_document): a page drawn by hand (a title, a paragraph over three
lines with a bold word and a hyphen at a line's end, a list whose item runs on under itself,
code, a page number, text turned on its side, a second page turned) read into paragraphs,
written back from stand-in translations and read again; `nmt translate` of it with the tiny
model; and the one-line errors."""

from __future__ import annotations

import io
import sys

from typer.testing import CliRunner

from nmt.cli import app
from tests.conftest import one_line_error, optional_module
from tests.decode.conftest import translated_both_ways

pypdf, pytestmark = optional_module("pypdf")

PARAGRAPH = ("A man in a blue shirt rides a red bike down the busy street while two children "
             "play with a dog on the grass. A woman watches them with a smile and a transla- tion of the book.")


def _page(canvas, runs: list[tuple[float, float, list[tuple[str, str]]]], size: float = 11) -> None:
    """Lines of text: each at (x, baseline), in runs of (font, text)."""
    for x, y, line in runs:
        text = canvas.beginText(x, y)
        for font, words in line:
            text.setFont(font, size)
            text.textOut(words)
        canvas.drawText(text)


def _pdf(turned: bool = True) -> bytes:
    from reportlab.pdfgen.canvas import Canvas

    out = io.BytesIO()
    canvas = Canvas(out, pagesize=(595, 842), invariant=True)
    canvas.setFont("Helvetica-Bold", 18)
    canvas.drawCentredString(297.5, 780, "A day at the park")
    H = "Helvetica"
    _page(canvas, [(72, 740, [(H, "A man in a blue shirt rides a "), ("Helvetica-Bold", "red"),
                              (H, " bike down the busy street while two children")]),
                   (72, 726, [(H, "play with a dog on the grass. A woman watches them with a smile and a transla-")]),
                   (72, 712, [(H, "tion of the book.")]),
                   (72, 680, [(H, "- A dog runs.")]),
                   (72, 666, [(H, "- Two girls sing a song in the park and wave at all of the people")]),
                   (82, 652, [(H, "who walk by.")]),
                   (72, 620, [("Courier", "for dog in dogs:")]),
                   (72, 608, [("Courier", "    run(dog)")])])
    canvas.setFont(H, 9)
    canvas.drawCentredString(297.5, 40, "1")
    canvas.saveState()
    canvas.translate(560, 300)
    canvas.rotate(90)
    canvas.setFont(H, 12)
    canvas.drawString(0, 0, "Draft copy")
    canvas.restoreState()
    canvas.showPage()
    _page(canvas, [(72, 760, [("Times-Roman", "The end of the day.")])], size=12)
    canvas.showPage()
    canvas.save()
    if not turned:
        return out.getvalue()
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(out.getvalue()))
    writer.pages[1].rotate(90)
    turned_out = io.BytesIO()
    writer.write(turned_out)
    return turned_out.getvalue()


def _lines(data: bytes) -> list[list]:
    """Each page's lines of text as pdfminer reads them: (text, x0, y0, x1, y1, font names)."""
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTChar, LTTextBox, LTTextLine

    pages = []
    for layout in extract_pages(io.BytesIO(data)):
        pages.append([(line.get_text().strip(), *line.bbox, {c.fontname.split("+")[-1] for c in line if isinstance(c, LTChar)})
                      for box in layout if isinstance(box, LTTextBox) for line in box if isinstance(line, LTTextLine)])
    return pages


def _turned_text(data: bytes) -> str:
    """The first page's glyphs that are not upright, in order."""
    from pdfminer.high_level import extract_pages

    from nmt.decode.pdf_layout import layout_chars

    layout = next(iter(extract_pages(io.BytesIO(data))))
    return "".join(c.get_text() for c in sorted(layout_chars(layout), key=lambda c: c.y0) if not c.upright)


def test_paragraphs_are_read_whole_and_their_translations_drawn_in_their_places():
    from nmt.decode.pdf_document import PdfDocument

    data = _pdf()
    document = PdfDocument.read(data, "park.pdf")
    assert document.texts == [
        "A day at the park",
        "A man in a blue shirt rides a <f1>red</f1> bike down the busy street while two children play with a dog on "
        "the grass. A woman watches them with a smile and a translation of the book.",
        "- A dog runs.",
        "- Two girls sing a song in the park and wave at all of the people who walk by.",
        "The end of the day."]
    assert document.numbers == [1, 1, 1, 1, 2]
    translations = ["EIN TAG IM PARK",
                    "EIN MANN IN EINEM BLAUEN HEMD FÄHRT EIN <f1>ROTES</f1> FAHRRAD DIE STRASSE ENTLANG, WÄHREND "
                    "ZWEI KINDER MIT EINEM HUND AUF DEM GRAS SPIELEN UND EINE FRAU IHNEN LÄCHELND ZUSIEHT.",
                    "- EIN HUND RENNT.", "- ZWEI MÄDCHEN SINGEN IM PARK &amp; WINKEN DEN LEUTEN ZU.",
                    "DAS ENDE DES TAGES."]
    written = document.write(translations, "deu_Latn")
    assert written == document.write(translations, "deu_Latn")  # the same bytes each time
    reader = pypdf.PdfReader(io.BytesIO(written))
    assert len(reader.pages) == 2 and reader.trailer["/Root"]["/Lang"] == "de"
    first, second = _lines(written)
    text = " ".join(line[0] for line in first)
    for english in ("A day at the park", "blue shirt", "A dog runs", "walk by"):
        assert english not in text
    assert "EIN TAG IM PARK" in text and "ZWEI MÄDCHEN SINGEN IM PARK & WINKEN DEN LEUTEN ZU." in text
    # the code, the page number and the turned text are drawn again as they were
    kept = {line[0]: line for line in first}
    assert "for dog in dogs:" in kept and "run(dog)" in kept and "1" in kept
    assert abs(kept["1"][1] - 295) < 3 and abs(kept["for dog in dogs:"][1] - 72) < 1
    assert _turned_text(written) == _turned_text(data).replace(" ", "") == "Draftcopy"  # (a space is no glyph)
    # the bold word in bold; the long paragraph stays above the list, its first line where it was
    [red] = [line for line in first if "ROTES" in line[0]]
    assert any("Bold" in font for font in red[5])
    paragraph = [line for line in first if any(w in line[0] for w in ("BLAUEN", "SPIELEN", "ZUSIEHT"))]
    assert abs(max(line[4] for line in paragraph) - 748) < 4 and abs(paragraph[0][1] - 72) < 1
    [dog] = [line for line in first if "HUND RENNT" in line[0]]
    assert min(line[2] for line in paragraph) > dog[4]
    # read again, the written document gives back the translations, each where its source began
    again = PdfDocument.read(written, "park.de.pdf")
    assert again.texts == translations and reader.pages[1].rotation == 90

    def places(paragraphs):  # where each begins: its page, first baseline and left edge (or middle, centred)
        return [(p.page, round(p.lines[0].baseline), p.align,
                 round(p.lines[0].x0 if p.align == "left" else (p.lines[0].x0 + p.lines[0].x1) / 2)) for p in paragraphs]
    assert places(again.paragraphs) == places(document.paragraphs) == [
        (0, 780, "centre", 298), (0, 740, "left", 72), (0, 680, "left", 72), (0, 666, "left", 72), (1, 760, "left", 72)]


def test_font_styles_by_name():
    from nmt.decode.pdf_layout import font_style

    assert font_style("ABCDEF+Helvetica-BoldOblique") == ("sans", True, True)
    assert font_style("NimbusRomNo9L-ReguItal") == ("serif", False, True)
    assert font_style("TimesNewRomanPS-BoldMT") == ("serif", True, False)
    assert font_style("CourierNewPSMT") == ("mono", False, False)
    assert font_style("CMBX12") == ("serif", True, False) and font_style("CMTT10") == ("mono", False, False)
    assert font_style("CMSL10") == ("serif", False, True) and font_style("Calibri") == ("sans", False, False)


def test_translate_writes_a_pdf_and_refuses_what_is_not_one(trained_tiny, translator, cfg, tmp_path, monkeypatch):
    from nmt.decode.pdf_document import PdfDocument

    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    data = _pdf(turned=False)
    (tmp_path / "park.pdf").write_bytes(data)
    written, expected = translated_both_ways(checkpoint, translator, cfg, tmp_path / "park.pdf", tmp_path / "park.de.pdf",
                                             lambda data: PdfDocument.read(data, "in"))
    assert written == expected != data
    # not a PDF, a PDF locked by a password, a PDF without text, a font that is not one
    (tmp_path / "notes.pdf").write_text("A dog.\n", encoding="utf-8")
    locked = pypdf.PdfWriter(clone_from=io.BytesIO(data))
    locked.encrypt("secret")
    locked.write(tmp_path / "locked.pdf")
    from reportlab.pdfgen.canvas import Canvas

    scan = Canvas(str(tmp_path / "scan.pdf"))
    scan.rect(100, 100, 200, 200, fill=1)
    scan.save()
    for name, message, extra in (("notes.pdf", "notes.pdf: not a PDF file that can be read", []),
                                 ("locked.pdf", "locked.pdf: the PDF is protected by a password", []),
                                 ("scan.pdf", "scan.pdf: no text to translate", []),
                                 ("park.pdf", f"decode.pdf_font: {tmp_path / 'notes.pdf'}: not a TrueType font",
                                  ["--set", f"decode.pdf_font={tmp_path / 'notes.pdf'}"])):
        result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / name),
                                          "-o", str(tmp_path / "out.pdf"), *extra])
        one_line_error(result, message)
        assert not (tmp_path / "out.pdf").exists()
    monkeypatch.setitem(sys.modules, "pdfminer", None)  # as if the extra were not installed
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "park.pdf"),
                                      "-o", str(tmp_path / "out.pdf")])
    one_line_error(result, "PDF files need pdfminer.six, pypdf and reportlab: pip install 'nmt[pdf]'")
    assert not (tmp_path / "out.pdf").exists()


def test_a_font_of_ones_own_and_the_characters_it_lacks_are_named():
    import reportlab

    from nmt.decode.pdf_document import PdfDocument

    vera = f"{reportlab.__file__.rsplit('/', 1)[0]}/fonts/VeraBd.ttf"  # Western European letters only
    document = PdfDocument.read(_pdf(turned=False), "park.pdf", font=vera)
    translations = ["Den v parku", *document.texts[1:4], "Konec dne: řeka a 寿司."]
    written = document.write(translations, "ces_Latn")
    assert {font for page in _lines(written) for line in page for font in line[5]} >= {"BitstreamVeraSans-Bold"}
    [lacking] = document.warnings
    assert "'ř司寿'" in lacking and "decode.pdf_font" in lacking
    assert PdfDocument.read(_pdf(turned=False), "park.pdf").warnings == []
    document.write([*translations[:4], "סוף היום"], "heb_Hebr")  # (Hebrew: "the end of the day")
    assert any("right-to-left" in warning for warning in document.warnings)


def test_a_chart_s_ticks_stay_apart_from_its_label_and_a_label_stays_one_line():
    from reportlab.pdfgen.canvas import Canvas

    from nmt.decode.pdf_document import PdfDocument

    out = io.BytesIO()
    canvas = Canvas(out, pagesize=(400, 300), invariant=True)
    canvas.setFont("Helvetica", 10)
    for number, tick in enumerate(("1.00", "1.25", "1.50")):
        canvas.drawString(50 + 130 * number, 60, tick)
    canvas.drawCentredString(200, 46, "Updates")
    canvas.drawCentredString(200, 260, "A man rides")
    canvas.rect(40, 75, 320, 170)
    canvas.drawString(60, 200, "A kid skis wearing the number")  # a line of a number that ends the sentence
    canvas.drawString(60, 188, "6.")
    canvas.save()
    document = PdfDocument.read(out.getvalue(), "chart.pdf")
    assert document.texts == ["A man rides", "A kid skis wearing the number 6.", "Updates"]
    translations = ["EIN MANN FÄHRT AUF EINEM FAHRRAD", "EIN KIND MIT DER NUMMER 6.", "AKTUALISIERUNGEN"]
    written = document.write(translations, "de")
    again = PdfDocument.read(written, "again")
    assert again.texts == translations and [len(p.lines) for p in again.paragraphs] == [1, 1, 1]
    assert [p.lines[0].baseline for p in again.paragraphs] == [260, 200, 46]
    assert [round((p.lines[0].x0 + p.lines[0].x1) / 2) for p in again.paragraphs[::2]] == [200, 200]  # still centred
    assert [line[0] for line in _lines(written)[0] if not any(c.isalpha() for c in line[0])] == ["1.00", "1.25", "1.50"]


def test_a_paragraph_that_runs_on_into_the_next_column_and_page_is_translated_whole():
    from reportlab.pdfgen.canvas import Canvas

    from nmt.decode.pdf_document import PdfDocument

    out = io.BytesIO()
    canvas = Canvas(out, pagesize=(595, 842), invariant=True)
    columns = [[(72, 120, "A man in a blue shirt rides a bike down the")],  # the foot of the left column
               [(320, 760, "street and waves at the camera."), (320, 130, "A girl in a red coat walks along"),
                (320, 116, "the")]]
    for page in range(3):
        canvas.setFont("Helvetica", 9)
        canvas.drawString(72, 800, "Field notes")  # a running head
        canvas.drawCentredString(297, 40, str(page + 1))
        canvas.setFont("Helvetica", 11)
        for x, y, text in (columns[0] + columns[1] if page == 0 else
                           [(72, 760, "beach with her dog.")] if page == 1 else [(72, 760, "Two dogs play.")]):
            canvas.drawString(x, y, text)
        canvas.showPage()
    canvas.save()
    document = PdfDocument.read(out.getvalue(), "notes.pdf")
    assert document.texts == ["Field notes", "A man in a blue shirt rides a bike down the street and waves at the camera.",
                              "A girl in a red coat walks along the beach with her dog.", "Field notes", "Field notes",
                              "Two dogs play."]
    assert [[part.page for part in passage.parts] for passage in document.passages] == [[0], [0, 0], [0, 1], [1], [2], [2]]
    translations = ["feldnotizen", "ein mann in einem blauen hemd fährt mit dem fahrrad die straße entlang und winkt.",
                    "ein mädchen in einem roten mantel geht mit ihrem hund am strand entlang.", "feldnotizen",
                    "feldnotizen", "zwei hunde spielen."]
    again = PdfDocument.read(document.write(translations, "de"), "again")
    assert again.texts == translations  # each passage's words shared between its parts, in their places
    assert [[round(part.lines[0].baseline) for part in passage.parts] for passage in again.passages][1:3] == [
        [120, 760], [130, 760]]


def test_a_paragraph_runs_on_before_a_capital_only_where_its_last_line_had_no_room_for_it():
    """As in German, where the next column may begin with a noun: a full last line runs on; a
    short one (a heading, a list's lead-in) does not."""
    from reportlab.pdfgen.canvas import Canvas

    from nmt.decode.pdf_document import PdfDocument

    out = io.BytesIO()
    canvas = Canvas(out, pagesize=(595, 842), invariant=True)
    canvas.setFont("Helvetica", 11)
    for x, y, text in ((72, 134, "Three dogs run across a wide green field near"),
                       (72, 120, "the river while a small boy throws a red rubber"),  # full: "Ball" had no room
                       (320, 760, "Ball for them."),
                       (320, 134, "A girl in a red coat walks along the beach with"),
                       (320, 120, "her friend and the")):  # room left for "Dog"
        canvas.drawString(x, y, text)
    canvas.showPage()
    canvas.setFont("Helvetica", 11)
    canvas.drawString(72, 760, "Dog of the family runs ahead.")
    canvas.save()
    document = PdfDocument.read(out.getvalue(), "dogs.pdf")
    assert document.texts == ["Three dogs run across a wide green field near the river while a small boy throws a red "
                              "rubber Ball for them.",
                              "A girl in a red coat walks along the beach with her friend and the",
                              "Dog of the family runs ahead."]


def test_a_link_follows_its_words():
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.pdfgen.canvas import Canvas

    from nmt.decode.pdf_document import PdfDocument

    out = io.BytesIO()
    canvas = Canvas(out, pagesize=(400, 300), invariant=True)
    canvas.setFont("Helvetica", 11)
    canvas.drawString(50, 200, "Two dogs play in the park at noon.")
    start = 50 + stringWidth("Two dogs play in the ", "Helvetica", 11)
    canvas.linkURL("https://example.org/park", (start, 197, start + stringWidth("park", "Helvetica", 11), 209))
    canvas.save()
    document = PdfDocument.read(out.getvalue(), "dogs.pdf")
    assert document.texts == ["Two dogs play in the <f1>park</f1> at noon."]
    written = document.write(["Im <f1>Park</f1> spielen mittags zwei Hunde."], "de")
    [annotation] = [a.get_object() for a in pypdf.PdfReader(io.BytesIO(written)).pages[0]["/Annots"]]
    assert annotation["/A"]["/URI"] == "https://example.org/park"
    x0, y0, x1, y1 = (float(v) for v in annotation["/Rect"])
    # the rectangle now lies over "Park", the translation's second word, no longer where "park" was
    from pdfminer.high_level import extract_pages

    from nmt.decode.pdf_layout import layout_chars

    chars = [c for c in layout_chars(next(iter(extract_pages(io.BytesIO(written))))) if c.get_text().strip()]
    text = "".join(c.get_text() for c in chars)
    assert text == "ImParkspielenmittagszweiHunde."
    park = chars[text.index("Park"):text.index("Park") + 4]
    assert abs(x0 - park[0].x0) < 1 and abs(x1 - park[-1].x1) < 1 and y0 < 200 < y1 and x1 < start
