"""`make bench-large-models`'s instrument: the peak anonymous memory of a child process, sampled
from /proc, sees memory the child holds for a moment and then frees."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench.large_models import sampled_run


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs Linux's /proc")
def test_the_sampler_sees_a_passing_peak_of_anonymous_memory():
    holds = "import time; block = bytearray(300 * 2**20); time.sleep(0.3); del block; time.sleep(0.2)"
    run = sampled_run([sys.executable, "-c", holds])
    assert 300 <= run["peak_anonymous_mb"] < 400 and run["peak_resident_mb"] >= run["peak_anonymous_mb"]
    assert 0.5 <= run["seconds"] < 10
    with pytest.raises(SystemExit, match="failed: .*ZeroDivisionError"):
        sampled_run([sys.executable, "-c", "1 / 0"])
