"""Result files: JSON written whole or not at all, each saying where it came from (`provenance`:
the commit, the command, the host and the date). Every benchmark and study writes its results
through `write_json`; tests/cli/test_results.py checks every committed result file for it."""

from __future__ import annotations

import json
import os
from pathlib import Path


def provenance() -> dict:
    """Where a result comes from: the commit (NMT_COMMIT where the tree travelled without git, as
    to a lent GPU machine), whether the tree had changes other than result files (`make bench`
    rewrites one result after another), the command, the host and the date."""
    import platform
    import subprocess
    import sys
    import time

    import torch

    from nmt.machine import cpu_identity

    root = Path(__file__).resolve().parent.parent

    def git(*args: str) -> str | None:
        try:
            run = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return run.stdout.strip() if run.returncode == 0 else None

    commit = os.environ.get("NMT_COMMIT") or git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    cpu = cpu_identity()
    host = {"cpu": cpu.pop("model name", None) or platform.processor(), **cpu,
            "cpu_vectors": torch.backends.cpu.get_cpu_capability(), "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(), "machine": platform.machine(),
            "python": platform.python_version(), "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None}
    return {"commit": commit, "tree_changed": None if status is None else code_changed(status.splitlines()),
            "command": command_line(sys.orig_argv, sys.executable, root), "host": host,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}


def command_line(argv: list[str], executable: str, root: Path) -> str:
    """The command as it was typed (`sys.orig_argv`: `python -m bench.run`, not the module's file),
    with the interpreter by its name and paths inside the repository relative to it, so that a
    result says how to make it again from a checkout anywhere."""
    def shown(arg: str) -> str:
        path = Path(arg)
        if path.is_absolute() and path.is_relative_to(root):
            return str(path.relative_to(root))
        return arg

    return " ".join([Path(executable).name, *(shown(arg) for arg in argv[1:])])


def code_changed(porcelain: list[str]) -> bool:
    """Whether `git status --porcelain` lists a changed file outside a results folder. (A line is
    "XY PATH" or "XY OLD -> NEW"; the first may have lost its leading space to a strip.)"""
    paths = [line.split(maxsplit=1)[1].split(" -> ")[-1] for line in porcelain if line.strip()]
    return any("results" not in Path(path).parts[:-1] for path in paths)


def write_json(path: Path, data: dict) -> None:
    """Write `data` to `path` through a hidden temporary file and a rename, with its provenance
    first unless it already has one."""
    if "provenance" not in data:
        data = {"provenance": provenance(), **data}
    _write_whole(Path(path), data)


def _write_whole(path: Path, data: dict) -> None:
    """JSON through a hidden temporary file and a rename: whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


INDEX = "provenance.json"  # in a results folder: the provenance of its files that are not JSON


def record(paths: list[Path], source: dict | None = None) -> None:
    """Record the provenance of files that cannot carry it (plots, logs, screenshots) in their
    folder's provenance.json, by file name."""
    source = source or provenance()
    for path in map(Path, paths):
        index = path.parent / INDEX
        entries = json.loads(index.read_text(encoding="utf-8")) if index.is_file() else {}
        entries[path.name] = source
        _write_whole(index, dict(sorted(entries.items())))


if __name__ == "__main__":
    import sys

    if len(sys.argv) < 3 or sys.argv[1] != "record":
        raise SystemExit("usage: python -m tools.results record FILE...  (a plot or log's provenance, in its folder's provenance.json)")
    record(sys.argv[2:])
