"""Work spread over processes (`nmt translate --nproc K`, and the scoring of `nmt likelihood` and
`nmt filter`): K worker processes each load the engine once, on their share of the threads (or,
on GPUs, each on its own device), and translate (or score) consecutive shares of every chunk of
input lines; the main process writes their outputs in input order, so the output is what one
process writes. Warnings keep their input line numbers; each worker's count of lines done comes
to the main process as it goes (for the counter).

Workers are forked from a server that imported this module once (nmt.decode.worker_processes).
Each chunk is split into K equal consecutive shares, so the K processes finish a chunk at about
the same time; the next chunk starts when all are done.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from itertools import islice
from pathlib import Path

import torch

from nmt.config import DecodeConfig
from nmt.decode.engines.engine import load_engine
from nmt.decode.stream import CHUNK_LINES, StreamReport, translate_stream
from nmt.decode.worker_processes import worker_processes
from nmt.errors import NmtError


@dataclass(frozen=True)
class EngineSpec:
    """What `load_engine` needs, so that each worker loads the same engine."""
    checkpoints: tuple[Path, ...]
    device: str = "cpu"
    engine: str = "torch"
    compute_type: str = "default"
    threads: int = 0
    ensemble: bool = False
    src_lang: str | None = None
    tgt_lang: str | None = None
    zero_shot: bool = False

    def for_worker(self, rank: int, nproc: int, threads: int) -> "EngineSpec":
        """Worker `rank`'s engine: `threads` // nproc threads (at least 1); on CUDA, the rank's device."""
        return replace(self, device=worker_device(self.device, rank), threads=max(1, threads // nproc))

    def load(self, note: Callable[[str], None] = lambda _: None):
        """The engine; `note` hears what choosing its direction found worth saying (--src-lang
        auto: languages the identifier cannot tell)."""
        engine = load_engine(list(self.checkpoints), self.device, self.engine, self.compute_type, self.threads,
                             self.ensemble, self.src_lang, self.tgt_lang, self.zero_shot)
        for text in engine.source_guess.notes if engine.source_guess else ():
            note(text)
        return engine


def worker_device(device: str, rank: int) -> str:
    """Worker `rank`'s device: on CUDA (`cuda` unnumbered), the GPUs round robin; else `device`."""
    if device == "cuda":
        return f"cuda:{rank % max(torch.cuda.device_count(), 1)}"
    return device


_loaded = None  # each worker's engine (or engines: a spec's load()), loaded once by _start
_progress = None  # each worker's queue to the main process: (chunk, lines done) as its task reports them


def _start(spec, nproc: int, threads: int, ranks, progress) -> None:
    global _loaded, _progress
    _loaded = spec.for_worker(ranks.get(), nproc, threads).load()
    _progress = progress


@dataclass(frozen=True)
class _Share:
    chunk: int  # which chunk of the input it belongs to, for its counts of progress
    lines: list
    first_line: int
    task: Callable  # what the worker does with it: task(loaded, lines, first_line, finished) -> its result


def _run_share(share: _Share):
    return share.task(_loaded, share.lines, share.first_line, lambda n: _progress.put((share.chunk, n)))


def sharded_chunks(spec, nproc: int, threads: int, lines: Iterable, task: Callable, chunk_lines: int = CHUNK_LINES,
                   done: Callable[[int], None] = lambda _: None, first_line: int = 1) -> Iterator[list]:
    """`lines` a chunk at a time over `nproc` worker processes sharing `threads` CPU threads, each
    of which loads `spec` once (`spec.for_worker(rank, nproc, threads).load()`): for each chunk,
    the results of `task` on its K consecutive shares, in input order. `task` is a module-level
    function (or a partial of one), called in a worker as task(loaded, lines, first_line,
    finished), where `finished(n)` reports n more of the share's lines done; `done(n)` hears of
    the lines done so far, after each report of any process, and of each chunk whole."""
    context = worker_processes()
    ranks, progress = context.Queue(), context.Queue()
    for rank in range(nproc):
        ranks.put(rank)
    with context.Pool(nproc, initializer=_start, initargs=(spec, nproc, threads, ranks, progress)) as pool:
        iterator, start = iter(lines), first_line
        chunks = iter(lambda: list(islice(iterator, chunk_lines)), [])  # until no line is left
        for number, chunk in enumerate(chunks):
            size = -(-len(chunk) // nproc)
            shares = [_Share(number, chunk[i:i + size], first_line + i, task) for i in range(0, len(chunk), size)]
            results = pool.map_async(_run_share, shares)
            heard = _follow(progress, results, number, len(chunk), lambda n: done(first_line - start + n))
            yield results.get()
            if heard < len(chunk):  # a count still on its way (a loaded host): the chunk is done all the same
                done(first_line - start + len(chunk))
            first_line += len(chunk)


def _translate_share(cfg: DecodeConfig, output_format: str, input_format: str, extras: tuple[str, ...], engine,
                     lines: list[str], first_line: int, finished: Callable[[int], None]):
    """A worker's translation of one share: its output lines, its warnings and its report (the
    lines read and those that failed, the source languages identified)."""
    warnings: list[str] = []
    report = StreamReport()
    out = list(translate_stream(engine, lines, cfg, output_format, warnings.append, max(len(lines), 1), input_format,
                                report, extras, first_line=first_line, finished=finished))
    return out, warnings, report


def translate_sharded(spec: EngineSpec, nproc: int, threads: int, lines: Iterable[str], cfg: DecodeConfig,
                      output_format: str = "plain", warn: Callable[[str], None] = lambda _: None,
                      input_format: str = "plain", report: StreamReport | None = None,
                      extras: Iterable[str] = (), chunk_lines: int = CHUNK_LINES,
                      done: Callable[[int], None] = lambda _: None, first_line: int = 1) -> Iterator[str]:
    """`translate_stream` over `nproc` processes sharing `threads` CPU threads; the same lines out.
    `done(n)` hears of the lines translated so far, after each batch of any process; warnings
    number the lines from `first_line`."""
    report = report if report is not None else StreamReport()
    task = partial(_translate_share, cfg, output_format, input_format, tuple(extras))
    for shares in sharded_chunks(spec, nproc, threads, lines, task, chunk_lines, done, first_line):
        for out, warnings, share_report in shares:
            for warning in warnings:
                warn(warning)
            report.sources.update(share_report.sources)
            yield from out
            report.failed += share_report.failed  # counted once their lines are out, as translate_stream does
            report.lines += share_report.lines


def _follow(progress, results, chunk: int, lines: int, done: Callable[[int], None]) -> int:
    """Pass on the workers' counts for `chunk` (of `lines` lines) as they come, until its `results`
    are in and every line is counted (a count still on its way when they are in is waited for,
    5 s at most); at once where a worker failed. Returns the lines counted."""
    heard = 0
    while heard < lines:
        if results.ready() and not results.successful():
            return heard  # the failure is raised by results.get()
        try:
            number, n = progress.get(timeout=0.1 if not results.ready() else 5)
        except queue.Empty:
            if results.ready():
                return heard
            continue
        if number == chunk:  # a count left over from an earlier chunk is not this one's
            heard += n
            done(min(heard, lines))
    return heard


def sharding(nproc: int, spec: EngineSpec) -> Callable[..., Iterator[str]] | None:
    """`translate_file`'s `shards` for `nproc` processes sharing this process's threads (None: one
    process, translate_stream itself)."""
    if worker_count(nproc) == 1:
        return None
    return partial(translate_sharded, spec, nproc, spec.threads or torch.get_num_threads())


def processes(nproc: int, spec, threads: int) -> Callable[..., Iterator[list]] | None:
    """`sharded_chunks` of `spec` over `nproc` processes sharing `threads` CPU threads (0: this
    process's), to call as f(lines, task, chunk_lines, done, first_line); None: one process."""
    if worker_count(nproc) == 1:
        return None
    return partial(sharded_chunks, spec, nproc, threads or torch.get_num_threads())


def worker_count(nproc: int) -> int:
    """`--nproc`, checked: at least 1."""
    if nproc < 1:
        raise NmtError(f"--nproc {nproc}: at least 1 process")
    return nproc
