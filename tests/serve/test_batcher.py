"""The request batcher of `nmt serve` (nmt.serve.batcher), with a stand-in worker whose calls
finish when the test says: requests that arrive while a call runs share the next one, and past
max_queued_lines a request is refused at once (503) instead of waiting without bound."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from nmt.config import DecodeConfig
from nmt.decode.request import Line, LineRequest, RequestRefused
from nmt.serve.batcher import Batcher


class HeldWorker:
    """Answers each call with its lines' texts once `release` is set; records the calls."""

    def __init__(self):
        self.release = threading.Event()
        self.started = threading.Event()
        self.calls: list[list[str]] = []

    def translate(self, lines, cfg, extras=()):
        self.calls.append([line.text for line in lines])
        self.started.set()
        self.release.wait(timeout=30)
        return [[line.text] for line in lines]

    def close(self):
        self.release.set()


class FirstCallHeld(HeldWorker):
    """Holds only its first call until `release`; answers the others at once."""

    def translate(self, lines, cfg, extras=()):
        if self.calls:
            self.calls.append([line.text for line in lines])
            return [[line.text] for line in lines]
        return super().translate(lines, cfg, extras)


def lines(*texts: str) -> list[Line]:
    return [Line.of(LineRequest(text=text)) for text in texts]


def test_requests_beyond_the_queue_limit_are_refused_at_once_and_the_rest_answered():
    async def scenario():
        worker = HeldWorker()
        batcher = Batcher(None, wait_ms=0, max_lines=64, workers=1, processes=[worker], max_queued_lines=5)
        cfg = DecodeConfig()
        first = asyncio.ensure_future(batcher.translate(lines("a"), cfg))  # taken by the worker, held
        await asyncio.to_thread(worker.started.wait, 10)
        queued = [asyncio.ensure_future(batcher.translate(lines("b", "c"), cfg)),
                  asyncio.ensure_future(batcher.translate(lines("d", "e", "f"), cfg))]
        await asyncio.sleep(0)  # both enqueued: 5 lines wait
        assert batcher.queued_lines == 5
        with pytest.raises(RequestRefused) as refused:
            await batcher.translate(lines("g"), cfg)
        assert refused.value.status == 503 and refused.value.limit == "max_queued_lines"
        assert "5 lines wait" in str(refused.value)
        worker.release.set()
        answers = [await first] + [await q for q in queued]
        batcher.close()
        return worker.calls, answers, batcher.queued_lines

    calls, answers, left = asyncio.run(scenario())
    assert calls == [["a"], ["b", "c", "d", "e", "f"]]  # the two that waited shared one call
    assert answers == [[["a"]], [["b"], ["c"]], [["d"], ["e"], ["f"]]] and left == 0


def test_a_request_larger_than_the_limit_is_taken_when_nothing_waits():
    async def scenario():
        worker = HeldWorker()
        worker.release.set()
        batcher = Batcher(None, wait_ms=0, workers=1, processes=[worker], max_queued_lines=2)
        answer = await batcher.translate(lines("a", "b", "c"), DecodeConfig())
        batcher.close()
        return answer

    assert asyncio.run(scenario()) == [["a"], ["b"], ["c"]]


def test_a_request_alone_in_flight_is_translated_without_waiting_for_company():
    """One client's requests come one after another: the batching window (a minute here) is
    skipped where no other request is queued or in a call, and kept where one is: a request
    that arrives while another worker's call runs waits for company, and shares its call."""
    async def scenario():
        worker = HeldWorker()
        worker.release.set()
        alone = Batcher(None, wait_ms=60_000, workers=1, processes=[worker])
        first = await asyncio.wait_for(alone.translate(lines("a"), DecodeConfig()), timeout=10)
        alone.close()

        held = FirstCallHeld()  # whichever worker takes the first call is held there
        batcher = Batcher(None, wait_ms=60_000, max_lines=2, workers=2, processes=[held, held])
        cfg = DecodeConfig()
        in_call = asyncio.ensure_future(batcher.translate(lines("b"), cfg))  # one worker's call, held
        await asyncio.to_thread(held.started.wait, 10)
        waiting = asyncio.ensure_future(batcher.translate(lines("c"), cfg))  # the other worker waits for company
        await asyncio.sleep(0.05)
        assert not waiting.done() and batcher.in_flight == 2
        joined = asyncio.ensure_future(batcher.translate(lines("d"), cfg))  # max_lines reached: the call starts
        answers = [await asyncio.wait_for(waiting, timeout=10), await asyncio.wait_for(joined, timeout=10)]
        held.release.set()
        answers.append(await in_call)
        batcher.close()
        return first, worker.calls, answers, held.calls, batcher.in_flight

    first, alone_calls, answers, calls, left = asyncio.run(scenario())
    assert first == [["a"]] and alone_calls == [["a"]]
    assert answers == [[["c"]], [["d"]], [["b"]]] and calls == [["b"], ["c", "d"]] and left == 0


def test_the_server_answers_a_refused_request_503_with_retry_after_in_both_apis(trained_tiny):
    from fastapi.testclient import TestClient

    from nmt.serve.app import ServeLimits, create_app
    from nmt.serve.models import load_served

    served = load_served([trained_tiny.out / "checkpoints" / "best.pt"])
    with TestClient(create_app(served, ServeLimits(max_queued_lines=2))) as client:
        batcher = served.first.batcher
        batcher.queued_lines = 2  # as if two lines waited for a worker
        for payload in ({"text": ["A dog runs."]}, {"q": "A dog runs.", "source": "en", "target": "de"}):
            response = client.post("/translate", json=payload)
            assert response.status_code == 503 and response.headers["Retry-After"] == "1"
            assert "the server is busy: 2 lines wait" in response.json()["error"]
        assert client.get("/health").json()["served"]["queued_lines"] == 2
        batcher.queued_lines = 0
        response = client.post("/translate", json={"text": ["A dog runs."]})
        assert response.status_code == 200 and len(response.json()["translations"]) == 1


class Recording:
    """Answers each call with its lines' texts after `seconds`; records the calls, and fails a call
    with a line `fail`."""

    def __init__(self, seconds: float = 0.0):
        self.calls: list[list[str]] = []
        self.seconds = seconds

    def translate(self, lines, cfg, extras=()):
        self.calls.append([line.text for line in lines])
        time.sleep(self.seconds)
        if "fail" in self.calls[-1]:
            raise ValueError("this call failed")
        return [[line.text] for line in lines]

    def close(self):
        pass


def test_a_request_of_several_lines_alone_in_flight_is_split_between_the_workers():
    """One client's request runs on every worker: the lines cut into consecutive shares, one call
    each, answered in order as one request; a request of one line is not split. (Each call takes
    0.3 s, so that the other worker has woken to take its share before the first is done.)"""
    async def scenario():
        workers = [Recording(0.3), Recording(0.3)]
        batcher = Batcher(None, wait_ms=60_000, workers=2, processes=workers)
        answer = await asyncio.wait_for(batcher.translate(lines("a", "b", "c", "d", "e"), DecodeConfig()), timeout=10)
        single = await asyncio.wait_for(batcher.translate(lines("f"), DecodeConfig()), timeout=10)
        batcher.close()
        return answer, single, workers, batcher

    answer, single, workers, batcher = asyncio.run(scenario())
    assert answer == [["a"], ["b"], ["c"], ["d"], ["e"]] and single == [["f"]]
    split = sorted(call for w in workers for call in w.calls if call != ["f"])
    assert split == [["a", "b", "c"], ["d", "e"]] and all(w.calls for w in workers)  # both workers took a share
    assert (batcher.stats.requests, batcher.stats.calls, batcher.stats.lines) == (2, 3, 6)
    assert batcher.in_flight == 0 and batcher.queued_lines == 0


def test_a_share_no_other_worker_takes_is_translated_by_the_splitting_one():
    """Where the other workers do not take a share (here the only other one has stopped), the worker
    that split the request takes it back once its own share is done: the request is answered."""
    async def scenario():
        worker = Recording()
        batcher = Batcher(None, wait_ms=0, workers=2, processes=[worker, worker])
        batcher._queue.put(None)  # one worker stops
        while all(t.is_alive() for t in batcher._workers):
            await asyncio.sleep(0.01)
        answer = await asyncio.wait_for(batcher.translate(lines("a", "b", "c", "d"), DecodeConfig()), timeout=10)
        batcher._workers = [t for t in batcher._workers if t.is_alive()]
        batcher.close()
        return answer, worker.calls

    answer, calls = asyncio.run(scenario())
    assert answer == [["a"], ["b"], ["c"], ["d"]] and calls == [["a", "b"], ["c", "d"]]


def test_a_failed_share_fails_its_request_and_the_workers_go_on():
    async def scenario():
        workers = [Recording(), Recording()]
        batcher = Batcher(None, wait_ms=0, workers=2, processes=workers)
        with pytest.raises(ValueError, match="this call failed"):
            await asyncio.wait_for(batcher.translate(lines("a", "b", "fail", "d"), DecodeConfig()), timeout=10)
        after = await asyncio.wait_for(batcher.translate(lines("e", "f"), DecodeConfig()), timeout=10)
        batcher.close()
        return after, batcher.in_flight

    after, in_flight = asyncio.run(scenario())
    assert after == [["e"], ["f"]] and in_flight == 0


def test_a_request_alone_just_after_others_is_not_split(monkeypatch):
    """Splitting pays only where the other workers would idle: a request alone within
    QUIET_SECONDS of two requests in flight together (several clients) is one call; once the
    server has been quiet that long, it is split again."""
    monkeypatch.setattr("nmt.serve.batcher.QUIET_SECONDS", 0.5)

    async def scenario():
        worker = Recording(0.05)
        batcher = Batcher(None, wait_ms=0, workers=2, processes=[worker, worker])
        cfg = DecodeConfig()
        await asyncio.gather(batcher.translate(lines("a"), cfg), batcher.translate(lines("b"), cfg))  # crowded
        crowded = await asyncio.wait_for(batcher.translate(lines("c", "d"), cfg), timeout=10)
        calls_then = sorted(worker.calls)
        await asyncio.sleep(0.6)
        quiet = await asyncio.wait_for(batcher.translate(lines("e", "f"), cfg), timeout=10)
        batcher.close()
        return crowded, calls_then, quiet, sorted(worker.calls)

    crowded, calls_then, quiet, calls = asyncio.run(scenario())
    assert crowded == [["c"], ["d"]] and ["c", "d"] in calls_then  # one call
    assert quiet == [["e"], ["f"]] and calls[-2:] == [["e"], ["f"]]  # a call for each share


def test_a_clients_next_request_sent_on_its_answer_is_alone_in_flight(monkeypatch):
    """A request is no longer in flight once its answer goes out: the client's next request, sent
    at once and taken by the other, idle worker, is alone and skips the batching window (a minute
    here). Counted out after its answer went out (a worker slowed there by 20 ms, to make that
    race certain), the previous request made the next one wait for company."""
    answered = Batcher._answered

    def slowly_answered(self, requests):
        time.sleep(0.02)
        answered(self, requests)

    monkeypatch.setattr(Batcher, "_answered", slowly_answered)

    async def scenario():
        batcher = Batcher(None, wait_ms=60_000, workers=2, processes=[Recording(), Recording()])
        answers = [await asyncio.wait_for(batcher.translate(lines(str(i)), DecodeConfig()), timeout=5)
                   for i in range(10)]
        batcher.close()
        return answers

    assert asyncio.run(scenario()) == [[[str(i)]] for i in range(10)]
