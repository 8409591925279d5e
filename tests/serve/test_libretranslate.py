"""LibreTranslate's API in `nmt serve`, spoken to by a real LibreTranslate client (libretranslatepy,
which posts forms) and in the JSON shapes of LibreTranslate's published API: the same
translations as nmt's own API, html kept as markup, lists, alternatives, auto source, errors."""

from __future__ import annotations

import json

import pytest

from nmt.serve.libretranslate import LibreError, detections, parse
from tests.conftest import optional_module
from tests.serve.test_serve import Server

LINES = ["A black dog leaps over a log.", "Asian man sweeping the walkway."]


@pytest.fixture(scope="module")
def server(trained_tiny):
    s = Server(str(trained_tiny.out / "checkpoints" / "best.pt"), "--max-lines", "8", "--worker-mode", "threads")
    yield s
    assert s.stop() == 0


def libre(server: Server, payload: dict) -> tuple[int, dict]:
    status, body, content_type = server.request("POST", "/translate", json.dumps(payload).encode())
    assert content_type.startswith("application/json"), content_type
    return status, json.loads(body)


def test_a_libretranslate_client_translates_as_nmts_own_api(server):
    from libretranslatepy import LibreTranslateAPI

    client = LibreTranslateAPI(server.url)
    assert client.languages() == [{"code": "en", "name": "English", "targets": ["de"]}]
    own = server.post({"text": LINES})[1]["translations"]
    assert [client.translate(line, "en", "de") for line in LINES] == own
    assert client.translate("\n".join(LINES), "auto", "de") == "\n".join(own)  # a text of several lines


def multipart(fields: list[tuple[str, str]], boundary: str = "nmt-test-boundary") -> tuple[bytes, str]:
    """A multipart/form-data body, as a browser's FormData posts it."""
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
             for name, value in fields]
    return "".join(parts + [f"--{boundary}--\r\n"]).encode("utf-8"), f"multipart/form-data; boundary={boundary}"


def test_a_multipart_form_translates_as_json_does(server):
    own = server.post({"text": LINES + ["Zwei Männer."]})[1]["translations"]
    for fields, expected in (([("q", LINES[0]), ("source", "en"), ("target", "de")], own[0]),
                             ([("q", LINES[1]), ("q", "Zwei Männer."), ("source", "auto"), ("target", "de")], own[1:])):
        status, body, _ = server.request("POST", "/translate", *multipart(fields))
        assert status == 200 and json.loads(body)["translatedText"] == expected, body
    body, content_type = multipart([("q", "a"), ("source", "en"), ("target", "de")])
    status, reply, _ = server.request("POST", "/translate", body[:-10], content_type)  # cut short
    assert status == 400 and json.loads(reply)["error"].startswith("Invalid request"), reply
    status, reply, _ = server.request("POST", "/translate", body, "multipart/form-data")  # no boundary
    assert status == 400 and "boundary" in json.loads(reply)["error"], reply


def with_file(fields: list[tuple[str, str]], name: str, content: bytes,
              boundary: str = "nmt-test-boundary") -> tuple[bytes, str]:
    """A multipart/form-data body with a file part, as LibreTranslate's web client posts a file."""
    body, content_type = multipart(fields, boundary)
    part = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + content + b"\r\n"
    return part + body, content_type


SUBRIP = "1\n00:00:01,000 --> 00:00:04,000\nA black dog leaps\nover a log.\n\n2\n00:00:05,000 --> 00:00:06,000\n<i>Asian man</i> sweeping the walkway.\n"


PAGE = ('<html lang="en"><head><title>A dog &amp; a cat</title></head>\n<body><p>A black dog leaps\nover a <b>log</b>.</p>\n'
        '<img alt="Asian man"><script>var a = "<p>A man</p>";</script></body></html>\n')


def test_a_file_is_translated_as_nmt_translate_writes_it_and_downloaded(server, trained_tiny, tmp_path):
    from typer.testing import CliRunner

    from nmt.cli import app

    from tests.decode.test_app_messages import CATALOG
    from tests.decode.test_localization_files import XLIFF_2

    catalog = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "A black dog"\nmsgstr ""\n'
    for name, content in (("talk.en.srt", SUBRIP), ("notes.txt", "\n".join(LINES) + "\n\n...\n"),
                          ("app.xlf", XLIFF_2.replace("fr", "de")), ("app.pot", catalog), ("en.json", '{"a": "A black dog"}'),
                          ("Localizable.xcstrings", json.dumps(CATALOG)), ("README.md", "# A dog\n\nA **black** dog runs.\n\nA <b>dog</b> runs to [the park](a.md).\n\n"
                                                                 "<div>\nA *black* dog.\n</div>\n"),
                          ("index.rst", "A dog\n=====\n\nA black dog runs::\n\n    code\n"),
                          ("index.adoc", "= A dog\n\n* A black dog runs.\n\n----\ncode\n----\n"),
                          ("lesson.ipynb", json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# A dog"]},
                                                                 {"cell_type": "code", "metadata": {}, "source": ["x = 1"]}],
                                                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)),
                          ("en.toml", 'a = "A black dog"\n'), ("auth.php", "<?php\nreturn ['a' => 'A black dog'];\n"),
                          ("page.html", PAGE)):
        status, body, _ = server.request("POST", "/translate_file", *with_file(
            [("source", "en"), ("target", "de")], name, content.encode()))
        assert status == 200, body
        url = json.loads(body)["translatedFileUrl"]
        assert url.startswith(server.url + "/download_file/") and url.endswith("." + name)
        status, translated, _ = server.request("GET", url.removeprefix(server.url))
        assert status == 200
        # the same file as nmt translate writes from the same model
        (tmp_path / name).write_text(content, encoding="utf-8")
        result = CliRunner().invoke(app, ["translate", "-c", str(trained_tiny.out / "checkpoints" / "best.pt"),
                                          "-i", str(tmp_path / name), "-o", str(tmp_path / f"out.{name}")])
        assert result.exit_code == 0, result.output
        assert translated.decode("utf-8") == (tmp_path / f"out.{name}").read_text(encoding="utf-8")
    page = translated.decode("utf-8")  # the last: the HTML document, translated block by block, its script copied
    assert '<script>var a = "<p>A man</p>";</script>' in page and "A black dog" not in page and "<p>" in page
    assert page.startswith('<html lang="de">')
    # what cannot be translated: 400 with an error naming it; a name never given or no longer kept: 404
    for name, content, words in (("a.xls", b"PK", "file format not supported"),
                                 ("a.srt", b"1\nA dog.\n", "a.srt: line 1: a subtitle block without a timing line"),
                                 ("a.txt", b"\xff", "a.txt: invalid UTF-8")):
        status, body, _ = server.request("POST", "/translate_file", *with_file(
            [("source", "en"), ("target", "de")], name, content))
        assert status == 400 and words in json.loads(body)["error"], body
    status, body, _ = server.request("POST", "/translate_file", *multipart([("source", "en"), ("target", "de")]))
    assert status == 400 and "missing file" in json.loads(body)["error"]
    status, body, _ = server.request("POST", "/translate_file", *with_file([("source", "en"), ("target", "fr")],
                                                                           "a.txt", b"A dog."))
    assert status == 400 and "fr is not supported" in json.loads(body)["error"]
    status, body, _ = server.request("GET", "/download_file/nothing.a.txt")
    assert status == 404 and "no such translated file" in json.loads(body)["error"]


@optional_module("docx")[1]
def test_a_word_document_is_translated_as_nmt_translate_writes_it(server, trained_tiny, tmp_path):
    from typer.testing import CliRunner

    from nmt.cli import app
    from nmt.decode.docx_document import DocxDocument
    from tests.decode.test_docx_document import _document

    content = _document()
    status, body, _ = server.request("POST", "/translate_file", *with_file(
        [("source", "en"), ("target", "de")], "letter.docx", content))
    assert status == 200, body
    status, translated, content_type = server.request("GET", json.loads(body)["translatedFileUrl"].removeprefix(server.url))
    assert status == 200 and content_type.startswith("application/vnd.openxmlformats-officedocument")
    (tmp_path / "letter.docx").write_bytes(content)
    result = CliRunner().invoke(app, ["translate", "-c", str(trained_tiny.out / "checkpoints" / "best.pt"),
                                      "-i", str(tmp_path / "letter.docx"), "-o", str(tmp_path / "out.docx")])
    assert result.exit_code == 0, result.output
    texts = DocxDocument.read(translated, "served").texts
    assert texts == DocxDocument.read((tmp_path / "out.docx").read_bytes(), "cli").texts
    assert texts != DocxDocument.read(content, "source").texts
    status, body, _ = server.request("POST", "/translate_file", *with_file(
        [("source", "en"), ("target", "de")], "a.docx", b"A dog."))
    assert status == 400 and "a.docx: not a Word document (.docx)" in json.loads(body)["error"], body


@pytest.mark.parametrize("name, media_type", [("book.epub", "application/epub+zip"),
                                              ("talk.pptx", "application/vnd.openxmlformats-officedocument"),
                                              ("letter.odt", "application/vnd.oasis.opendocument.text"),
                                              ("park.pdf", "application/pdf")])
def test_e_books_presentations_and_opendocument_are_translated_as_nmt_translate_writes_them(server, trained_tiny, tmp_path,
                                                                                  name, media_type):
    from typer.testing import CliRunner

    from nmt.cli import app
    from tests.decode.test_epub_document import _book
    from tests.decode.test_odf_document import TEXT, _package
    from tests.decode.test_pdf_document import _pdf
    from tests.decode.test_pptx_document import _presentation

    # (a zip's bytes hold the time it was written: made once)
    data = {"epub": _book, "pptx": _presentation, "odt": lambda: _package("text", TEXT), "pdf": _pdf}[name.split(".")[1]]()
    status, body, _ = server.request("POST", "/translate_file", *with_file(
        [("source", "en"), ("target", "de")], name, data))
    assert status == 200, body
    status, translated, content_type = server.request("GET", json.loads(body)["translatedFileUrl"].removeprefix(server.url))
    assert status == 200 and content_type.startswith(media_type)
    (tmp_path / name).write_bytes(data)
    result = CliRunner().invoke(app, ["translate", "-c", str(trained_tiny.out / "checkpoints" / "best.pt"),
                                      "-i", str(tmp_path / name), "-o", str(tmp_path / f"out.{name}")])
    assert result.exit_code == 0, result.output
    assert translated == (tmp_path / f"out.{name}").read_bytes() != data


def test_json_requests_lists_html_alternatives_and_auto(server):
    own = server.post({"text": LINES})[1]["translations"]
    status, reply = libre(server, {"q": LINES, "source": "auto", "target": "de", "format": "text"})
    assert status == 200 and reply["translatedText"] == own
    # each text's probability of English by the identifier, as /detect gives it
    assert reply["detectedLanguage"] == [{"language": "en", "confidence": detections([line], ["en"])[0]["confidence"]}
                                         for line in LINES]
    tagged = 'A <b>black</b> dog leaps over a <a href="x">log</a>.'
    marked = server.post({"text": [tagged], "markup": True})[1]["translations"][0]
    status, reply = libre(server, {"q": tagged, "source": "en", "target": "de", "format": "html"})
    assert status == 200 and reply["translatedText"] == marked and "<b>" in marked
    # a page (or a fragment of one) over several lines: block by block, as nmt translate writes an .html file
    from nmt.decode.html_document import HtmlDocument

    status, reply = libre(server, {"q": [PAGE.rstrip("\n"), tagged], "source": "en", "target": "de", "format": "html"})
    page = HtmlDocument.read(PAGE.rstrip("\n").split("\n"))
    blocks = server.post({"text": page.texts, "markup": True})[1]["translations"]
    assert status == 200 and reply["translatedText"] == ["\n".join(page.write(blocks, "de")), marked]
    assert reply["translatedText"][0].startswith('<html lang="de">') and 'var a = "<p>A man</p>"' in reply["translatedText"][0]
    status, reply = libre(server, {"q": LINES[0], "source": "en", "target": "de", "alternatives": 2,
                                   "api_key": "anything"})
    nbest = server.post({"text": [LINES[0]], "nbest": 3, "beam_size": 4})[1]["nbest"][0]
    assert status == 200 and reply["translatedText"] == nbest[0]["text"]
    assert reply["alternatives"] == [h["text"] for h in nbest[1:]]


def test_detect_and_the_web_clients_settings(server):
    """/detect ranks the served source languages (here en alone) by the identifier's probability,
    0-100, as LibreTranslate's clients read it (libretranslatepy posts a form, others JSON, a
    list averaged by length); /frontend/settings gives the web client its limits and defaults."""
    from libretranslatepy import LibreTranslateAPI

    [english] = LibreTranslateAPI(server.url).detect(LINES[0])
    assert english["language"] == "en" and english == detections([LINES[0]], ["en"])[0] and english["confidence"] > 50
    status, body, _ = server.request("POST", "/detect", json.dumps({"q": [LINES[0], "Zwei Männer."]}).encode())
    assert status == 200 and json.loads(body) == detections([LINES[0], "Zwei Männer."], ["en"])
    for payload in ({}, {"q": 3}):
        status, body, _ = server.request("POST", "/detect", json.dumps(payload).encode())
        assert status == 400 and json.loads(body)["error"].startswith("Invalid request: missing q"), body
    status, body, _ = server.request("POST", "/detect", b"{not json")
    assert status == 400 and json.loads(body)["error"].startswith("Invalid request"), body
    status, body, _ = server.request("GET", "/frontend/settings")
    settings = json.loads(body)
    assert status == 200 and settings["charLimit"] == 2000 and settings["filesTranslation"] is True
    assert settings["supportedFilesFormat"] == [
        ".txt", ".srt", ".vtt", ".html", ".htm", ".md", ".markdown", ".mdx", ".rst", ".adoc", ".asciidoc", ".ipynb", ".epub", ".docx",
        ".pptx", ".xlsx", ".odt", ".odp", ".ods", ".pdf", ".xlf", ".xliff", ".xml", ".ts", ".resx", ".stringsdict", ".json", ".arb", ".xcstrings",
        ".strings", ".properties", ".yml", ".yaml", ".toml", ".php", ".ini", ".csv", ".tsv", ".po", ".pot"]
    assert settings["language"] == {"source": {"code": "auto", "name": "Auto Detect"},
                                    "target": {"code": "de", "name": "German"}}


def test_source_auto_chooses_among_the_languages_read_into_the_target(monkeypatch):
    """A server reading English and French into German: source auto takes the language the
    identifier finds for the whole request, and each long text its own. Without py3langid, auto is an error naming both
    (and the extra); with one language read into the target it is that one, at 100."""
    served = {("en", "de"), ("fr", "de"), ("de", "en")}
    french = ["Un chien noir saute par-dessus une bûche.", "Deux hommes marchent dans la rue."]
    asked = parse({"q": french, "source": "auto", "target": "de"}, served)
    assert asked.source == "fr" and asked.detected and len(asked.confidences) == 2 and min(asked.confidences) > 50
    assert parse({"q": LINES[0], "source": "auto", "target": "de"}, served).source == "en"
    assert parse({"q": LINES[0], "source": "auto", "target": "en"}, served).source == "de"  # the only reader
    # as LibreTranslate: a text over 40 characters from its own language, a shorter one from the request's
    mixed = parse({"q": [" ".join(french), " ".join(LINES), "Un chien."], "source": "auto", "target": "de"}, served)
    assert mixed.text_sources()[:2] == ["fr", "en"] and mixed.text_sources()[2] == mixed.source
    assert min(mixed.confidences[:2]) > 50  # each text's probability of its own language

    def no_py3langid(*_):
        raise LibreError("language detection (/detect, source auto) needs py3langid: pip install 'nmt[langid]'")

    monkeypatch.setattr("nmt.serve.libretranslate.probabilities", no_py3langid)
    with pytest.raises(LibreError, match=r"into de from en, fr: name the source, or install nmt\[langid\]"):
        parse({"q": french, "source": "auto", "target": "de"}, served)
    assert parse({"q": LINES, "source": "auto", "target": "en"}, served).confidences == [100.0, 100.0]


def test_a_language_may_be_named_by_another_of_its_codes(server):
    """Clients that know ISO 639-1 codes only reach a model that names its languages otherwise
    (NLLB-200's deu_Latn), and the other way round: here eng and deu_Latn reach en-de."""
    own = server.post({"text": LINES[:1]})[1]["translations"]
    status, reply = libre(server, {"q": LINES[0], "source": "eng", "target": "deu_Latn"})
    assert status == 200 and reply["translatedText"] == own[0], reply
    status, reply = libre(server, {"q": LINES[0], "source": "fra", "target": "de"})
    assert status == 400 and reply["error"].startswith("fra is not supported"), reply


def test_bad_libretranslate_requests_are_400_with_an_error(server):
    for payload, words in (({"q": "a", "source": "fr", "target": "de"}, "fr is not supported"),
                           ({"q": "a", "source": "en", "target": "fr"}, "fr is not supported from en"),
                           ({"q": "a", "source": "en"}, "missing target"),
                           ({"q": 3, "source": "en", "target": "de"}, "missing q"),
                           ({"q": "a", "source": "en", "target": "de", "format": "pdf"}, "format pdf")):
        status, reply = libre(server, payload)
        assert status == 400 and words in reply["error"], reply
    status, reply = libre(server, {"q": ["x"] * 9, "source": "en", "target": "de"})
    assert status == 413 and "max_lines" in reply["error"]
    status, reply = server.post({"text": "not a list"})  # nmt's own API keeps its answers
    assert status == 422 and reply["error"].startswith("text:")


def test_languages_are_named_for_two_and_three_letter_codes_and_nllbs():
    from nmt.serve.libretranslate import languages

    listed = languages({("eng_Latn", "deu_Latn"), ("eng_Latn", "zho_Hant"), ("en", "fra"), ("en", "xx")})
    assert [(entry["code"], entry["name"]) for entry in listed] == [("en", "English"), ("eng_Latn", "English")]
    assert languages({("fra", "pes_Arab"), ("pes_Arab", "qq_Latn"), ("qq_Latn", "fra")}) == [
        {"code": "fra", "name": "French", "targets": ["pes_Arab"]},
        {"code": "pes_Arab", "name": "Persian", "targets": ["qq_Latn"]},
        {"code": "qq_Latn", "name": "qq_Latn", "targets": ["fra"]}]  # a code the table lacks: as it is
