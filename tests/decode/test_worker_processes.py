"""Translating workers (`nmt translate --nproc`, `nmt serve --worker-mode processes`) are forked from
one server per process that imported torch and nmt's decoding once (nmt.decode.worker_processes)."""

import multiprocessing
import os

import pytest

from nmt.decode.worker_processes import PRELOAD, worker_processes

# What a worker finds when it starts: its parent, and which of PRELOAD it already holds (eval of
# a constant expression: a builtin, so the worker imports nothing of this file to run it).
PROBE = f"(__import__('os').getppid(), sorted(m for m in {PRELOAD!r} if m in __import__('sys').modules))"


@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(), reason="no fork server here")
def test_workers_are_forked_from_one_server_that_imported_the_decoding_once():
    found = []
    for _ in range(2):  # two pools, as two `nmt serve` worker restarts or two sharded runs in one process
        context = worker_processes()
        assert context.get_start_method() == "forkserver"
        with context.Pool(2) as pool:
            found.append(pool.apply(eval, (PROBE,)))
    (server, held), (server_again, held_again) = found
    assert server == server_again != os.getpid()  # the same server, not this process
    assert held == held_again == sorted(PRELOAD)  # imported before the worker was forked
