"""Where translating worker processes come from (`nmt translate --nproc`, `nmt serve --worker-mode
processes`): a fork server that imported torch and nmt's decoding once.

A fork of the main process would copy its threads' state and locks (torch's thread pools, a
server's threads). A spawned worker is safe but a new interpreter: it imports torch and nmt again,
about 2.5 CPU-s each on a 2-core host. multiprocessing's "forkserver" starts one clean process per
main process, which imports `PRELOAD` and never runs a thread; each worker is a fork of it, up in
about 10 ms with everything imported, sharing the server's memory until it writes to it. Where the
system has no fork server (Windows), workers are spawned.

The commands that will fork workers start the fork server first thing (`start_fork_server`): its
imports then run on another core while the main process imports and loads the model, instead of
after: `nmt serve` of the demo's model answers in 1.8-2.1 s instead of 3.1-3.5 s on a 2-core host.
"""

from __future__ import annotations

import multiprocessing

# What the workers run: sharded translation's share of the lines, and a server worker's engine
# loading, translation and warm-up (nmt.serve.worker_process imports them when it starts).
PRELOAD = ["nmt.decode.sharded", "nmt.decode.engines.engine", "nmt.decode.translate", "nmt.decode.warm_up"]


def worker_processes():
    """The multiprocessing context to start translating workers in."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)  # read when the server starts: the first worker of this process
    return context


def start_fork_server() -> None:
    """Start the workers' fork server now rather than at the first worker, so that it imports torch
    and nmt's decoding (about 2 CPU-s) beside this process's own start-up. Nothing where the system
    has no fork server. A process that then stops with an error takes the fork server with it."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return
    from multiprocessing import forkserver

    worker_processes()  # sets what it preloads
    forkserver.ensure_running()
