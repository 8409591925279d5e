"""tools/test_cost.py: each test's CPU time, a command's it waited for included."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT
from tools.test_cost import read_costs, report

BUSY = """
import subprocess, sys, time

def spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass

def test_spins_here():
    spin(0.25)

def test_waits_on_a_command_that_spins():
    subprocess.run([sys.executable, "-c", "import time\\nend = time.process_time() + 0.25\\nwhile time.process_time() < end: pass"], check=True)

def test_sleeps():
    time.sleep(0.2)
"""


def test_each_test_costs_its_own_cpu_and_that_of_the_commands_it_waited_for(tmp_path):
    (tmp_path / "test_busy.py").write_text(BUSY)
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "tools.test_cost", "-p", "no:cacheprovider", "-q",
                          "test_busy.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {test.split("::")[1]: (wall, cpu) for wall, cpu, _, test in read_costs(tmp_path / "runs" / "test_cost.tsv")}
    assert set(rows) == {"test_spins_here", "test_waits_on_a_command_that_spins", "test_sleeps"}
    assert rows["test_spins_here"][1] >= 0.2 and rows["test_waits_on_a_command_that_spins"][1] >= 0.2
    assert rows["test_sleeps"][0] >= 0.2 and rows["test_sleeps"][1] < 0.1  # waiting is wall time, not CPU
    lines = report(read_costs(tmp_path / "runs" / "test_cost.tsv"), top=2)
    assert lines[0].startswith("3 tests on 1 worker(s):")
    assert "test_sleeps" not in "\n".join(lines[3:5])  # the two that cost the most CPU are the spinning ones
