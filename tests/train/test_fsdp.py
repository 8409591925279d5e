"""Sharded training (train.parallel: fsdp, PyTorch's FSDP2) under torchrun with 2 gloo processes
on CPU: each process holds half the parameters; trained, stopped, resumed and trained on, the
run reaches one process's weights and Adam moments (which DDP on 2 processes also reaches:
test_distributed.py), and its checkpoints are ordinary ones that translate and resume anywhere."""

import pytest
import torch
from typer.testing import CliRunner

from nmt.cli import app
from nmt.train import sharding
from tests.conftest import TINY_DATA, prepared_tiny
from tests.train.test_distributed import SETTINGS, assert_same_parameters, first_moments, model_of, run_nmt_train

FSDP = [*SETTINGS, "train.parallel=fsdp"]


@pytest.mark.slow
def test_two_sharded_processes_stopped_and_resumed_reach_one_processs_weights(tmp_path):
    sharded, single = tmp_path / "sharded", tmp_path / "single"
    prepared_tiny(sharded, *FSDP)
    prepared_tiny(single, *FSDP)
    first = run_nmt_train(sharded, 4, nproc=2, settings=FSDP)
    assert first.returncode == 0, first.stderr
    held = next(line for line in first.stderr.splitlines() if line.startswith("sharded (train.parallel fsdp)"))
    part, whole = (int(word.replace(",", "")) for word in held.split("holds ")[1].split(" parameters")[0].split(" of "))
    assert whole == 177_664 and abs(2 * part - whole) <= 64  # each process half of them (shards of odd rows differ)
    resumed = run_nmt_train(sharded, 7, nproc=2, settings=FSDP)
    assert resumed.returncode == 0 and "resumed at step 4" in resumed.stderr, resumed.stderr
    alone = run_nmt_train(single, 7, nproc=1, settings=FSDP)  # one process: no sharding
    assert alone.returncode == 0 and "(train.parallel fsdp)" not in alone.stderr, alone.stderr
    assert_same_parameters(model_of(single), model_of(sharded))
    for m1, m2 in zip(first_moments(single), first_moments(sharded)):
        assert torch.allclose(m1, m2, atol=1e-6, rtol=1e-3)
    # an ordinary checkpoint: it translates as the one process's does
    outputs = []
    for run in (sharded, single):
        out = tmp_path / f"{run.name}.de"
        result = CliRunner().invoke(app, ["translate", "-c", str(run / "checkpoints" / "last.pt"), "-i",
                                          str(TINY_DATA / "valid.en"), "-o", str(out)])
        assert result.exit_code == 0, result.output
        outputs.append(out.read_text(encoding="utf-8"))
    assert outputs[0] == outputs[1] and outputs[0].count("\n") == 8


def test_parallel_auto_keeps_ddp_unless_the_copies_would_crowd_the_device():
    from nmt.config import TrainConfig

    model = torch.nn.Linear(4, 4)
    cpu = torch.device("cpu")
    assert sharding.choose_parallel(TrainConfig(), model, cpu, 1) == ("none", None)
    assert sharding.choose_parallel(TrainConfig(), model, cpu, 2) == ("ddp", None)
    assert sharding.choose_parallel(TrainConfig(parallel="fsdp"), model, cpu, 2) == ("fsdp", None)


def test_fsdp_with_frozen_parameters_or_lora_is_refused_with_the_setting_that_runs(tmp_path):
    from nmt.config import TrainConfig

    for frozen in ({"freeze": ["embeddings"]}, {"lora_rank": 4}):
        with pytest.raises(ValueError, match="freeze and lora_rank run under parallel ddp"):
            TrainConfig(parallel="fsdp", **frozen)
        assert TrainConfig(parallel="ddp", **frozen).parallel == "ddp"
