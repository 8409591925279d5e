"""Requests that arrive together become one model call.

`workers` threads share the model (inference only reads its weights) and one queue. A free
worker takes the first waiting request, waits up to `wait_ms` for more (until `max_lines` lines
are gathered), groups what it has by decode settings, and translates each group in one call:
the length-sorted token batching inside then packs lines from several requests together. It
waits only while other requests are in flight (queued, or in another worker's call): a request
alone would gain no company by waiting, and one client's requests come one after another. With
two workers, one model call runs while the other gathers and starts the next, so a request
waits for at most about one call ahead of it; on a CPU each worker's torch operations run on its
own thread (nmt serve sets the threads per worker), or each worker's calls run in a process of
its own (nmt.serve.worker_process), the worker thread waiting for its answer. Callers await a
future; the event loop never blocks.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from dataclasses import dataclass

from nmt.config import DecodeConfig
from nmt.decode.search import Hypothesis
from nmt.decode.request import Line, RequestRefused
from nmt.decode.translate import translate


@dataclass
class _Request:
    lines: list[Line]
    cfg: DecodeConfig
    extras: tuple[str, ...]
    future: asyncio.Future
    loop: asyncio.AbstractEventLoop


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
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._queue.put(_Request(lines, cfg, extras, future, loop))
        return await future

    def _taken(self, request: _Request) -> _Request:
        """A request a worker took from the queue: its lines no longer wait."""
        with self._lock:
            self.queued_lines -= len(request.lines)
        return request

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

    def _gather(self, first: _Request) -> tuple[list[_Request], bool]:
        """The first request and those arriving within the wait; True when told to stop. No wait
        for a request alone in flight: nothing it could share a call with has arrived."""
        batch, lines = [first], len(first.lines)
        with self._lock:
            if self.in_flight == 1:
                return batch, False
        deadline = time.monotonic() + self.wait
        while lines < self.max_lines:
            try:
                item = self._queue.get(timeout=max(deadline - time.monotonic(), 0))
            except queue.Empty:
                break
            if item is None:
                return batch, True
            batch.append(self._taken(item))
            lines += len(item.lines)
        return batch, False

    def _run(self, translate_call) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is None:
                break
            batch, stopping = self._gather(self._taken(first))
            groups: dict[str, list[_Request]] = {}
            for request in batch:
                groups.setdefault(request.cfg.model_dump_json() + repr(request.extras), []).append(request)
            for requests in groups.values():
                self._call(requests, translate_call)

    def _call(self, requests: list[_Request], translate_call) -> None:
        lines = [line for r in requests for line in r.lines]
        start = time.perf_counter()
        try:
            results = translate_call(lines, requests[0].cfg, requests[0].extras)
        except Exception as e:  # a failed call fails its requests, never the worker
            for r in requests:
                r.loop.call_soon_threadsafe(_set_exception, r.future, e)
            self._answered(requests)
            return
        with self._lock:
            s = self.stats
            s.calls, s.requests, s.lines = s.calls + 1, s.requests + len(requests), s.lines + len(lines)
            s.busy_seconds += time.perf_counter() - start
            s.largest_call_lines = max(s.largest_call_lines, len(lines))
        offset = 0
        for r in requests:
            r.loop.call_soon_threadsafe(_set_result, r.future, results[offset:offset + len(r.lines)])
            offset += len(r.lines)
        self._answered(requests)

    def _answered(self, requests: list[_Request]) -> None:
        with self._lock:
            self.in_flight -= len(requests)


def _set_result(future: asyncio.Future, value) -> None:
    if not future.done():  # the client may have gone away
        future.set_result(value)


def _set_exception(future: asyncio.Future, error: Exception) -> None:
    if not future.done():
        future.set_exception(error)
