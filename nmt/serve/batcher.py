"""Requests that arrive together become one model call.

`workers` threads share the model (inference only reads its weights) and one queue. A free
worker takes the first waiting request, waits up to `wait_ms` for more (until `max_lines` lines
are gathered), groups what it has by decode settings, and translates each group in one call:
the length-sorted token batching inside then packs lines from several requests together. It
waits only while other requests are in flight (queued, or in another worker's call): a request
alone would gain no company by waiting, and one client's requests come one after another. A
request of several lines alone in flight, with no other in flight for QUIET_SECONDS (one
client), is split between the workers instead (`_split`), each translating a share at once, so
that the client's request runs on every worker. With two workers, one model call runs while the
other gathers and starts the next, so a request waits for at most about one call ahead of it; on
a CPU each worker's torch operations run on its own thread (nmt serve sets the threads per
worker), or each worker's calls run in a process of its own (nmt.serve.worker_process), the
worker thread waiting for its answer. Callers await a future; the event loop never blocks.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass

from nmt.config import DecodeConfig
from nmt.decode.search import Hypothesis
from nmt.decode.request import Line, RequestRefused
from nmt.decode.translate import translate


# How long no two requests must have been in flight together before a request alone is split
# between the workers: splitting costs more CPU in all (two calls of 2 lines take about 1.5× one of
# 4), which only an otherwise idle worker can pay for. Two clients, whose requests are each alone
# now and then, were answered 8 % fewer sentences/s when those were split too.
QUIET_SECONDS = 1.0


@dataclass
class _Request:
    """A request's lines, or a share of a split request's (`share`: its result goes to that future,
    and it is not counted as a request in flight or as lines queued)."""
    lines: list[Line]
    cfg: DecodeConfig
    extras: tuple[str, ...]
    future: asyncio.Future | None = None
    loop: asyncio.AbstractEventLoop | None = None
    share: Future | None = None
    claimed: bool = False  # a share: taken by a worker to translate

    def deliver(self, results: list) -> None:
        if self.share is not None:
            self.share.set_result(results)
        else:
            self.loop.call_soon_threadsafe(_set_result, self.future, results)

    def fail(self, error: Exception) -> None:
        if self.share is not None:
            self.share.set_exception(error)
        else:
            self.loop.call_soon_threadsafe(_set_exception, self.future, error)


@dataclass
class BatcherStats:
    calls: int = 0  # model calls
    requests: int = 0
    lines: int = 0
    busy_seconds: float = 0.0
    largest_call_lines: int = 0


class Batcher:
    def __init__(self, translator, wait_ms: float = 5.0, max_lines: int = 64, workers: int = 1,
                 processes: list | None = None, max_queued_lines: int = 0):
        """`processes`: one nmt.serve.worker_process.WorkerProcess per worker, which runs its calls;
        None: the workers translate with `translator` themselves. `max_queued_lines`: a request
        that would make more lines wait for a worker is refused (503) while others wait (0: no
        limit), so that what is accepted waits a bounded time."""
        self.translator = translator
        self.processes = processes
        self.wait = wait_ms / 1000
        self.max_lines = max_lines
        self.max_queued_lines = max_queued_lines
        self.queued_lines = 0  # lines queued, not yet taken by a worker
        self.in_flight = 0  # requests queued or in a model call, not yet answered
        self.crowded_at = -QUIET_SECONDS  # when two requests were last in flight together (time.monotonic)
        self.stats = BatcherStats()
        self._lock = threading.Lock()
        self._queue: queue.Queue[_Request | None] = queue.Queue()
        self._workers = [threading.Thread(target=self._run, args=(self._translate_with(i),), name=f"nmt-batcher-{i}",
                                          daemon=True) for i in range(max(workers, 1))]
        for worker in self._workers:
            worker.start()

    async def translate(self, lines: list[Line], cfg: DecodeConfig, extras: tuple[str, ...] = ()) -> list[list[Hypothesis]]:
        """The lines translated together with those of other requests of the same settings."""
        with self._lock:
            queued, limit = self.queued_lines, self.max_queued_lines
            if limit and queued and queued + len(lines) > limit:
                raise RequestRefused(f"the server is busy: {queued} lines wait for a model call, and at most {limit} "
                                     "may (max_queued_lines); retry later", 503, "max_queued_lines", limit)
            self.queued_lines += len(lines)
            self.in_flight += 1
            if self.in_flight > 1:
                self.crowded_at = time.monotonic()
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._queue.put(_Request(lines, cfg, extras, future, loop))
        return await future

    def _take(self, item: _Request) -> bool:
        """A worker takes `item` from the queue: a request's lines no longer wait; a share is the
        taker's unless the worker that split its request took it back first (False)."""
        with self._lock:
            if item.share is None:
                self.queued_lines -= len(item.lines)
                return True
            taken, item.claimed = item.claimed, True
            return not taken

    def close(self) -> None:
        """Finish what was queued, then stop the workers (one stop sign each)."""
        for _ in self._workers:
            self._queue.put(None)
        for worker in self._workers:
            worker.join()
        for process in self.processes or []:
            process.close()

    def _translate_with(self, worker: int):
        """What worker `worker` translates a call with: its process, or the translator in this one."""
        if self.processes:
            return self.processes[worker].translate
        return lambda lines, cfg, extras: translate(self.translator, lines, cfg, extras=extras)

    def _gather(self, first: _Request) -> tuple[list[_Request], bool, bool]:
        """The first request and those arriving within the wait; whether it is alone in flight;
        True when told to stop. No wait for a request alone in flight: nothing it could share a
        call with has arrived."""
        batch, lines = [first], len(first.lines)
        with self._lock:
            if self.in_flight == 1:
                return batch, True, False
        deadline = time.monotonic() + self.wait
        while lines < self.max_lines:
            try:
                item = self._queue.get(timeout=max(deadline - time.monotonic(), 0))
            except queue.Empty:
                break
            if item is None:
                return batch, False, True
            if self._take(item):
                batch.append(item)
                lines += len(item.lines)
        return batch, False, False

    def _run(self, translate_call) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is None:
                break
            if not self._take(first):
                continue  # a share its splitter took back
            batch, alone, stopping = self._gather(first)
            if alone and self._splits(first):
                self._split(first, translate_call)
                continue
            groups: dict[str, list[_Request]] = {}
            for request in batch:
                groups.setdefault(request.cfg.model_dump_json() + repr(request.extras), []).append(request)
            for requests in groups.values():
                self._call(requests, translate_call)

    def _splits(self, request: _Request) -> bool:
        """Whether a request alone in flight is split: several lines, several workers, one client."""
        return (request.share is None and len(request.lines) > 1 and len(self._workers) > 1
                and time.monotonic() - self.crowded_at > QUIET_SECONDS)

    def _split(self, request: _Request, translate_call) -> None:
        """A request alone in flight, split between the workers: this one translates the first
        share, and the other shares are queued for the other workers, which are idle; a share none
        of them has taken once this one's is done is taken back and translated here, so that the
        request never waits for a busy worker. The same results as one call: a line's translation
        does not depend on the lines beside it."""
        size = -(-len(request.lines) // len(self._workers))
        parts = [request.lines[i:i + size] for i in range(0, len(request.lines), size)]
        shares = [_Request(part, request.cfg, request.extras, share=Future()) for part in parts]
        for share in shares[1:]:
            self._queue.put(share)
        self._call([shares[0]], translate_call)
        for share in shares[1:]:
            if self._take(share):  # no other worker has: translated here
                self._call([share], translate_call)
        try:
            results = [result for share in shares for result in share.share.result()]
        except Exception as e:  # a share's failed call fails the request
            self._answered([request])
            request.fail(e)
            return
        with self._lock:
            self.stats.requests += 1
        self._answered([request])
        request.deliver(results)

    def _call(self, requests: list[_Request], translate_call) -> None:
        lines = [line for r in requests for line in r.lines]
        start = time.perf_counter()
        try:
            results = translate_call(lines, requests[0].cfg, requests[0].extras)
        except Exception as e:  # a failed call fails its requests, never the worker
            self._answered(requests)
            for r in requests:
                r.fail(e)
            return
        counted = [r for r in requests if r.share is None]
        with self._lock:
            s = self.stats
            s.calls, s.requests, s.lines = s.calls + 1, s.requests + len(counted), s.lines + len(lines)
            s.busy_seconds += time.perf_counter() - start
            s.largest_call_lines = max(s.largest_call_lines, len(lines))
        self._answered(requests)
        offset = 0
        for r in requests:
            r.deliver(results[offset:offset + len(r.lines)])
            offset += len(r.lines)

    def _answered(self, requests: list[_Request]) -> None:
        """Requests answered, no longer in flight (shares are not counted): before their answers
        go out, so that a client's next request, sent the moment it has the answer, finds its
        previous one gone, and is not taken for a second client's (which would make it wait for
        company, and stop requests being split for QUIET_SECONDS)."""
        with self._lock:
            self.in_flight -= sum(r.share is None for r in requests)


def _set_result(future: asyncio.Future, value) -> None:
    if not future.done():  # the client may have gone away
        future.set_result(value)


def _set_exception(future: asyncio.Future, error: Exception) -> None:
    if not future.done():
        future.set_exception(error)
