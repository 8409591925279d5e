"""Every committed result says where it came from, and a user's own runs never write over one."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tools.results import INDEX, code_changed, command_line, provenance, record, write_json

RESULT_FOLDERS = [ROOT / "bench" / "results", ROOT / "bench" / "gpu_day" / "results",
                  *sorted((ROOT / "experiments").glob("*/results"))]
KEYS = ("commit", "command", "host", "date")


def result_files() -> list[Path]:
    return sorted(p for folder in RESULT_FOLDERS for p in folder.rglob("*") if p.is_file() and p.name != INDEX)


def provenance_of(path: Path) -> dict | None:
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        return data.get("provenance") if isinstance(data, dict) else None
    index = path.parent / INDEX
    return json.loads(index.read_text(encoding="utf-8")).get(path.name) if index.is_file() else None


def test_every_committed_result_records_its_commit_command_host_and_date():
    files = result_files()
    assert len(files) > 50 and any(f.suffix == ".png" for f in files)  # the folders are where this test looks
    missing = []
    for path in files:
        record_ = provenance_of(path)
        if record_ is None or any(not record_.get(key) for key in KEYS):
            missing.append(str(path.relative_to(ROOT)))
            continue
        assert re.fullmatch(r"[0-9a-f]{40}", record_["commit"]), path
        if "not recorded" in json.dumps(record_):  # only where the file predates the rule, and says so
            assert "before result files recorded their provenance" in record_.get("note", ""), path
    assert not missing, f"results without their provenance: {missing}"


def test_results_written_now_carry_their_provenance(tmp_path):
    write_json(tmp_path / "r.json", {"bleu": 1.0})
    written = json.loads((tmp_path / "r.json").read_text())
    assert list(written) == ["provenance", "bleu"] and all(written["provenance"][k] for k in KEYS)
    assert written["provenance"]["host"]["cpus"] >= 1 and written["provenance"]["command"]
    assert written["provenance"]["host"]["cpu_vectors"]  # torch's kernels' instruction set (AVX512, AVX2, ...)
    (tmp_path / "curve.png").write_bytes(b"\x89PNG")
    record([tmp_path / "curve.png"], source=provenance() | {"command": "nmt plot runs/x -o curve.png"})
    assert json.loads((tmp_path / INDEX).read_text())["curve.png"]["command"] == "nmt plot runs/x -o curve.png"


def test_the_command_is_recorded_as_typed_with_paths_inside_the_repository_relative(tmp_path, monkeypatch):
    """`python -m MODULE` stays a module (not the file Python found for it); a path inside the
    checkout is written from its root, one outside as it was given."""
    typed = ["/opt/venv/bin/python", "-m", "tools.run_summary", str(ROOT / "runs" / "demo"), "--reference",
             str(tmp_path / "ref.de"), "-o", "experiments/multi30k/results/demo.json"]
    assert command_line(typed, "/opt/venv/bin/python3.11", ROOT) == (
        f"python3.11 -m tools.run_summary runs/demo --reference {tmp_path / 'ref.de'} "
        "-o experiments/multi30k/results/demo.json")
    monkeypatch.setattr(sys, "orig_argv", typed)
    assert provenance()["command"].endswith(" -m tools.run_summary runs/demo --reference "
                                            f"{tmp_path / 'ref.de'} -o experiments/multi30k/results/demo.json")


def test_a_tree_changed_only_in_result_files_counts_as_unchanged():
    """`make bench` writes one result after another: the later ones' code is still the commit's."""
    assert not code_changed([" M bench/results/bench_small.json", " M experiments/precision/results/a.json",
                             "R  bench/results/old.json -> bench/results/new.json"])
    assert code_changed([" M bench/results/bench_small.json", " M nmt/train/step.py"])
    assert code_changed(["M  bench/results.py"]) and not code_changed([])


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_demo_writes_under_runs_and_never_over_a_committed_result():
    plan = subprocess.run(["make", "-n", "demo"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    words = shlex.split(plan.replace("\\\n", " "))
    written = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-o", ">", "--output")]
    assert written and all(w.startswith("runs/") for w in written), written


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_demo_needs_nothing_from_experiments(tmp_path):
    """The demo's rules and helpers live in the Makefile and tools/: a tree without experiments/
    still plans the whole demo (a dry run)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if not name.startswith("experiments/") and (ROOT / name).is_file():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, tmp_path / name)
    plan = subprocess.run(["make", "-n", "demo"], cwd=tmp_path, capture_output=True, text=True)
    assert plan.returncode == 0, plan.stderr
    assert "-m tools.run_summary" in plan.stdout and "experiments" not in plan.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_no_two_rules_share_a_target():
    """The Makefile includes every study's rules.mk: a target defined twice would silently run
    only the later recipe (make merely warns), so `make bench-x` could run another study."""
    plan = subprocess.run(["make", "-n", "install"], cwd=ROOT, capture_output=True, text=True)
    assert "overriding recipe" not in plan.stderr, plan.stderr
