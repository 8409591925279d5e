"""`make bench-gpu` on the CPU with the tiny shape: every path runs, and its figures add up."""

import json

from bench.gpu import main, real_lengths, synthetic_batches
from nmt.data.tokenizer import BOS, EOS, PAD


def test_synthetic_batches_are_well_formed_token_batches():
    batches = synthetic_batches(max_tokens=1024, vocab=1000, n_batches=6)
    assert len(batches) == 6
    for src, tgt_in, tgt_out in batches:
        assert src.numel() <= 1024 + src.shape[1] and tgt_in.shape == tgt_out.shape
        assert (tgt_in[:, 0] == BOS).all()
        lengths = real_lengths((src, tgt_in, tgt_out))
        for row, (n_src, n_tgt) in enumerate(lengths):
            assert src[row, n_src - 1] == EOS and tgt_out[row, n_tgt - 1] == EOS
            assert (tgt_in[row, 1:n_tgt] == tgt_out[row, :n_tgt - 1]).all()  # shifted by one
            assert (src[row, n_src:] == PAD).all()


def test_cpu_tiny_run_reports_speed_and_mfu(tmp_path):
    out = tmp_path / "cpu_tiny.json"
    report = main(["--device", "cpu", "--steps", "2", "--warmup", "1", "--out", str(out)])
    assert json.loads(out.read_text()) == report
    runs = report["runs"]
    assert {(r["precision"], r["ddp"]) for r in runs} == {("fp32", False), ("fp32", True), ("bf16", False), ("bf16", True)}
    for run in runs:
        assert run["target_tokens_per_s"] > 0 and run["peak_memory_gb"] > 0
        rate = run["model_gflop_per_update"] / run["seconds_per_update"] / 1000  # TFLOP/s
        assert abs(rate - run["model_tflop_per_s"]) <= 0.02 * rate
        mfu = run["model_tflop_per_s"] / report["measured_fp32_matmul_tflops"]
        assert abs(run["mfu_vs_measured_fp32_matmul"] - mfu) <= 0.01 * mfu
    # The same batches and seed: DDP over one process makes the same updates as the plain model.
    fp32 = {r["ddp"]: r["final_loss"] for r in runs if r["precision"] == "fp32"}
    assert fp32[True] == fp32[False]

