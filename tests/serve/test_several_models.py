"""One `nmt serve` of two models (en→de and de→en): each loaded once, each request answered by the
model of its languages, in nmt's API and in LibreTranslate's, as that model alone answers it;
two models of one direction are refused. (The app in this process: tests/serve/test_serve.py
runs the real server.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from tests.conftest import one_line_error, trained_once


@pytest.fixture(scope="module")
def models(trained_tiny, tmp_path_factory):
    reverse = trained_once(tmp_path_factory, "data.src_lang=de", "data.tgt_lang=en", "train.max_steps=100")
    return str(trained_tiny.out / "checkpoints" / "best.pt"), str(reverse.out / "checkpoints" / "best.pt")


def translations(checkpoint: str, lines: list[str]) -> list[str]:
    from nmt.decode.engines.engine import load_engine
    from nmt.decode.text.casing import hypothesis_text
    from nmt.decode.translate import translate_lines

    engine = load_engine([checkpoint])
    return [hypothesis_text(engine.tgt_tokenizer, h[0]) for h in translate_lines(engine, lines, engine.recipe.decode)]


def test_each_request_goes_to_the_model_of_its_languages(models):
    from fastapi.testclient import TestClient

    from nmt.serve.app import create_app
    from nmt.serve.models import load_served

    forward, reverse = models
    english, german = ["A black dog leaps over a log."], ["Ein schwarzer Hund springt über einen Baumstamm."]
    with TestClient(create_app(load_served([Path(forward), Path(reverse)]))) as client:
        def post(payload: dict) -> tuple[int, dict]:
            response = client.post("/translate", json=payload)
            return response.status_code, response.json()

        assert client.get("/languages").json() == [{"code": "de", "name": "German", "targets": ["en"]},
                                                   {"code": "en", "name": "English", "targets": ["de"]}]
        assert [m["directions"] for m in client.get("/health").json()["models"]] == [["en-de"], ["de-en"]]
        assert post({"text": english})[1]["translations"] == translations(forward, english)  # the first
        assert post({"text": german, "src_lang": "de", "tgt_lang": "en"})[1]["translations"] == \
            translations(reverse, german)
        status, reply = post({"q": german[0], "source": "de", "target": "en"})
        assert status == 200 and reply["translatedText"] == translations(reverse, german)[0]
        status, reply = post({"text": english, "src_lang": "en", "tgt_lang": "fr"})
        assert status == 422 and "this server translates de-en, en-de" in reply["error"]
        assert [m["served"]["requests"] for m in client.get("/health").json()["models"]] == [1, 2]


def test_two_models_of_one_direction_are_refused(models):
    forward, _ = models
    one_line_error(CliRunner().invoke(app, ["serve", forward, forward, "--port", "1"]),
                   "both translate en→de", "nmt average")


def test_an_unknown_worker_mode_is_refused_before_any_model_loads(models):
    forward, _ = models
    one_line_error(CliRunner().invoke(app, ["serve", forward, "--worker-mode", "fibers", "--port", "1"]),
                   "--worker-mode fibers: choose one of auto, processes, threads")
