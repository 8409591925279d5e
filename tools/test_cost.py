"""What each test costs in CPU time, not only in wall time: the suite runs on 2 workers on 2 cores,
so its length is about the CPU it uses over two, and a test that waits on a command it started
costs that command's CPU, which `--durations` does not show.

    make test-cost   (python -m pytest -p tools.test_cost ... ; python -m tools.test_cost)

As a pytest plugin (`-p tools.test_cost`), each test process appends one line per test to
runs/test_cost.tsv: wall seconds, CPU seconds (the process's own and that of the commands it
started and waited for), the worker, and the test. Run as a module, it prints the totals and the
tests and files that cost the most CPU. A server a module's fixture starts is counted where it is
waited for, at the module's end."""

from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict
from pathlib import Path

import pytest

COSTS = Path("runs") / "test_cost.tsv"


def pytest_sessionstart(session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller (or a run without workers) starts afresh
        COSTS.parent.mkdir(parents=True, exist_ok=True)
        COSTS.write_text("")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    start, before = time.perf_counter(), os.times()
    yield
    after, wall = os.times(), time.perf_counter() - start
    cpu = sum(getattr(after, field) - getattr(before, field)
              for field in ("user", "system", "children_user", "children_system"))
    with COSTS.open("a", encoding="utf-8") as file:  # one short append per line: workers do not interleave
        worker = getattr(item.config, "workerinput", {}).get("workerid", "-")
        file.write(f"{wall:.3f}\t{cpu:.3f}\t{worker}\t{item.nodeid}\n")


def read_costs(path: Path) -> list[tuple[float, float, str, str]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        wall, cpu, worker, test = line.split("\t", 3)
        rows.append((float(wall), float(cpu), worker, test))
    return rows


def report(rows: list[tuple[float, float, str, str]], top: int = 15) -> list[str]:
    """The totals, then the `top` tests and test files by CPU seconds."""
    by_file: dict[str, float] = defaultdict(float)
    for _, cpu, _, test in rows:
        by_file[test.split("::")[0]] += cpu
    workers = {worker for _, _, worker, _ in rows}
    lines = [f"{len(rows)} tests on {len(workers)} worker(s): {sum(r[0] for r in rows):.1f} s of wall time, "
             f"{sum(r[1] for r in rows):.1f} s of CPU", "", f"the {top} tests that cost the most CPU (s, wall s):"]
    lines += [f"  {cpu:7.2f} {wall:7.2f}  {test}" for wall, cpu, _, test in sorted(rows, key=lambda r: -r[1])[:top]]
    lines += ["", f"the {top} test files that cost the most CPU (s):"]
    lines += [f"  {cpu:7.2f}  {name}" for name, cpu in sorted(by_file.items(), key=lambda item: -item[1])[:top]]
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("costs", nargs="?", type=Path, default=COSTS)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    print("\n".join(report(read_costs(args.costs), args.top)))


if __name__ == "__main__":
    main()
