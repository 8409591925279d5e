"""The GPU day's attention probe (bench/gpu_day/attention_probe.py), run on the CPU as a smoke run:
it times every variant at every length, says which was fastest, finds each variant's output and
gradients equal to the fused kernels', and needs nothing of nmt's dependencies but torch (the
GPU machine's python3 has no pydantic)."""

import json
import subprocess
import sys

from tests.conftest import ROOT

RUN_AND_LIST_MODULES = """
import runpy, sys
sys.argv = ["attention_probe", "--out", sys.argv[1], "--lengths", "8,12", "--calls", "1", "--timings", "2"]
runpy.run_module("bench.gpu_day.attention_probe", run_name="__main__")
print(sorted({name.split(".")[0] for name in sys.modules}))
"""


def test_the_probe_times_each_variant_at_each_length_with_torch_alone(tmp_path):
    out = tmp_path / "attention_probe.json"
    run = subprocess.run([sys.executable, "-c", RUN_AND_LIST_MODULES, str(out)], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    modules = run.stdout.strip().splitlines()[-1]
    assert "'torch'" in modules and "pydantic" not in modules and "'nmt'" in modules
    result = json.loads(out.read_text())
    assert result["provenance"]["commit"] and result["device"] == "cpu"
    runs = result["runs"]
    assert [(r["attention"], r["length"]) for r in runs] == [("padded_keys", 8), ("padded_keys", 12),
                                                              ("causal", 8), ("causal", 12)]
    for r in runs:
        assert set(r["milliseconds"]) == {"fused", "matmul", "matmul_compiled"}
        assert all(len(m["timings"]) == 2 and m["median"] > 0 for m in r["milliseconds"].values())
        assert r["fastest"] == min(r["milliseconds"], key=lambda name: r["milliseconds"][name]["median"])
        assert max(r["largest_difference"].values()) < 1e-5  # fp32 on the CPU
        assert r["rows"] == 256 // r["length"]
