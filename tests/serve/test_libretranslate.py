"""LibreTranslate's API in `nmt serve`, spoken to by a real LibreTranslate client (libretranslatepy,
which posts forms) and in the JSON shapes of LibreTranslate's published API: the same
translations as nmt's own API, html kept as markup, lists, alternatives, auto source, errors."""

from __future__ import annotations

import json

import pytest

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


def test_json_requests_lists_html_alternatives_and_auto(server):
    own = server.post({"text": LINES})[1]["translations"]
    status, reply = libre(server, {"q": LINES, "source": "auto", "target": "de", "format": "text"})
    assert status == 200 and reply["translatedText"] == own
    assert reply["detectedLanguage"] == [{"language": "en", "confidence": 100.0}] * 2
    tagged = 'A <b>black</b> dog leaps over a <a href="x">log</a>.'
    marked = server.post({"text": [tagged], "markup": True})[1]["translations"][0]
    status, reply = libre(server, {"q": tagged, "source": "en", "target": "de", "format": "html"})
    assert status == 200 and reply["translatedText"] == marked and "<b>" in marked
    status, reply = libre(server, {"q": LINES[0], "source": "en", "target": "de", "alternatives": 2,
                                   "api_key": "anything"})
    nbest = server.post({"text": [LINES[0]], "nbest": 3, "beam_size": 4})[1]["nbest"][0]
    assert status == 200 and reply["translatedText"] == nbest[0]["text"]
    assert reply["alternatives"] == [h["text"] for h in nbest[1:]]


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
