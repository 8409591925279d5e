"""Two machines, run as two torchrun agents on this one (`--nnodes 2`, c10d rendezvous on
127.0.0.1, gloo, one worker each): they train to the weights of one process, and when one
node's worker is killed mid-run, torchrun restarts both and the run resumes from its last
checkpoint to the weights of an uninterrupted run."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nmt.checkpoint import TRAINING_WEIGHTS, load_checkpoint
from tests.conftest import TINY, TINY_DATA, prepared_tiny
from tests.train.test_distributed import SETTINGS, run_nmt_train

AVERAGE = "train.ema_decay=0.9"  # the weights' average resumes too
NODE_SETTINGS = [*SETTINGS, "train.valid_every=10", AVERAGE]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_node(out: Path, steps: int, port: int, node_rank: int, max_restarts: int = 0) -> subprocess.Popen:
    sets = [f"--set=output_dir={out}", f"--set=data.train={TINY_DATA / 'train'}",
            f"--set=data.valid={TINY_DATA / 'valid'}", f"--set=data.test={TINY_DATA / 'valid'}",
            f"--set=train.max_steps={steps}", *[f"--set={s}" for s in NODE_SETTINGS]]
    command = [sys.executable, "-m", "torch.distributed.run", "--nnodes=2", "--nproc-per-node=1",
               f"--node-rank={node_rank}", "--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{port}",
               f"--rdzv-id=nmt-test-{port}", f"--max-restarts={max_restarts}", "--monitor-interval=0.1",
               f"--log-dir={out.with_name(f'{out.name}.torchrun-{node_rank}')}",  # (else a folder left in /tmp)
               "-m", "nmt", "train", str(TINY), "--no-progress", *sets]
    env = os.environ | {"OMP_NUM_THREADS": "1"}
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


def run_two_nodes(out: Path, steps: int, kill_after_checkpoint: str | None = None) -> list[str]:
    """Both nodes' output; with `kill_after_checkpoint`, node 1's worker gets SIGKILL as soon as that
    checkpoint file appears (torchrun may then restart once)."""
    port = free_port()
    restarts = 1 if kill_after_checkpoint else 0
    nodes = [start_node(out, steps, port, rank, restarts) for rank in (0, 1)]
    killed = None
    if kill_after_checkpoint:
        target = out / "checkpoints" / kill_after_checkpoint
        deadline = time.monotonic() + 120
        while not target.exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        workers = children(nodes[1].pid)
        if workers:
            killed = workers[0]
            os.kill(killed, signal.SIGKILL)
    outputs = [node.communicate(timeout=300)[0] for node in nodes]
    for node, output in zip(nodes, outputs):
        assert node.returncode == 0, output[-3000:]
    if kill_after_checkpoint:
        assert killed is not None, "node 1 had no worker to kill"
    return outputs


def children(pid: int) -> list[int]:
    """The processes `pid` started (its torchrun workers)."""
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def model_of(out: Path) -> dict:
    return load_checkpoint(out / "checkpoints" / "last.pt")["model"]


def max_difference(a: dict, b: dict) -> float:
    return max(float((a[k] - b[k]).abs().max()) for k in a)


@pytest.mark.slow
def test_two_nodes_train_as_one_process_does_and_a_killed_node_restarts_to_the_same_weights(tmp_path):
    """One two-node run for both: node 1's worker is killed after step 10's checkpoint, torchrun
    restarts both nodes' workers, they resume from it, and after 24 updates the two nodes hold the
    weights of one process trained 24 updates, and their average (a restart that lost or repeated
    a batch, or resumed the wrong state, would be far off)."""
    one, faulty = tmp_path / "one", tmp_path / "faulty"
    for out in (one, faulty):
        prepared_tiny(out, *NODE_SETTINGS)
    assert run_nmt_train(one, 24, nproc=1, settings=[*SETTINGS, AVERAGE]).returncode == 0  # validated at the end only
    outputs = run_two_nodes(faulty, 24, kill_after_checkpoint="step_0000010.pt")
    log = "\n".join(outputs)
    assert "resumed at step" in log, log[-3000:]
    assert sum("2 processes × 1 batches" in o for o in outputs) == 1  # one rank speaks (node 0's)
    assert load_checkpoint(faulty / "checkpoints" / "last.pt")["progress"]["step"] == 24
    assert max_difference(model_of(one), model_of(faulty)) <= 2e-5
    trained = [load_checkpoint(out / "checkpoints" / "last.pt")[TRAINING_WEIGHTS] for out in (one, faulty)]
    assert max_difference(*trained) <= 2e-5 and max_difference(trained[0], model_of(one)) > 1e-3
