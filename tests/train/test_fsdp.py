"""Sharded training (train.parallel: fsdp, PyTorch's FSDP2): when it is chosen and what it refuses.
Its run under torchrun (2 gloo processes, each holding half the parameters, resumed from a
checkpoint to the weights and Adam moments of one process, translating alike) is part of
test_distributed.py's, which starts the processes once for DDP and FSDP both."""

import pytest
import torch

from nmt.train import sharding


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
