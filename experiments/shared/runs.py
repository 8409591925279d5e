"""Running nmt's commands from a study, as a user types them: the `nmt` of this interpreter's
environment from the repository's root, `--set` overrides, and what a run's metrics say."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def nmt_command() -> str:
    """The `nmt` installed beside this interpreter."""
    return str(Path(sys.executable).with_name("nmt"))


def nmt(*args: str) -> None:
    subprocess.run([nmt_command(), *args], cwd=ROOT, check=True)


def sets(settings: list[str]) -> list[str]:
    """["train.seed=2", ...] -> ["--set", "train.seed=2", ...]"""
    return [arg for s in settings for arg in ("--set", s)]


def run_facts(run: Path) -> dict:
    """The mean of a run's logged target tokens/s (its metrics.jsonl)."""
    rates = [r["tgt_tokens_per_s"] for r in map(json.loads, (run / "metrics.jsonl").read_text().splitlines())
             if r.get("kind") == "train" and "tgt_tokens_per_s" in r]
    return {"target_tokens_per_s": round(sum(rates) / len(rates)) if rates else None}
