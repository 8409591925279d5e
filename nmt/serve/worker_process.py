"""A server worker's model calls in a process of its own (`nmt serve --worker-mode processes`).

Worker threads of one process share Python's interpreter lock, and much of a torch decode step
at a server's batch sizes is Python (the search's choices, module calls): two worker threads
on 2 cores translate about 1.65x what one does, two processes 1.9x. A worker process loads its
own copy of the model, takes calls (lines, decode settings, extras) from its batcher thread
over a pipe and sends the hypotheses back; the server keeps its own copy for reading requests
and writing replies. The pipe carries only objects the server built itself.

`auto` picks processes for the torch engine on a CPU with two or more workers, where the
processes (of every model served) fit in half the memory available: each takes a copy of the model (the checkpoint's
size stands for it) and torch's own ~0.3 GB (PROCESS_OVERHEAD_BYTES keeps a margin). Threads
elsewhere: CTranslate2 leaves the lock while it translates, and a GPU's calls queue on the one
device anyway.
"""

from __future__ import annotations

import pickle
import signal
from dataclasses import dataclass
from pathlib import Path

from nmt.decode.worker_processes import start_fork_server, worker_processes
from nmt.errors import NmtError

WORKER_MODES = ("auto", "processes", "threads")
PROCESS_OVERHEAD_BYTES = 512 * 2**20  # a worker process's memory besides the model (torch 2.13, CPU: ~0.3 GB)


@dataclass(frozen=True)
class LoadSpec:
    """How a served model was loaded, so that a worker process loads the same."""

    path: str
    device: str
    engine: str
    compute_type: str
    threads: int


def available_memory_bytes() -> int | None:
    """Memory the kernel says is available now (Linux), else None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def resolve_worker_modes(mode: str, workers: int, models: list[tuple[LoadSpec, str]]) -> list[str]:
    """"processes" or "threads" for each served model (its LoadSpec and engine name) under `mode`
    (auto, processes, threads); see the module's docstring. auto weighs the processes of every
    model served together: either all that may run in processes do, or none."""
    if mode != "auto":
        return [mode] * len(models)
    eligible = [workers >= 2 and engine == "torch" and spec.device.startswith("cpu") for spec, engine in models]
    # an eligible model is a checkpoint file (an export directory runs on CTranslate2)
    needed = sum(workers * (Path(spec.path).stat().st_size + PROCESS_OVERHEAD_BYTES)
                 for (spec, _), ok in zip(models, eligible) if ok)
    available = available_memory_bytes()
    fits = available is not None and needed <= available // 2
    return ["processes" if ok and fits else "threads" for ok in eligible]


def workers_and_threads(workers: int, threads: int, device: str) -> tuple[int, int]:
    """(model workers, torch threads) for `nmt serve`: where not given, two workers on a CPU of two
    or more cores, each on its share of the cores (small models decode faster on one thread each
    than on two threads for one: bench/results/serve_load_torch.json), and one on a GPU."""
    import os

    cores = os.cpu_count() or 1
    if workers <= 0:
        workers = 1 if device.startswith("cuda") or cores < 2 else 2
    if threads <= 0 and not device.startswith("cuda"):
        threads = max(1, cores // workers)
    return workers, threads


def start_fork_server_where_forking(paths: list[Path], device: str, engine: str, workers: int, threads: int,
                                    mode: str) -> None:
    """Where `nmt serve` will run a model's workers in processes (by `workers_and_threads` and
    `resolve_worker_modes`, a checkpoint file running on its `engine`, an export directory on its
    own), start their fork server before the models load (nmt.decode.worker_processes)."""
    if mode not in WORKER_MODES or workers < 0:
        return  # refused once the models are read
    workers, _ = workers_and_threads(workers, threads, device)
    models = [(LoadSpec(str(path), device, engine, "default", 0), engine if Path(path).is_file() else "export")
              for path in paths]
    if "processes" in resolve_worker_modes(mode, workers, models):
        start_fork_server()


class WorkerProcess:
    """One model in a process of its own; `translate` runs a call there and waits for its result.
    Used by one batcher thread at a time. A process that died is started again for the next call."""

    def __init__(self, spec: LoadSpec, recipe, controls, name: str = "nmt-worker"):
        self._args = (spec, recipe, controls)
        self._name = name
        self._process = None
        self._connection = None
        self._spawn()

    def _spawn(self) -> None:
        context = worker_processes()
        ours, theirs = context.Pipe()
        self._process = context.Process(target=_serve_calls, args=(theirs, *self._args), name=self._name, daemon=True)
        self._process.start()
        theirs.close()
        self._connection = ours

    def wait_ready(self) -> None:
        """Wait for the process to have loaded its model; NmtError where it could not."""
        try:
            status, payload = self._receive()
        except RuntimeError as e:  # it ended before saying why
            status, payload = "error", str(e)
        if status != "ready":
            self.close()
            raise NmtError(f"{self._args[0].path}: the model worker process could not load it: {payload}")

    def translate(self, lines, cfg, extras=()) -> list:
        if not self._process.is_alive():
            self._connection.close()
            self._spawn()
            self.wait_ready()
        self._connection.send((lines, cfg, tuple(extras)))
        status, payload = self._receive()
        if status == "error":
            raise payload
        return payload

    def _receive(self) -> tuple[str, object]:
        try:
            return self._connection.recv()
        except (EOFError, OSError):
            self._process.join(timeout=5)
            raise RuntimeError(f"the model worker process {self._name} ended (exit code {self._process.exitcode}); "
                               "it starts again with the next call") from None

    def close(self) -> None:
        """Stop the process once it has finished its call, if any (after 30 s, stop it anyway)."""
        try:
            self._connection.send(None)
        except OSError:
            pass
        self._process.join(timeout=30)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join()
        self._connection.close()

    @property
    def pid(self) -> int | None:
        return self._process.pid


def start_workers(spec: LoadSpec, recipe, controls, workers: int) -> list[WorkerProcess]:
    """`workers` processes, each with the model loaded (they load side by side)."""
    processes = [WorkerProcess(spec, recipe, controls, name=f"nmt-worker-{i}") for i in range(workers)]
    try:
        for process in processes:
            process.wait_ready()
    except BaseException:
        for process in processes:
            process.close()
        raise
    return processes


def _serve_calls(connection, spec: LoadSpec, recipe, controls) -> None:
    """The worker process: load the model, then answer calls until told to stop or the server is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the server stops its workers
    try:
        from nmt.decode.engines.engine import load_engine
        from nmt.decode.translate import translate
        from nmt.decode.warm_up import warm_up

        translator = load_engine([Path(spec.path)], spec.device, spec.engine, spec.compute_type, spec.threads)
        translator.recipe, translator.controls = recipe, controls  # the server's defaults and direction
        warm_up(translator, recipe.decode)  # with decode.compile: compiled before the first request
    except Exception as e:
        connection.send(("error", f"{type(e).__name__}: {e}"))
        return
    connection.send(("ready", None))
    while True:
        try:
            call = connection.recv()
        except (EOFError, OSError):
            return  # the server is gone
        if call is None:
            return
        lines, cfg, extras = call
        try:
            result = ("ok", translate(translator, lines, cfg, extras=extras))
        except Exception as e:  # the call fails, the worker goes on
            result = ("error", _sendable(e))
        connection.send(result)


def _sendable(error: Exception) -> Exception:
    """The exception itself where it survives a trip through pickle, else a RuntimeError with its message."""
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")
