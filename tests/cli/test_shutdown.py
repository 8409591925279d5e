"""An nmt process ends quickly (nmt.shutdown): one collection at exit, the survivors frozen, and
every finalizer that ran before still run."""

import subprocess
import sys

PROGRAM = """
import atexit, gc, os
atexit.register(lambda: print("frozen", gc.get_freeze_count(), flush=True))  # registered first: runs last
from nmt.shutdown import end_quickly
end_quickly()

class Finalized:
    def __init__(self, name):
        self.name, self.me = name, self  # a reference cycle: only the collector frees it
    def __del__(self):
        os.write(1, f"finalized {self.name}\\n".encode())

Finalized("garbage")  # unreachable from the start
gc.disable()  # left to the collection at exit
kept = [object() for _ in range(5000)]  # alive at exit
"""


def test_objects_left_in_reference_cycles_are_finalized_and_the_survivors_frozen():
    run = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "finalized garbage"
    assert run.stdout.splitlines()[1].startswith("frozen") and int(run.stdout.split()[-1]) >= 5000


def test_a_second_call_registers_nothing_more():
    run = subprocess.run([sys.executable, "-c", "import atexit\nfrom nmt.shutdown import end_quickly\n"
                          "before = atexit._ncallbacks(); end_quickly(); end_quickly(); print(atexit._ncallbacks() - before)"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.split() == ["1"], run.stderr
