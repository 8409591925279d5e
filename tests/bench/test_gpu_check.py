"""Each check of the GPU check broken on purpose, on the CPU: it must fail. (The rehearsal in
test_gpu_day.py shows that they pass where nothing is broken.)"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import torch

from bench import gpu as bench_gpu
from bench.gpu_day.check import (Context, compiled_and_eager_losses, compiled_vs_eager, cuda_test_modules, cuda_tests_verdict,
                             learned_alike, losses_over_updates, part_compiles, precision_task, preflight, pytest_counts,
                             same_beam_outputs, skip_reasons)
from nmt.data.batching import collate, epoch_batches
from nmt.decode.engines.engine import load_engine
from nmt.model.transformer import Transformer


@pytest.mark.parametrize("closing, on_gpu, ok", [
    ("8 skipped, 317 deselected in 5.10s", False, True),   # the CPU: collected, skipped without CUDA
    ("8 skipped, 317 deselected in 5.10s", True, False),   # a GPU that skipped them tested nothing
    ("8 passed, 317 deselected in 95.2s", True, True),
    ("7 passed, 1 failed, 317 deselected in 95.2s", True, False),
    ("1 error in 3.02s", True, False),                     # an import failed at collection
    ("1 error in 3.02s", False, False),
    ("", False, False),                                    # no closing line: nothing ran
])
def test_cuda_tests_pass_only_when_every_selected_test_ran(closing, on_gpu, ok):
    output = f"ssssssss   [100%]\n{closing}\n"
    returncode = 0 if ok or "skipped" in closing else 1
    assert cuda_tests_verdict(returncode, pytest_counts(output), on_gpu) is ok


def test_a_module_skipped_at_collection_fails_the_cpu_rehearsal():
    """The GPU machine lacks some packages: a test module that skips itself where one is missing
    counts as a skipped CUDA test there (the first GPU run failed so), so the CPU rehearsal fails
    on any skip that is not for want of CUDA."""
    cuda_only = ("SKIPPED [8] tests/train/test_cuda.py:31: needs a CUDA device (make gpu-check runs it on a GPU machine)\n"
                 "8 skipped, 436 deselected in 9.1s\n")
    module_skip = ("SKIPPED [8] tests/train/test_cuda.py:31: needs a CUDA device (make gpu-check runs it on a GPU machine)\n"
                   "SKIPPED [1] tests/bench/test_export_hf.py:11: could not import 'datasets': No module named 'datasets'\n"
                   "9 skipped, 436 deselected in 9.1s\n")
    assert skip_reasons(module_skip)[1].startswith("could not import 'datasets'")
    assert cuda_tests_verdict(0, pytest_counts(cuda_only), False, skip_reasons(cuda_only))
    assert not cuda_tests_verdict(0, pytest_counts(module_skip), False, skip_reasons(module_skip))


def test_cuda_tests_fail_on_a_nonzero_exit_whatever_the_counts():
    assert not cuda_tests_verdict(2, {"passed": 8}, on_gpu=True)


def test_beam_comparison_fails_for_a_perturbed_model(trained_tiny):
    checkpoint = trained_tiny.out / "checkpoints" / "last.pt"
    sources = [line.strip() for line in open(trained_tiny.data.valid + ".en", encoding="utf-8")]
    decode = trained_tiny.decode.model_copy(update={"precision": "fp32"})
    same = same_beam_outputs(load_engine([checkpoint], device="cpu"), load_engine([checkpoint], device="cpu"),
                             sources, decode)
    assert same["ok"] and same["same_outputs"] == len(sources)
    perturbed = load_engine([checkpoint], device="cpu")
    torch.manual_seed(0)
    with torch.no_grad():
        for parameter in perturbed.model.parameters():
            parameter.add_(0.5 * torch.randn_like(parameter) * parameter.std())
    broken = same_beam_outputs(load_engine([checkpoint], device="cpu"), perturbed, sources, decode)
    assert not broken["ok"] and broken["same_outputs"] < len(sources)


@pytest.fixture(scope="module")
def learnable_task(tmp_path_factory):
    task = precision_task(on_gpu=False)
    data = bench_gpu.learnable_shards(tmp_path_factory.mktemp("learnable"), task["vocab"], task["pairs"],
                                      max_length=task["max_length"])
    return task, data, losses_over_updates(task, "fp32", torch.device("cpu"), data)


def test_the_precision_task_is_learned_and_a_run_that_does_not_learn_fails(learnable_task):
    task, data, fp32 = learnable_task
    uniform = math.log(task["vocab"])
    assert fp32[0] > uniform and sum(fp32[-5:]) / 5 < uniform  # learned: far from random targets' ln(vocab)
    assert learned_alike(fp32, fp32, task["learned_below"])["ok"]
    stuck = losses_over_updates(task, "fp32", torch.device("cpu"), data, train_changes={"lr": 1e-9})
    verdict = learned_alike(fp32, stuck, task["learned_below"])
    assert not verdict["ok"] and not verdict["learned"]


def test_the_precision_check_fails_for_a_run_that_learns_differently(learnable_task):
    task, data, fp32 = learnable_task
    other = losses_over_updates(task, "fp32", torch.device("cpu"), data, train_changes={"label_smoothing": 0.3})
    verdict = learned_alike(fp32, other, task["learned_below"])
    assert not verdict["ok"] and verdict["signed_difference"] > 0.01


def test_the_precision_check_allows_a_run_a_little_lower_but_not_one_that_drops_label_smoothing(learnable_task):
    task, data, fp32 = learnable_task
    slightly_lower = [loss * 0.98 for loss in fp32]
    assert learned_alike(fp32, slightly_lower, task["learned_below"])["ok"]
    assert not learned_alike(fp32, [loss * 1.02 for loss in fp32], task["learned_below"])["ok"]
    unsmoothed = losses_over_updates(task, "fp32", torch.device("cpu"), data, train_changes={"label_smoothing": 0.0})
    verdict = learned_alike(fp32, unsmoothed, task["learned_below"])
    assert not verdict["ok"] and verdict["signed_difference"] < -0.05


def test_the_gpu_precision_task_has_the_base_shape_a_short_warm_up_and_true_fp32():
    task = precision_task(on_gpu=True)
    assert task["model"].d_model == 512 and task["model"].encoder_layers == 6  # the base shape
    assert task["train"].warmup_steps <= task["updates"] // 4 and task["train"].tf32 is False
    assert task["learned_below"] < math.log(task["vocab"])


def test_compiled_vs_eager_fails_for_a_different_model_and_when_compile_cannot_work(tmp_path):
    spec = bench_gpu.shape("tiny")
    data = bench_gpu.synthetic_shards(tmp_path / "data", spec["vocab"], 300)
    models = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        models.append(Transformer(spec["model"], spec["vocab"], spec["vocab"]).eval())
    batch = collate(data, epoch_batches(data, 512, 1, 0)[0])
    inputs = (batch.src, batch.tgt_in, batch.out_positions, batch.out_targets, 0.1)
    # The comparison's verdict, with another model in the compiled slot (no compiler needed to see it fail).
    assert not compiled_and_eager_losses(models[0], models[1], inputs, compiler=lambda module: module)["ok"]
    assert compiled_and_eager_losses(models[0], models[0], inputs, compiler=lambda module: module)["ok"]
    ctx = Context(torch.device("cpu"), tmp_path, log=None, compile_works=False, compile_note="no C compiler")
    assert compiled_vs_eager(ctx) == {"ok": False, "not_run": "no C compiler"}


def test_preflight_tries_torch_compile_only_in_a_part_that_compiles(tmp_path):
    assert [part_compiles(part, on_gpu=True) for part in ("correctness", "speed", "training")] == [False, True, True]
    assert [part_compiles(part, on_gpu=False) for part in ("correctness", "speed", "training")] == [False, False, True]
    ctx = Context(torch.device("cpu"), tmp_path, log=None, compiles=False)
    facts = preflight(ctx)
    assert facts["ok"] and "compile_works" not in facts and ctx.compile_works  # not tried, nothing turned off


@pytest.mark.parametrize("name, peak, model", [
    ("NVIDIA H100 80GB HBM3", 989.0, "H100 SXM"), ("NVIDIA H100 PCIe", 756.0, "H100 PCIe"),
    ("NVIDIA H100 NVL", 835.0, "H100 NVL"), ("NVIDIA H200", 989.0, "H200 SXM"), ("NVIDIA H200 NVL", 835.0, "H200 NVL"),
    ("NVIDIA H100", None, "unknown"),  # no form factor in the name: not guessed
    ("NVIDIA GeForce RTX 4090", None, "unknown"),
])
def test_datasheet_peaks_by_device_name_and_unknown_when_not_listed(name, peak, model):
    assert bench_gpu.datasheet_bf16_tflops(name) == (peak, model)


def test_wheels_for_the_gpu_machine_and_this_python_are_in_the_tree():
    wheels = {p.name for p in (Path(bench_gpu.ROOT) / "bench" / "gpu_day" / "wheels").glob("*.whl")}
    for tag in ("cp311", "cp312"):
        for compiled in ("pydantic_core-", "sentencex-"):
            assert any(name.startswith(compiled) and f"-{tag}-" in name for name in wheels), (compiled, tag)
    assert {name.split("-")[0] for name in wheels} >= {"pydantic", "annotated_types", "typing_inspection"}


def test_cuda_tests_are_collected_from_the_modules_that_mark_them(tmp_path):
    (tmp_path / "test_gpu_only.py").write_text("import pytest\n\npytestmark = pytest.mark.cuda\n")
    (tmp_path / "test_one_cuda_test.py").write_text("@pytest.mark.cuda\ndef test_x():\n    pass\n")
    (tmp_path / "test_cpu.py").write_text("def test_y():\n    pass\n")
    (tmp_path / "helpers.py").write_text("pytestmark = pytest.mark.cuda\n")
    assert cuda_test_modules(tmp_path) == [str(tmp_path / "test_gpu_only.py"), str(tmp_path / "test_one_cuda_test.py")]


def test_the_speed_part_measures_the_recipes_first_and_runs_a_chosen_few_by_name():
    from bench.gpu_day.check import chosen_runs, speed_runs

    on_gpu = speed_runs(True)
    assert [r["name"] for r in on_gpu[:2]] == ["base_recipe", "big_recipe"]
    assert all(r["processes"] >= 3 and "train" not in r["spec"] for r in on_gpu[:2])  # as nmt train runs them
    assert [r["name"] for r in chosen_runs(True, "big_recipe,base_eager")] == ["big_recipe", "base_eager"]
    assert "base_padding" not in [r["name"] for r in chosen_runs(True, None)]  # optional: by name only
    assert [r["name"] for r in chosen_runs(True, "base_padding")] == ["base_padding"]
    with pytest.raises(SystemExit, match="--runs: unknown base_fast"):
        chosen_runs(True, "base_recipe,base_fast")
    # every run the runbook names exists: a misspelt one would cost a lease a command
    readme = (Path(__file__).resolve().parents[2] / "bench" / "gpu_day" / "README.md").read_text()
    named = [name for runs in re.findall(r"--runs ([\w,]+)", readme) for name in runs.split(",")]
    assert "base_cuda_graphs" in named and set(named) <= {r["name"] for r in on_gpu}


def test_every_compiled_probe_variant_the_runbook_names_exists(tmp_path):
    from bench.gpu_day.compiled_probe import GPU_ONLY, VARIANTS, main

    readme = (Path(__file__).resolve().parents[2] / "bench" / "gpu_day" / "README.md").read_text()
    named = [name for names in re.findall(r"--variants\s+([\w,]+)", readme) for name in names.split(",")]
    assert {"as_run", "cold_cache", "coordinate_descent", "max_autotune", "online_softmax_off"} <= set(named) <= set(VARIANTS)
    assert GPU_ONLY <= set(VARIANTS)
    with pytest.raises(SystemExit, match="--variants: unknown as_ran"):  # before any process starts
        main(["--out", str(tmp_path / "probe.json"), "--variants", "as_run,as_ran"])
    assert not (tmp_path / "probe.json").exists()
