"""What the host does beside a timed window: how many of the machine's CPUs were busy, how many
of them this process used, and the processes it had started.

Why the speed part records it: on the fifth GPU day the base recipe's compiled update took
0.047 s in the process that compiled it cold and 0.071 and 0.063 s in the two that loaded the
compile from inductor's on-disk cache, with the same kernels and the host's issue time the part
that moved (bench/gpu_day/README.md). Any process that calls inductor starts its compile-worker
pool (torch._inductor.async_compile.maybe_warm_pool: a sidecar process that imports torch, then
one worker per compile thread, 16 on that machine), cache or no cache. After a cold compile of a
minute the pool is long idle when the timing starts; after a cached one of a few seconds it may
still be starting, beside a host-bound update. `HostActivity` records what the timing shared
the machine with, and `settle` waits for the rest of the machine to go quiet before a timing,
for a figure of the steady state a long run reaches.

Linux only (/proc); elsewhere the readings are None and `settle` does not wait.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

_STAT = Path("/proc/stat")


def machine_busy_seconds() -> float | None:
    """The whole machine's busy CPU seconds since boot, summed over its CPUs: from the first line
    of /proc/stat (user nice system idle iowait irq softirq steal ...), idle and iowait left out;
    None where there is no such file."""
    try:
        fields = [int(x) for x in _STAT.read_text().splitlines()[0].split()[1:9]]
    except (OSError, ValueError, IndexError):
        return None
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    """This process's CPU seconds (user and system, every thread; to the nanosecond, where
    /proc/stat counts in ticks of 10 ms)."""
    return time.process_time()


def descendants() -> list[int]:
    """The process ids this process started, and theirs, still running (Linux); [] elsewhere."""
    found, waiting = [], [os.getpid()]
    while waiting:
        parent = waiting.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
            found += children
            waiting += children
    return found


def compile_pool_started() -> bool:
    """Whether this process has started inductor's compile-worker pool (never imports inductor)."""
    module = sys.modules.get("torch._inductor.async_compile")
    if module is None:
        return False
    pool = getattr(getattr(module, "AsyncCompile", None), "process_pool", None)
    return bool(pool is not None and hasattr(pool, "cache_info") and pool.cache_info().currsize)


class HostActivity:
    """Around a timed window (`with HostActivity() as activity: ...`), then `activity.result()`:
    the CPUs busy on average over the window, machine-wide and by this process (its other
    threads included), the difference (`other_busy_cpus`: what everything else ran), and this
    process's descendant processes at the start and at the end. The machine's figure counts in
    ticks of 10 ms per CPU: it means something over a window of a second or more."""

    def __enter__(self) -> HostActivity:
        self.descendants_at_start = len(descendants())
        self._machine, self._own, self._start = machine_busy_seconds(), own_cpu_seconds(), time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self._start
        machine, own = machine_busy_seconds(), own_cpu_seconds()
        self.own_busy = (own - self._own) / self.seconds if self.seconds > 0 else None
        self.machine_busy = None
        if machine is not None and self._machine is not None and self.seconds > 0:
            self.machine_busy = (machine - self._machine) / self.seconds
        self.descendants_at_end = len(descendants())

    def result(self) -> dict:
        def rounded(x: float | None) -> float | None:
            return None if x is None else round(x, 2)

        others = None if self.machine_busy is None else max(0.0, self.machine_busy - self.own_busy)
        return {"seconds": round(self.seconds, 3), "machine_cpus": os.cpu_count(),
                "machine_busy_cpus": rounded(self.machine_busy), "own_busy_cpus": rounded(self.own_busy),
                "other_busy_cpus": rounded(others), "descendant_processes": [self.descendants_at_start,
                                                                          self.descendants_at_end],
                "compile_pool_started": compile_pool_started()}


def others_busy_over(seconds: float) -> float | None:
    """The CPUs that processes other than this one kept busy, on average over the next `seconds`."""
    with HostActivity() as activity:
        time.sleep(seconds)
    return activity.result()["other_busy_cpus"]


def settle(max_seconds: float, quiet_below: float = 1.0, interval: float = 0.5,
           others_busy: Callable[[float], float | None] = others_busy_over) -> dict:
    """Wait until the rest of the machine keeps fewer than `quiet_below` CPUs busy over an
    `interval`, or `max_seconds` have passed: {"waited_seconds", "other_busy_cpus" (the last
    reading), "quiet" (whether it went quiet)}. Returns at once where the machine cannot be read."""
    start, reading = time.perf_counter(), None
    while time.perf_counter() - start < max_seconds:
        reading = others_busy(interval)
        if reading is None or reading < quiet_below:
            break
    return {"waited_seconds": round(time.perf_counter() - start, 1), "other_busy_cpus": reading,
            "quiet": reading is not None and reading < quiet_below}
