"""Translation spread over processes (`nmt translate --nproc K`): K worker processes each load the
engine once, on their share of the threads (or, on GPUs, each on its own device), and translate
consecutive shares of every chunk of input lines; the main process writes their outputs in input
order, so the output is what one process writes. Warnings keep their input line numbers.

Processes are started with "spawn" (a fork would copy the parent's torch threads and locks).
Each chunk is split into K equal consecutive shares, so the K processes finish a chunk at about
the same time; the next chunk starts when all are done.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from itertools import islice
from pathlib import Path

import torch

from nmt.config import DecodeConfig
from nmt.decode.engines.engine import load_engine
from nmt.decode.stream import CHUNK_LINES, StreamReport, translate_stream
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
        device = self.device
        if device == "cuda":
            device = f"cuda:{rank % max(torch.cuda.device_count(), 1)}"
        return replace(self, device=device, threads=max(1, threads // nproc))

    def load(self):
        return load_engine(list(self.checkpoints), self.device, self.engine, self.compute_type, self.threads,
                           self.ensemble, self.src_lang, self.tgt_lang, self.zero_shot)


_engine = None  # each worker's engine, loaded once by _start


def _start(spec: EngineSpec, nproc: int, threads: int, ranks) -> None:
    global _engine
    _engine = spec.for_worker(ranks.get(), nproc, threads).load()


@dataclass(frozen=True)
class _Share:
    lines: list[str]
    first_line: int
    cfg: DecodeConfig
    output_format: str
    input_format: str
    extras: tuple[str, ...]


def _translate_share(share: _Share) -> tuple[list[str], list[str], int]:
    """A worker's translation of one share: its output lines, its warnings and its failed lines."""
    warnings: list[str] = []
    report = StreamReport()
    out = list(translate_stream(_engine, share.lines, share.cfg, share.output_format, warnings.append,
                                max(len(share.lines), 1), share.input_format, report, share.extras,
                                first_line=share.first_line))
    return out, warnings, report.failed


def translate_sharded(spec: EngineSpec, nproc: int, threads: int, lines: Iterable[str], cfg: DecodeConfig,
                      output_format: str = "plain", warn: Callable[[str], None] = lambda _: None,
                      input_format: str = "plain", report: StreamReport | None = None,
                      extras: Iterable[str] = (), chunk_lines: int = CHUNK_LINES) -> Iterator[str]:
    """`translate_stream` over `nproc` processes sharing `threads` CPU threads; the same lines out."""
    report = report if report is not None else StreamReport()
    context = multiprocessing.get_context("spawn")
    ranks = context.Queue()
    for rank in range(nproc):
        ranks.put(rank)
    with context.Pool(nproc, initializer=_start, initargs=(spec, nproc, threads, ranks)) as pool:
        iterator, first_line = iter(lines), 1
        while chunk := list(islice(iterator, chunk_lines)):
            size = -(-len(chunk) // nproc)
            shares = [_Share(chunk[i:i + size], first_line + i, cfg, output_format, input_format, tuple(extras))
                      for i in range(0, len(chunk), size)]
            for out, warnings, failed in pool.map(_translate_share, shares):
                for warning in warnings:
                    warn(warning)
                report.failed += failed
                yield from out
            report.lines += len(chunk)
            first_line += len(chunk)


def sharding(nproc: int, spec: EngineSpec) -> Callable[..., Iterator[str]] | None:
    """`translate_file`'s `shards` for `nproc` processes sharing this process's threads (None: one
    process, translate_stream itself)."""
    if nproc < 1:
        raise NmtError(f"--nproc {nproc}: at least 1 process")
    if nproc == 1:
        return None
    return partial(translate_sharded, spec, nproc, spec.threads or torch.get_num_threads())
