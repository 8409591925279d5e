"""`make bench-gpu` on the CPU with the tiny shape: every path runs, and its figures add up."""

import json

import numpy as np
import pytest
import torch

from bench.gpu import TINY, cpu_operators, kernel_kind, layer_norms_of, main, synthetic_shards, time_by_kind
from nmt.data.batching import collate
from nmt.model.layer_norm import LayerNorm
from nmt.model.transformer import Transformer
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


def test_the_operator_census_from_raw_events_is_what_key_averages_counts(tmp_path):
    """bench.gpu.cpu_operators against torch's own key_averages over a tiny model's training
    passes (the autograd engine's thread, nested calls, aten::sum in aten::sum, and bf16 casts)."""
    from torch.profiler import ProfilerActivity, profile

    data = synthetic_shards(tmp_path, vocab=TINY["vocab"], pairs=16)
    model = Transformer(TINY["model"], TINY["vocab"], TINY["vocab"])
    batch = collate(data, np.arange(16))
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for precision in (torch.float32, torch.bfloat16):
            with torch.autocast("cpu", dtype=precision, enabled=precision != torch.float32):
                model(batch.src, batch.tgt_in).float().logsumexp(-1).sum().backward()
    ours = {name: (calls, micros) for name, calls, micros in cpu_operators(prof)}
    theirs = {e.key: (e.count, e.self_cpu_time_total) for e in prof.key_averages()}
    assert ours.keys() == theirs.keys() and sum(calls for calls, _ in ours.values()) > 1000
    for name, (calls, micros) in theirs.items():
        assert ours[name][0] == calls, name
        assert ours[name][1] == pytest.approx(micros, rel=1e-6, abs=1e-3), name


@pytest.mark.slow
def test_cpu_tiny_run_reports_speed_and_mfu(tmp_path, monkeypatch):
    import bench.run

    ceiling = bench.run.matmul_ceiling  # measured on a small matmul: the figures must add up, not be precise
    monkeypatch.setattr(bench.run, "matmul_ceiling", lambda: ceiling(size=512, repeats=1, trials=2))
    out = tmp_path / "cpu_tiny.json"
    report = main(["--device", "cpu", "--steps", "1", "--warmup", "1", "--windows", "1", "--processes", "0",
                   "--threads", "1", "--out", str(out)])
    assert json.loads(out.read_text()) == report
    runs = report["runs"]
    assert {(r["precision"], r["ddp"]) for r in runs} == {("fp32", False), ("fp32", True), ("bf16", False), ("bf16", True)}
    for run in runs:
        assert run["target_tokens_per_s"] > 0 and run["peak_memory_gb"] > 0 and not run["recipe_defaults"]
        assert run["host_issue_seconds"]["median"] <= run["host_issue_seconds"]["p90"]
        assert run["device_seconds"] is None  # no CUDA events on a CPU
        assert run["micro_batches"] == 2 and len(run["timings"]) == 1  # auto on a CPU: one pass per batch
        activity = run["host_activity"]  # what the machine ran beside the timing (bench.host_activity)
        assert run["settled"] is None and activity["own_busy_cpus"] > 0 and activity["seconds"] > 0
        assert activity["machine_cpus"] >= 1 and activity["other_busy_cpus"] >= 0  # (one update: too short to weigh)
        assert run["triton_launchers"] is None  # no Triton kernels on a CPU
        assert run["operators_per_update"] > 100 and run["profiled_updates"] == 1
        kinds, top = run["milliseconds_by_kind"], run["top_kernels"]
        assert kinds["matmul"] > 0 and len(top) == 10 and sum(t["calls"] for t in top) > 0
        assert list(kinds.values()) == sorted(kinds.values(), reverse=True)
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

    report = host_overhead(["--steps", "1", "--windows", "1", "--warmup", "1", "--threads", "1",
                            "--out", str(tmp_path / "host.json")])
    two, one = report["runs"]
    assert (two["micro_batches"], one["micro_batches"]) == (2, 1) and two["shape"] == one["shape"] == "host"
    assert one["operators_per_update"] < 0.8 * two["operators_per_update"]
    assert report["one_pass_against_two"]["operators"] == round(one["operators_per_update"] / two["operators_per_update"], 3)
    assert report["provenance"]["commit"] and report["provenance"]["host"]["cpus"] >= 1


def test_an_fp32_residual_run_has_torchs_layer_norm_in_the_layers_and_only_there():
    """The GPU day's base_fp32_residual: inside its runs the layers' norms return fp32 under
    autocast, as torch's do (nmt's before); before and after them, autocast's bf16."""
    norm, x = LayerNorm(8), torch.randn(3, 8)

    def dtype_under_autocast():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return norm(x).dtype

    with layer_norms_of({"shape": "base"}):
        assert dtype_under_autocast() == torch.bfloat16
    with layer_norms_of({"shape": "base", "fp32_residual": True}):
        assert dtype_under_autocast() == torch.float32
    assert dtype_under_autocast() == torch.bfloat16


def test_kernels_are_told_apart_by_their_names():
    """Names as an H100's profile lists them (cuBLAS, FlashAttention, inductor, fused Adam) and a
    CPU's aten operators; attention first, since its kernels are cutlass kernels too."""
    kinds = {
        "nvjet_tst_256x128_64x4_1x2_h_bz_coopA_NTT": "matmul",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1": "matmul",
        "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 64, 4>>": "attention",
        "fmha_cutlassB_bf16_aligned_64x64_k64_sm80": "attention",
        "triton_poi_fused_add_native_dropout_0": "fused pointwise (inductor)",
        "triton_red_fused__log_softmax_1": "fused reduction (inductor)",
        "triton_per_fused_native_layer_norm_2": "fused reduction (inductor)",
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<FusedAdamMathFunctor>": "optimizer",
        "Memcpy HtoD (Pinned -> Device)": "copy, cast, fill",
        "aten::addmm": "matmul", "aten::_softmax": "reduction, norm, softmax", "something_new": "other",
    }
    assert {name: kernel_kind(name) for name in kinds} == kinds
    # 2 updates: 3 ms of matmul over 4 calls and 1 ms of pointwise over 2 calls
    report = time_by_kind([("aten::mm", 4, 3000.0), ("aten::add", 2, 1000.0)], updates=2, top=1)
    assert report == {"milliseconds_by_kind": {"matmul": 1.5, "pointwise": 0.5},
                      "top_kernels": [{"name": "aten::mm", "milliseconds": 1.5, "calls": 2.0}]}


def test_the_nllb_layout_fine_tunes_with_lora_and_checkpointing_beside_the_estimate(tmp_path):
    """The GPU day's NLLB-3.3B runs (LoRA; full with activation checkpointing) on their tiny-width
    stand-in: only the adapters train under LoRA, and each run records its peak beside nmt's estimate."""
    from bench.gpu import bench_one, shape, shards_for

    data = shards_for(shape("nllb_tiny"), tmp_path / "data", 8)
    runs = {}
    for name, train in (("lora", {"lora_rank": 4}), ("full", {"checkpoint_activations": True})):
        [runs[name]] = bench_one({"shape": "nllb_tiny", "train": train}, torch.device("cpu"), data, steps=1,
                                 warmup=1, profiled=0)
    assert 0 < runs["lora"]["trainable_parameters"] < 0.2 * runs["full"]["trainable_parameters"]
    assert runs["full"]["trainable_parameters"] == runs["full"]["parameters"]
    # MFU counts the work each run does: LoRA skips the frozen weights' gradients
    assert runs["full"]["trained_work_share"] == 1.0 and 0.5 < runs["lora"]["trained_work_share"] < 1.0
    for run in runs.values():
        assert run["estimated_memory_gb"] > 0 and run["peak_memory_gb"] > 0
        assert run["peak_reserved_memory_gb"] is None  # CUDA's caching allocator only
        assert run["memory_estimate"].startswith("memory estimate: weights")
        [slowest] = run["slowest_updates"]  # one timed update, its one batch: sentences, longest sides
        sentences, source, target = slowest["batches"][0]
        assert slowest["update"] == 0 and sentences > 0 and source > 1 and target > 1


def test_a_packed_run_records_its_rows_and_far_less_padding(tmp_path):
    """bench.gpu times packed rows (train.pack_width) on batches cut as nmt train cuts them, and
    counts their padding from the rows: far below the plain batches' of the same data (batches of
    1,024 tokens, where plain ones mix lengths enough to pad)."""
    from bench.gpu import bench_one, shape, shards_for

    data = shards_for(shape("tiny"), tmp_path / "data", 32)  # 1,213 pairs
    [plain] = bench_one({"shape": "tiny", "train": {"max_tokens": 1024}}, torch.device("cpu"), data, steps=2,
                        warmup=1, profiled=0)
    [packed] = bench_one({"shape": "tiny", "train": {"max_tokens": 1024, "pack_width": 256}}, torch.device("cpu"),
                         data, steps=2, warmup=1, profiled=0)
    assert packed["pack_width"] == 256 and plain["pack_width"] is None and not packed["recipe_defaults"]
    assert packed["target_padding_fraction"] < 0.5 * plain["target_padding_fraction"]
    assert packed["final_loss"] > 0


def test_under_cuda_graphs_every_timed_shape_is_met_twice_before_the_timing(tmp_path):
    """torch's CUDA graph trees run a shape's first pass eagerly and record it at the second: a
    CUDA-graph run times replays only if every shape it will time was met twice before. Checked on
    the shape buckets the tiny shape's batches fall into, with the GPU day's warm-up and windows."""
    from collections import Counter

    from bench.gpu import shape, shards_for, updates_before_timing
    from nmt.data.buckets import bucket_shape
    from nmt.train.training_data import run_epoch_batches

    spec_shape = shape("tiny")
    cfg = spec_shape["train"].model_copy(update={"cuda_graphs": True, "seed": 1})
    warmup, needed = 5, 5 + 3 * 20 + 3  # the GPU day's: 3 windows of 20, 3 profiled
    data = shards_for(spec_shape, tmp_path / "data", needed + 10)
    batches = run_epoch_batches(data, cfg, epoch=0)
    updates = [batches[i:i + cfg.update_freq] for i in range(0, len(batches) - 1, cfg.update_freq)]
    def shape_of(update):  # one pass per update on one GPU
        return bucket_shape(data, update, cfg.max_tokens)

    met = Counter(shape_of(update) for update in updates_before_timing(updates, warmup, needed, cuda_graphs=True))
    timed = [shape_of(update) for update in updates[warmup:needed]]
    assert len(set(timed)) > 5 and min(met[s] for s in timed) >= 2
    once = Counter(shape_of(update) for update in updates[:needed])  # each timed update run once before
    assert any(once[s] == 1 for s in timed)  # would record inside the timing
    assert updates_before_timing(updates, warmup, needed, cuda_graphs=False) == updates[:warmup]
