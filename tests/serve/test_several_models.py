"""One `nmt serve` of two models (en→de and de→en): each loaded once, each request answered by the
model of its languages, in nmt's API and in LibreTranslate's, as that model alone answers it;
two models of one direction are refused."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import trained_once
from tests.serve.test_serve import Server


@pytest.fixture(scope="module")
def models(trained_tiny, tmp_path_factory):
    reverse = trained_once(tmp_path_factory, "data.src_lang=de", "data.tgt_lang=en")
    return str(trained_tiny.out / "checkpoints" / "best.pt"), str(reverse.out / "checkpoints" / "best.pt")


def translations(checkpoint: str, lines: list[str]) -> list[str]:
    from nmt.decode.engines.engine import load_engine
    from nmt.decode.text.casing import hypothesis_text
    from nmt.decode.translate import translate_lines

    engine = load_engine([checkpoint])
    return [hypothesis_text(engine.tgt_tokenizer, h[0]) for h in translate_lines(engine, lines, engine.recipe.decode)]


def test_each_request_goes_to_the_model_of_its_languages(models):
    forward, reverse = models
    english, german = ["A black dog leaps over a log."], ["Ein schwarzer Hund springt über einen Baumstamm."]
    server = Server(forward, reverse)
    try:
        assert server.get("/languages")[1] == [{"code": "de", "name": "German", "targets": ["en"]},
                                               {"code": "en", "name": "English", "targets": ["de"]}]
        health = server.get("/health")[1]
        assert [m["directions"] for m in health["models"]] == [["en-de"], ["de-en"]]
        assert server.post({"text": english})[1]["translations"] == translations(forward, english)  # the first
        assert server.post({"text": german, "src_lang": "de", "tgt_lang": "en"})[1]["translations"] == \
            translations(reverse, german)
        status, body, _ = server.request("POST", "/translate", json.dumps(
            {"q": german[0], "source": "de", "target": "en"}).encode())
        assert status == 200 and json.loads(body)["translatedText"] == translations(reverse, german)[0]
        status, reply = server.post({"text": english, "src_lang": "en", "tgt_lang": "fr"})
        assert status == 422 and "this server translates de-en, en-de" in reply["error"]
        health = server.get("/health")[1]
        assert [m["served"]["requests"] for m in health["models"]] == [1, 2]
    finally:
        assert server.stop() == 0


def test_two_models_of_one_direction_are_refused(models):
    forward, _ = models
    run = subprocess.run([sys.executable, "-m", "nmt", "serve", forward, forward, "--port", "1"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "both translate en→de" in run.stderr and "nmt average" in run.stderr
    assert "Traceback" not in run.stderr
