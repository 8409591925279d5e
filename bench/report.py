"""Benchmark results as JSON files, written whole or not at all; the checkpoint and test set a benchmark reads."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path


def provenance() -> dict:
    """Where a result comes from: the commit (NMT_COMMIT where the tree travelled without git, as
    to a lent GPU machine), whether the tree had changes, the command, the host and the date."""
    import platform
    import subprocess
    import sys
    import time

    import torch

    root = Path(__file__).resolve().parent.parent

    def git(*args: str) -> str | None:
        try:
            run = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return run.stdout.strip() if run.returncode == 0 else None

    commit = os.environ.get("NMT_COMMIT") or git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").is_file() else platform.processor()
    host = {"cpu": cpu, "cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(), "machine": platform.machine(),
            "python": platform.python_version(), "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None}
    return {"commit": commit, "tree_changed": None if status is None else bool(status),
            "command": " ".join([Path(sys.executable).name, *sys.argv]), "host": host,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}


def write_json(path: Path, data: dict) -> None:
    """Write `data` to `path` through a hidden temporary file and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, path)


def demo_checkpoint(path: str) -> Path:
    """A benchmark's checkpoint (the demo's by default), or a stop saying how to get one."""
    path = Path(path)
    if not path.is_file():
        raise SystemExit(f"{path}: not found (run `make demo` first, or pass -c)")
    return path


def demo_parser() -> argparse.ArgumentParser:
    """The options of a benchmark on the demo model: -c, --recipe (decode settings), --test, --threads."""
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--checkpoint", default="runs/demo/checkpoints/best.pt")
    parser.add_argument("--recipe", default="recipes/multi30k_en_de.yaml", help="Decode settings to use.")
    parser.add_argument("--test", default="data/multi30k/test_2016_flickr")
    parser.add_argument("--threads", type=int, default=2)
    return parser


def demo_test_set(args: argparse.Namespace) -> tuple[Path, list[str], list[str]]:
    """(checkpoint, English sources, German references) of `demo_parser`'s arguments; sets the threads."""
    import torch

    from nmt.data.corpus import read_lines

    torch.set_num_threads(args.threads)
    checkpoint = demo_checkpoint(args.checkpoint)
    return (checkpoint, list(read_lines(Path(f"{args.test}.en.gz"))), list(read_lines(Path(f"{args.test}.de.gz"))))
