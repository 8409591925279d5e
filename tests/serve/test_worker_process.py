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


def os_threads() -> set[str]:
    """The ids of the process's threads (the suite's other threads may end meanwhile: compare what is new)."""
    return set(os.listdir("/proc/self/task"))


def new_threads_left(before: set[str], seconds: float = 5.0) -> set[str]:
    """The threads not in `before` still there after up to `seconds`: an ended team's threads leave a
    moment after the thread that owned it (later on a busy machine)."""
    import time

    deadline = time.monotonic() + seconds
    while (new := os_threads() - before) and time.monotonic() < deadline:
        time.sleep(0.01)
    return new


def parallel_work() -> float:
    """Torch work that runs an OpenMP parallel region on 2 threads (an elementwise op over more
    elements than one thread takes), in whatever thread calls it."""
    import torch

    torch.set_num_threads(2)
    return float(torch.ones(1 << 20).exp_().sum())


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts the process's threads in /proc (Linux)")
def test_torch_work_on_a_thread_that_ends_leaves_no_openmp_team_behind():
    """libgomp keeps a team for each thread that ran a parallel region while that thread lives;
    teams of more threads than cores make each region's threads sleep at its end, so a server's
    worker thread decodes 2-3 times slower once the thread that loaded the model holds a team
    (nmt.devices.on_a_thread_that_ends). Work done through the helper returns its result and
    leaves no new thread alive; the same work on a thread that lives on leaves one
    more (the team's worker thread: what the count of new threads can see)."""
    import threading

    import torch

    from nmt.devices import on_a_thread_that_ends

    threads = torch.get_num_threads()
    try:
        before = os_threads()
        assert on_a_thread_that_ends(parallel_work) == pytest.approx(2.718281828 * (1 << 20), rel=1e-4)
        assert not new_threads_left(before)
        done, stop = threading.Event(), threading.Event()
        lives_on = threading.Thread(target=lambda: (parallel_work(), done.set(), stop.wait()))
        lives_on.start()
        done.wait()
        assert len(os_threads() - before) == 2  # the thread itself and its team's worker
        stop.set()
        lives_on.join()

        def fails():
            raise NmtError("raised on the caller's thread")

        with pytest.raises(NmtError, match="raised on the caller's thread"):
            on_a_thread_that_ends(fails)
    finally:
        torch.set_num_threads(threads)


def test_a_server_loads_its_models_on_a_thread_that_ends(tiny_checkpoint, monkeypatch):
    """load_served loads (and, with decode.compile, warms up) each model on a thread of its own that
    ends: the server's worker threads are then the only ones with OpenMP teams."""
    import threading

    import nmt.decode.engines.engine
    from nmt.serve.models import load_served

    loaded_on = []
    monkeypatch.setattr(nmt.decode.engines.engine, "load_engine", lambda *args, **kwargs: loaded_on.append(
        threading.current_thread()) or load_engine(*args, **kwargs))  # the function load_served imports
    served = load_served([tiny_checkpoint], threads=1)
    assert served.first.translator.recipe.model.d_model == 64
    assert len(loaded_on) == 1 and loaded_on[0] is not threading.current_thread() and not loaded_on[0].is_alive()
