import os
import platform
import subprocess
import sys

import pytest

ALLOCATE_FREE_ALLOCATE = """
import resource, sys, torch
from nmt.host_memory import keep_freed_memory
if sys.argv[1] == "keep":
    assert keep_freed_memory()
elif sys.argv[1] == "environment":  # glibc's own setting in the environment wins
    assert not keep_freed_memory()
def resident_mb(): return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
def faults(): return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
block = torch.ones(20 * 2**18)  # 20 MB
before_free = resident_mb()
del block
print(before_free - resident_mb())  # MB given back to the kernel by the free
before = faults()
block = torch.ones(18 * 2**18)  # a little smaller: fits the freed block whatever its neighbours
print(faults() - before)  # pages faulted in by the new block
"""


def run(mode: str, env: dict | None = None) -> tuple[float, int]:
    out = subprocess.run([sys.executable, "-c", ALLOCATE_FREE_ALLOCATE, mode],
                         capture_output=True, text=True, check=True, env=os.environ | (env or {}))
    returned_mb, faults = out.stdout.split()
    return float(returned_mb), int(faults)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
def test_freed_memory_stays_in_the_process_and_is_reused():
    pages = 18 * 2**20 // 4096
    returned, faults = run("default")
    assert returned > 15 and faults > pages // 2  # glibc unmapped the block; the next one faults in
    returned, faults = run("keep")
    assert returned < 5 and faults < pages // 10
    # a run short of memory sets glibc's threshold itself: blocks of 1 MB or more go back on free
    returned, faults = run("environment", {"MALLOC_MMAP_THRESHOLD_": str(2**20)})
    assert returned > 15 and faults > pages // 2
