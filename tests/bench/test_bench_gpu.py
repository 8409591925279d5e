"""`make bench-gpu` on the CPU with the tiny shape: every path runs, and its figures add up."""

import json

import numpy as np
import pytest

from bench.gpu import main, synthetic_shards
from nmt.data.batching import collate
from nmt.special_tokens import BOS, EOS, PAD


def test_synthetic_shards_collate_into_well_formed_batches(tmp_path):
    data = synthetic_shards(tmp_path, vocab=1000, pairs=300)
    assert len(data) == 300 and data.src.lengths.min() >= 1
    assert 15 < data.src.lengths.mean() < 45  # a news-like mix around 30 pieces
    batch = collate(data, np.arange(5))
    for row in range(5):
        n_src, n_tgt = int(data.src.lengths[row]) + 1, int(data.tgt.lengths[row]) + 1
        assert batch.src[row, n_src - 1] == EOS and (batch.src[row, n_src:] == PAD).all()
        assert batch.tgt_in[row, 0] == BOS and batch.tgt_out[row, n_tgt - 1] == EOS
        assert (batch.tgt_out[row, :n_tgt] >= 4).sum() == n_tgt - 1  # random ids, no special tokens


@pytest.mark.slow
def test_cpu_tiny_run_reports_speed_and_mfu(tmp_path, monkeypatch):
    import bench.run

    ceiling = bench.run.matmul_ceiling  # measured on a small matmul: the figures must add up, not be precise
    monkeypatch.setattr(bench.run, "matmul_ceiling", lambda: ceiling(size=512, repeats=1, trials=2))
    out = tmp_path / "cpu_tiny.json"
    report = main(["--device", "cpu", "--steps", "1", "--warmup", "1", "--windows", "1", "--processes", "0",
                   "--out", str(out)])
    assert json.loads(out.read_text()) == report
    runs = report["runs"]
    assert {(r["precision"], r["ddp"]) for r in runs} == {("fp32", False), ("fp32", True), ("bf16", False), ("bf16", True)}
    for run in runs:
        assert run["target_tokens_per_s"] > 0 and run["peak_memory_gb"] > 0 and not run["recipe_defaults"]
        assert run["host_issue_seconds"]["median"] <= run["host_issue_seconds"]["p90"]
        assert run["device_seconds"] is None  # no CUDA events on a CPU
        assert run["micro_batches"] == 2 and len(run["timings"]) == 1  # auto on a CPU: one pass per batch
        assert run["operators_per_update"] > 100 and run["profiled_updates"] == 1
        rate = run["model_gflop_per_update"] / run["seconds_per_update"] / 1000  # TFLOP/s
        assert abs(rate - run["model_tflop_per_s"]) <= 0.02 * rate
        mfu = run["model_tflop_per_s"] / report["measured_fp32_matmul_tflops"]
        assert abs(run["mfu_vs_measured_fp32_matmul"] - mfu) <= 0.01 * mfu
    # The same batches and seed: DDP over one process makes the same updates as the plain model.
    fp32 = {r["ddp"]: r["final_loss"] for r in runs if r["precision"] == "fp32"}
    assert fp32[True] == fp32[False]


@pytest.mark.slow
def test_host_overhead_bench_counts_fewer_operators_in_one_pass(tmp_path):
    from bench.host_overhead import main as host_overhead

    report = host_overhead(["--steps", "1", "--windows", "1", "--warmup", "1", "--out", str(tmp_path / "host.json")])
    two, one = report["runs"]
    assert (two["micro_batches"], one["micro_batches"]) == (2, 1) and two["shape"] == one["shape"] == "host"
    assert one["operators_per_update"] < 0.8 * two["operators_per_update"]
    assert report["one_pass_against_two"]["operators"] == round(one["operators_per_update"] / two["operators_per_update"], 3)
    assert report["provenance"]["commit"] and report["provenance"]["host"]["cpus"] >= 1
