"""A server worker's model calls in a process of its own (nmt.serve.worker_process)."""

from __future__ import annotations

import os
import signal

import pytest

from nmt.decode.engines.engine import load_engine
from nmt.decode.request import Line, LineRequest
from nmt.decode.translate import translate
from nmt.errors import NmtError
from nmt.serve import worker_process
from nmt.serve.worker_process import LoadSpec, WorkerProcess, resolve_worker_modes, start_workers

LINES = ["A black dog leaps over a log.", "Asian man sweeping the walkway.", "", "Two people sit on a bench."]


def lines_of(texts: list[str]) -> list[Line]:
    return [Line.of(LineRequest(text=text)) for text in texts]


@pytest.fixture(scope="module")
def tiny_checkpoint(trained_tiny):
    return trained_tiny.out / "checkpoints" / "best.pt"


@pytest.fixture(scope="module")
def worker(tiny_checkpoint):
    translator = load_engine([tiny_checkpoint], threads=1)
    spec = LoadSpec(str(tiny_checkpoint), "cpu", "torch", "default", 1)
    [process] = start_workers(spec, translator.recipe, translator.controls, 1)
    yield translator, process
    process.close()


def test_a_worker_process_translates_as_the_server_would_itself(worker):
    translator, process = worker
    cfg = translator.recipe.decode.model_copy(update={"beam_size": 3, "nbest": 2})
    here = translate(translator, lines_of(LINES), cfg)
    there = process.translate(lines_of(LINES), cfg)
    assert [[(h.tokens, h.score, h.text) for h in hyps] for hyps in there] == \
           [[(h.tokens, h.score, h.text) for h in hyps] for hyps in here]
    assert len(there) == len(LINES) and all(len(hyps) == 2 for hyps in there[:2])


def test_a_call_that_fails_in_the_worker_fails_in_the_server_and_the_worker_goes_on(worker, tmp_path):
    translator, process = worker
    broken = translator.recipe.decode.model_copy(update={"shortlist": str(tmp_path / "missing.txt")})
    with pytest.raises(NmtError, match="missing.txt: cannot read the shortlist"):
        process.translate(lines_of(LINES), broken)
    assert len(process.translate(lines_of(LINES[:1]), translator.recipe.decode)) == 1


def test_a_worker_process_that_died_starts_again_for_the_next_call(worker):
    translator, process = worker
    before = process.pid
    os.kill(before, signal.SIGKILL)
    process._process.join(timeout=10)
    [hyps] = process.translate(lines_of(LINES[:1]), translator.recipe.decode)
    assert hyps[0].tokens and process.pid != before


def test_a_model_a_worker_cannot_load_is_a_one_line_error(tmp_path):
    spec = LoadSpec(str(tmp_path / "nowhere.pt"), "cpu", "torch", "default", 1)
    with pytest.raises(NmtError, match="nowhere.pt: the model worker process could not load it"):
        WorkerProcess(spec, None, None).wait_ready()


def test_auto_picks_processes_only_for_the_torch_engine_on_a_cpu_with_several_workers(tiny_checkpoint, monkeypatch):
    cpu = LoadSpec(str(tiny_checkpoint), "cpu", "torch", "default", 1)
    cuda = LoadSpec(str(tiny_checkpoint), "cuda", "torch", "default", 0)
    two_processes = 2 * (tiny_checkpoint.stat().st_size + worker_process.PROCESS_OVERHEAD_BYTES)
    monkeypatch.setattr(worker_process, "available_memory_bytes", lambda: 2 * two_processes)
    assert resolve_worker_modes("auto", 2, [(cpu, "torch")]) == ["processes"]
    assert resolve_worker_modes("auto", 1, [(cpu, "torch")]) == ["threads"]
    assert resolve_worker_modes("auto", 2, [(cpu, "ctranslate2"), (cuda, "torch")]) == ["threads", "threads"]
    assert resolve_worker_modes("threads", 2, [(cpu, "torch")]) == ["threads"]
    # processes that would take more than half the memory available: threads
    monkeypatch.setattr(worker_process, "available_memory_bytes", lambda: 2 * two_processes - 2)
    assert resolve_worker_modes("auto", 2, [(cpu, "torch")]) == ["threads"]
    assert resolve_worker_modes("processes", 2, [(cpu, "torch")]) == ["processes"]  # asked for
    # two models served together are weighed together: each alone would fit, both do not
    monkeypatch.setattr(worker_process, "available_memory_bytes", lambda: 3 * two_processes)
    assert resolve_worker_modes("auto", 2, [(cpu, "torch"), (cpu, "ctranslate2")]) == ["processes", "threads"]
    assert resolve_worker_modes("auto", 2, [(cpu, "torch"), (cpu, "torch")]) == ["threads", "threads"]
    monkeypatch.setattr(worker_process, "available_memory_bytes", lambda: None)  # not known (not Linux)
    assert resolve_worker_modes("auto", 2, [(cpu, "torch")]) == ["threads"]


def test_a_server_whose_worker_processes_cannot_start_serves_with_threads(trained_tiny, monkeypatch, capsys):
    from fastapi.testclient import TestClient

    from nmt.serve import app as serve_app
    from nmt.serve.models import load_served

    def cannot_start(*_):
        raise NmtError("model.pt: the model worker process could not load it: no room")

    monkeypatch.setattr(serve_app, "start_workers", cannot_start)
    served = load_served([trained_tiny.out / "checkpoints" / "best.pt"], workers=2, worker_mode="processes")
    with TestClient(serve_app.create_app(served, workers=2)) as client:
        assert client.get("/health").json()["worker_mode"] == "threads"
        response = client.post("/translate", json={"text": ["A dog runs."]})
        assert response.status_code == 200 and len(response.json()["translations"]) == 1
    assert "its worker processes did not start (model.pt: the model worker process could not load it: no room); " \
           "its workers run as threads" in capsys.readouterr().err
