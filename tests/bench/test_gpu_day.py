"""The GPU day rehearsed on the CPU, under the lent GPU machine's conditions: a Python holding only
that machine's packages (tests/fixtures/gpu_image_packages.txt; its CUDA torch stands in as the CPU
build here, and pydantic and datasets are missing, as there), no package index, the working tree
as it travels there (tracked and not-ignored files only), an empty $OUT, and exactly the commands
of bench/gpu_day/README.md. It passes only if every part's JSON arrives under $OUT with every
check in it passing, the output fits the 12,000 characters that come back, nothing is written
into the tree, and what comes back fits the limits on returned files."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from bench.gpu_day.check import PARTS
from bench.gpu_day.deps import canonical
from tests.conftest import ROOT
from tests.cli.test_readme import readme_blocks

GPU_IMAGE = ROOT / "tests" / "fixtures" / "gpu_image_packages.txt"
OUTPUT_TAIL = 12_000  # characters of a command's output that come back from the GPU machine


def gpu_image_python(home: Path) -> Path:
    """A Python environment under `home` with the GPU image's packages that are installed here:
    each such distribution's files linked into the environment's site-packages (nmt itself,
    pydantic, datasets, ctranslate2, fastapi and the rest stay out)."""
    image = {canonical(line) for line in GPU_IMAGE.read_text().splitlines() if line and not line.startswith("#")}
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(home)], check=True)  # noqa: SLF001
    site = home / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    here = Path(sysconfig.get_paths()["purelib"])
    for dist in importlib.metadata.distributions(path=[str(here)]):
        if canonical(dist.metadata["Name"]) not in image:
            continue
        for top in {Path(f).parts[0] for f in dist.files or [] if not str(f).startswith("..")}:
            if (here / top).exists() and not (site / top).exists():
                (site / top).symlink_to(here / top)
    return home / "bin" / "python3"


def tree_as_it_travels(destination: Path, leave_out: tuple[str, ...] = ()) -> Path:
    """The working tree's tracked and untracked-but-not-ignored files, as the GPU machine gets them."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file() and not name.startswith(leave_out):
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


def gpu_machine_env(python: Path, out: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "GPU_PYTHON")}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(ROOT))]
    env |= {"PATH": os.pathsep.join([str(python.parent), *path]), "OUT": str(out), "PIP_NO_INDEX": "1",
            "PIP_CONFIG_FILE": os.devnull, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return env


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


# The CPython versions bench/gpu_day/wheels.sh builds pydantic-core and sentencex for: the GPU
# machines' 3.12 and the 3.11 of `make test` here.
WHEEL_PYTHONS = ((3, 11), (3, 12))


@pytest.fixture(scope="session")
def gpu_python(tmp_path_factory) -> Path:
    if sys.version_info[:2] not in WHEEL_PYTHONS:
        built = " and ".join(f"{major}.{minor}" for major, minor in WHEEL_PYTHONS)
        pytest.skip(f"bench/gpu_day/wheels/ holds builds for CPython {built} only; this is "
                    f"{sys.version_info.major}.{sys.version_info.minor}")
    python = gpu_image_python(tmp_path_factory.mktemp("gpu-image") / "env")
    missing = subprocess.run([python, "-c", "import pydantic"], capture_output=True)
    assert missing.returncode != 0, "pydantic must be missing, as on the GPU machine"
    return python


def gpu_day_commands() -> list[str]:
    [commands] = readme_blocks("The commands", "bench/gpu_day/README.md")
    return commands


def test_the_readme_runs_every_part_in_order():
    parts = [re.match(r"bash bench/gpu_day/run\.sh (\w+)", command)[1] for command in gpu_day_commands()]
    assert parts == list(PARTS)


@pytest.mark.slow
@pytest.mark.parametrize("part", list(PARTS))
def test_each_gpu_day_command_returns_its_checks_under_out(gpu_python, tmp_path, part):
    """Each README command, run as the GPU machine runs it (one per test, so that the suite's
    workers share them), passes every check of its part and returns only that part's two files."""
    [command] = [c for c in gpu_day_commands() if c.split()[2] == part]
    tree, out = tree_as_it_travels(tmp_path / "tree"), tmp_path / "out"
    out.mkdir()
    before = files_under(tree)
    run = subprocess.run(["bash", "-c", command], cwd=tree, env=gpu_machine_env(gpu_python, out),
                         capture_output=True, text=True, timeout=600)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-OUTPUT_TAIL:]
    assert len(output) < OUTPUT_TAIL, f"{command}: {len(output)} characters of output would not all come back"
    report = json.loads((out / f"{part}.json").read_text())
    assert list(report["checks"]) == PARTS[part]
    assert report["ok"], {name: c for name, c in report["checks"].items() if not c.get("ok")}
    assert files_under(out) == {f"{part}.json", f"{part}.log"}
    assert files_under(tree) == before, "the check wrote into the tree instead of $OUT"
    checks = report["checks"]

    if part == "correctness":
        assert checks["cuda_tests"]["counts"]["skipped"] >= 9  # collected on that machine, skipped without CUDA
        assert checks["beam_device_vs_cpu"]["same_outputs"] == 8
    elif part == "speed":
        speed = checks["bench_gpu"]
        assert all(r["mfu_vs_measured_fp32_matmul"] > 0 for r in speed["runs"])
        defaults = [r for r in speed["runs"] if r["recipe_defaults"]]  # the goal's figures: fresh processes (3 on a GPU)
        assert len(defaults) == 1 and defaults[0]["repeats_in"] == "fresh processes" and len(defaults[0]["timings"]) == 2
        assert all(len(r["timings"]) >= 2 and r["host_issue_seconds"]["median"] > 0 for r in speed["runs"])
        assert {r["length_multiple"] for r in speed["runs"] if not r["recipe_defaults"]} == {1, 8}
        # what each fresh process timed beside (the compile workers a cached compile may start), and
        # the wait for the machine to go quiet where a run asks for it
        # then one more window in each process once the machine is quiet (waiting at most 0.5 s here)
        assert len(defaults[0]["settled_timings"]) == 2 and all(t > 0 for t in defaults[0]["settled_timings"])
        for process in defaults[0]["processes"]:
            assert process["host_activity"]["own_busy_cpus"] > 0
            assert 0 <= process["settled"]["wait"]["waited_seconds"] <= 1.5
            assert process["settled"]["host_activity"]["own_busy_cpus"] > 0
            phases = process["phase_seconds"]  # where the process's time went
            assert list(phases) == ["model_and_step", "memory_estimate", "warmup", "timing", "settled_window", "profile"]
            assert process["outside_phases_seconds"] > 0.5  # an interpreter that imports torch
            assert sum(phases.values()) + process["outside_phases_seconds"] == pytest.approx(process["process_seconds"],
                                                                                              abs=0.3)
        assert all(r["settled"] is None for r in speed["runs"] if not r["recipe_defaults"])
    else:
        assert checks["preflight"]["compile_works"] and checks["compiled_vs_eager"]["ok"]
        precision = checks["bf16_vs_fp32"]
        assert precision["learned"] and precision["reference_loss"] < precision["uniform_loss"] < precision["first_loss"]
        decoding = checks["multi30k"]["decoding"]  # the test set again with decode.compile: fp32 here, the same lines
        assert decoding["same_outputs"] == checks["multi30k"]["test_sentences"] and len(decoding["compiled_seconds"]) == 2
        assert decoding["compiled_test_bleu"] == checks["multi30k"]["test_bleu"]


def test_wheels_that_did_not_travel_are_a_one_line_error(gpu_python, tmp_path):
    tree, out = tree_as_it_travels(tmp_path / "tree", leave_out=("bench/gpu_day/wheels/",)), tmp_path / "out"
    out.mkdir()
    run = subprocess.run(["bash", "-c", gpu_day_commands()[0]], cwd=tree, env=gpu_machine_env(gpu_python, out),
                         capture_output=True, text=True, timeout=60)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines() == [run.stderr.strip()] and "bench/gpu_day/wheels" in run.stderr
    assert not files_under(out)


@pytest.mark.slow
def test_the_attention_probe_runs_as_the_gpu_machine_runs_it(gpu_python, tmp_path):
    """bench/gpu_day/README.md's probes go through run.sh on the GPU machine's Python (the wheels
    on PYTHONPATH: the compiled probe imports nmt's step, as the speed part does): the attention
    probe times every variant at every length (varlen where keys are padded) and finds them equal
    to the fused kernels (fp32 on a CPU), and no rewrite by inductor."""
    tree, out = tree_as_it_travels(tmp_path / "tree"), tmp_path / "out"
    out.mkdir()
    env = gpu_machine_env(gpu_python, out) | {"NMT_COMMIT": "f" * 40}  # the tree travels without git
    run = subprocess.run(["bash", "-c", "bash bench/gpu_day/run.sh attention_probe --lengths 8,12 --calls 1 --timings 2"],
                         cwd=tree, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, (run.stdout + run.stderr)[-OUTPUT_TAIL:]
    assert files_under(out) == {"attention_probe.json"}

    attention = json.loads((out / "attention_probe.json").read_text())
    assert attention["provenance"]["commit"] == "f" * 40 and attention["device"] == "cpu"
    runs = attention["runs"]
    assert [(r["attention"], r["length"]) for r in runs] == [("padded_keys", 8), ("padded_keys", 12),
                                                              ("causal", 8), ("causal", 12)]
    for r in runs:
        # FlashAttention's segments where keys are padded (on a CPU, their reference computation)
        padded = r["attention"] == "padded_keys"
        assert set(r["milliseconds"]) == {"fused", "matmul", "matmul_compiled"} | ({"varlen"} if padded else set())
        assert ("fused_over_varlen" in r) == padded
        assert all(len(m["timings"]) == 2 and m["median"] > 0 for m in r["milliseconds"].values())
        assert r["fastest"] == min(r["milliseconds"], key=lambda name: r["milliseconds"][name]["median"])
        assert max(r["largest_difference"].values()) < 1e-5
        assert r["rows"] == 256 // r["length"] and r["fused_by_inductor"] == 0 and r["agrees_with_fused"]
