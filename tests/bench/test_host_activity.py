"""bench.host_activity: what the machine ran beside a timed window, and the wait for it to go quiet;
bench.triton_launchers: how the compiled kernels are launched."""

from __future__ import annotations

import functools
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from bench.host_activity import HostActivity, compile_pool_started, descendants, settle
from bench.triton_launchers import launcher_census

linux = pytest.mark.skipif(not Path("/proc/stat").is_file(), reason="reads Linux's /proc")


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


@linux
def test_a_window_counts_this_processs_cpu_the_machines_and_the_processes_it_started():
    before = len(descendants())  # (another test's process may still be ending)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with HostActivity() as idle:
            time.sleep(0.3)
        with HostActivity() as busy:
            spin(0.3)
    finally:
        child.kill()
        child.wait()
    idle, busy = idle.result(), busy.result()
    # a sleep against a loop, which has at least half a CPU even on a host as busy as the suite's
    assert idle["own_busy_cpus"] < 0.5 and busy["own_busy_cpus"] > idle["own_busy_cpus"] + 0.3
    for window in (idle, busy):
        assert window["descendant_processes"][0] >= before + 1 and window["seconds"] >= 0.3
        # the machine's busy CPUs include this process's; the rest is everything else
        # (the machine's counts come in ticks of 10 ms per CPU: over 0.3 s, within 0.2 CPU)
        assert window["own_busy_cpus"] - 0.2 <= window["machine_busy_cpus"] <= window["machine_cpus"] + 0.2
        others = max(0.0, window["machine_busy_cpus"] - window["own_busy_cpus"])
        assert window["other_busy_cpus"] == pytest.approx(others, abs=0.011)
    assert child.pid not in descendants()


def test_the_compile_pool_counts_as_started_once_inductor_has_made_it(monkeypatch):
    """Read from inductor's cached pool constructor (AsyncCompile.process_pool), never by importing
    inductor: a stand-in module here."""
    monkeypatch.delitem(sys.modules, "torch._inductor.async_compile", raising=False)
    assert not compile_pool_started()  # inductor never imported

    class AsyncCompile:
        @staticmethod
        @functools.lru_cache(1)
        def process_pool():
            return object()

    monkeypatch.setitem(sys.modules, "torch._inductor.async_compile", types.SimpleNamespace(AsyncCompile=AsyncCompile))
    assert not compile_pool_started()
    AsyncCompile.process_pool()
    assert compile_pool_started()


def test_settle_waits_for_the_others_to_go_quiet_and_no_longer_than_asked():
    readings = iter([3.5, 2.0, 0.4, 5.0])
    asked: list[float] = []

    def others_busy(interval: float) -> float:
        asked.append(interval)
        return next(readings)

    quiet = settle(60, quiet_below=1.0, interval=0.25, others_busy=others_busy)
    assert quiet["quiet"] and quiet["other_busy_cpus"] == 0.4 and asked == [0.25] * 3
    assert quiet["waited_seconds"] < 1  # the injected readings take no time
    loud = settle(0.05, quiet_below=1.0, others_busy=lambda interval: 4.0)  # never quiet: the bound holds
    assert not loud["quiet"] and loud["other_busy_cpus"] == 4.0 and loud["waited_seconds"] <= 0.5
    blind = settle(60, others_busy=lambda interval: None)  # a machine that cannot be read: no wait
    assert blind == {"waited_seconds": 0.0, "other_busy_cpus": None, "quiet": False}


def test_the_launcher_census_counts_static_and_python_launchers_and_kernels_not_yet_tuned(monkeypatch):
    """Over inductor's kernel objects alive in the process (stand-ins here: a CPU has no Triton)."""
    monkeypatch.delitem(sys.modules, "torch._inductor.runtime.triton_heuristics", raising=False)
    assert launcher_census() is None  # inductor's Triton runtime never imported

    class CachingAutotuner:
        def __init__(self, *static: bool):
            self.launchers = [types.SimpleNamespace(_is_static=True) if s else (lambda *args: None) for s in static]

    monkeypatch.setitem(sys.modules, "torch._inductor.runtime.triton_heuristics",
                        types.SimpleNamespace(CachingAutotuner=CachingAutotuner))
    monkeypatch.delitem(sys.modules, "triton", raising=False)
    kernels = [CachingAutotuner(True)]
    assert launcher_census() is None  # Triton never imported: none of them launches anything
    monkeypatch.setitem(sys.modules, "triton", types.SimpleNamespace())
    del kernels
    assert launcher_census() is None  # no kernel made yet
    kernels = [CachingAutotuner(True), CachingAutotuner(False), CachingAutotuner(True, False), CachingAutotuner(True)]
    assert launcher_census() == {"kernels": 4, "static_launchers": 3, "python_launchers": 2, "kernels_still_tuning": 1}
    del kernels
