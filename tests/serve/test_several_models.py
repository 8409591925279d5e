"""One `nmt serve` of two models (en→de and de→en), then three (and fr→de): each loaded once, each
request answered by the model of its languages, in nmt's API and in LibreTranslate's, as that
model alone answers it; a request of several languages split between them, each line (text)
answered as its model alone answers it, in the request's order; two models of one direction are
refused. (The app in this process: tests/serve/test_serve.py runs the real server.)"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from tests.conftest import TINY_DATA, one_line_error, trained_once


@pytest.fixture(scope="module")
def models(trained_tiny, tmp_path_factory):
    reverse = trained_once(tmp_path_factory, "data.src_lang=de", "data.tgt_lang=en", "train.max_steps=100")
    return str(trained_tiny.out / "checkpoints" / "best.pt"), str(reverse.out / "checkpoints" / "best.pt")


@pytest.fixture(scope="module")
def french(tmp_path_factory):
    """A third model, "fr→de": the tiny corpus's English named French (what it translates matters
    less than that a request's French lines reach it and come back as it alone translates them)."""
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # one corpus for every worker: trained_once then trains it once
    corpus = shared / "tiny-fr-de"
    with FileLock(f"{corpus}.lock"):
        if not corpus.is_dir():
            (ready := shared / "tiny-fr-de.part").mkdir(exist_ok=True)
            for split in ("train", "valid"):
                shutil.copy(TINY_DATA / f"{split}.en", ready / f"{split}.fr")
                shutil.copy(TINY_DATA / f"{split}.de", ready / f"{split}.de")
            ready.rename(corpus)
    recipe = trained_once(tmp_path_factory, "data.src_lang=fr", f"data.train={corpus / 'train'}",
                          f"data.valid={corpus / 'valid'}", f"data.test={corpus / 'valid'}", "train.max_steps=60")
    return str(recipe.out / "checkpoints" / "best.pt")


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


ENGLISH = ["A black dog leaps over a log.", "Two men sit on a bench in the park."]
GERMAN = ["Ein schwarzer Hund springt über einen Baumstamm."]
FRENCH = ["Un chien noir saute par-dessus une bûche dans le jardin.", "Deux hommes sont assis sur un banc."]


def test_a_request_of_several_languages_is_split_between_their_models(models, french):
    """Lines of three directions in one request: each answered as its model alone answers it, in
    the request's order, with nmt's src_lang per line or auto and LibreTranslate's source auto;
    errors name the request's own line."""
    from fastapi.testclient import TestClient

    from nmt.serve.app import create_app
    from nmt.serve.models import load_served

    forward, reverse = models
    alone = {"en": translations(forward, ENGLISH), "de": translations(reverse, GERMAN), "fr": translations(french, FRENCH)}
    with TestClient(create_app(load_served([Path(forward), Path(reverse), Path(french)]))) as client:
        def post(payload: dict) -> dict:
            response = client.post("/translate", json=payload)
            assert response.status_code == 200, response.json()
            return response.json()

        lines = [FRENCH[0], ENGLISH[0], GERMAN[0], FRENCH[1], ENGLISH[1]]
        sources, targets = ["fr", "en", "de", "fr", "en"], ["de", "de", "en", "de", "de"]
        expected = [alone["fr"][0], alone["en"][0], alone["de"][0], alone["fr"][1], alone["en"][1]]
        answer = post({"text": lines, "src_lang": sources, "tgt_lang": targets, "scores": True})
        assert answer["translations"] == expected and len(answer["scores"]) == 5
        # a line's prefix goes with it to its model
        prefixed = post({"text": lines[:3], "src_lang": sources[:3], "tgt_lang": targets[:3],
                         "prefix": ["", "Zwei", "Two"]})["translations"]
        assert prefixed[0] == expected[0] and prefixed[1].startswith("Zwei") and prefixed[2].startswith("Two")
        assert not expected[1].startswith("Zwei") and not expected[2].startswith("Two")
        assert [m["served"]["requests"] for m in client.get("/health").json()["models"]] == [2, 2, 2]

        # src_lang auto: each line's source among the languages read into its target (en and fr into de)
        into_german = [ENGLISH[0], FRENCH[0], ENGLISH[1], FRENCH[1]]
        answer = post({"text": into_german, "src_lang": "auto", "tgt_lang": "de"})
        assert answer["src_lang"] == ["en", "fr", "en", "fr"]
        assert answer["translations"] == [alone["en"][0], alone["fr"][0], alone["en"][1], alone["fr"][1]]

        # LibreTranslate's source auto: each text over 40 characters from its own language, to its own model
        answer = post({"q": [FRENCH[0], ENGLISH[1] + "\n" + ENGLISH[0]], "source": "auto", "target": "de"})
        assert [d["language"] for d in answer["detectedLanguage"]] == ["fr", "en"]
        assert answer["translatedText"] == [alone["fr"][0], alone["en"][1] + "\n" + alone["en"][0]]

        response = client.post("/translate", json={"text": lines[:3], "src_lang": "en", "tgt_lang": ["de", "de", "cs"]})
        assert response.status_code == 422 and response.json()["error"].startswith("line 3: no model here translates en-cs")
        response = client.post("/translate", json={"text": ENGLISH, "src_lang": "auto", "tgt_lang": ["de", "cs"]})
        assert response.status_code == 422
        assert response.json()["error"] == "line 2: src_lang auto: this server translates into cs from no language"


def test_two_models_of_one_direction_are_refused(models):
    forward, _ = models
    one_line_error(CliRunner().invoke(app, ["serve", forward, forward, "--port", "1"]),
                   "both translate en→de", "nmt average")


def test_an_unknown_worker_mode_is_refused_before_any_model_loads(models):
    forward, _ = models
    one_line_error(CliRunner().invoke(app, ["serve", forward, "--worker-mode", "fibers", "--port", "1"]),
                   "--worker-mode fibers: choose one of auto, processes, threads")


def test_a_zero_shot_line_goes_to_a_model_trained_on_its_direction_before_one_that_guesses():
    """Routing alone (no model loaded): a model of de→en and en→fr could translate de→fr
    zero-shot, but a later model trained on de→fr gets such lines, zero_shot or not; a direction
    no model was trained on goes to the first that can guess it, only with zero_shot."""
    from types import SimpleNamespace

    from nmt.config import DataConfig
    from nmt.decode.request import RequestRefused
    from nmt.serve.models import Served, ServedModels

    def served(name: str, *directions: tuple[str, str]) -> Served:
        corpora = [{"path": f"{name}-{src}{tgt}", "src_lang": src, "tgt_lang": tgt} for src, tgt in directions]
        data = DataConfig(src_lang=directions[0][0], tgt_lang=directions[0][1], train=corpora, valid="valid",
                          language_token="target")
        return Served(SimpleNamespace(recipe=SimpleNamespace(data=data)), name)

    many, german_french = served("many", ("de", "en"), ("en", "fr"), ("en", "cs")), served("de-fr", ("de", "fr"))
    models = ServedModels([many, german_french])
    assert many.translates("de", "fr", zero_shot=True) and not many.translates("de", "fr")
    for zero_shot in (False, True):
        assert models.for_line("de", "fr", 1, zero_shot) is german_french
        assert models.for_line("en", "fr", 1, zero_shot) is many
    assert models.for_line("de", "cs", 1, zero_shot=True) is many
    with pytest.raises(RequestRefused, match="line 3: no model here translates de-cs"):
        models.for_line("de", "cs", 3)
    assert models.for_lines(["de", "en", "de"], ["fr", "fr", "cs"], zero_shot=True) == {1: [0], 0: [1, 2]}
