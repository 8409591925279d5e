"""bf16 weights with fp32 masters (nmt.train.master_weights), run on the CPU where CUDA would run
them: the same updates as autocast, bit for bit, with no cast of a linear weight in a pass; the
checkpoint of fp32 masters; validation on the fp32 weights."""

from __future__ import annotations

import pytest
import torch

from nmt.data.batching import epoch_batches
from nmt.train import step as step_module
from nmt.train.trainer import Trainer, train
from nmt.checkpoint import load_checkpoint
from tests.conftest import prepared_tiny
from tests.op_census import OperatorCensus

QUIET = ["train.valid_bleu_sentences=0", "train.log_every=5", "train.valid_every=1000"]


def trainer_with(tmp_path, masters: bool, monkeypatch, *settings: str) -> Trainer:
    monkeypatch.setattr(step_module, "uses_master_weights", lambda cfg, device: masters and cfg.precision == "bf16")
    return Trainer(prepared_tiny(tmp_path, "train.precision=bf16", "train.clip_norm=1.0", *QUIET, *settings))


@pytest.mark.parametrize("passes", [1, 2])
def test_bf16_weights_with_fp32_masters_make_autocasts_updates_bit_for_bit(tmp_path, monkeypatch, passes):
    settings = ["train.update_freq=2", "train.max_tokens=128", f"train.micro_batches={passes}"]
    autocast = trainer_with(tmp_path / "autocast", False, monkeypatch, *settings)
    masters = trainer_with(tmp_path / "masters", True, monkeypatch, *settings)
    assert masters.update.master_weights and not autocast.update.master_weights
    masters.model.load_state_dict(autocast.model.state_dict())
    linear = masters.model.encoder_layers[0].feed_forward.w1
    assert linear.weight.dtype == torch.bfloat16 and masters.model.tgt_embed.tokens.weight.dtype == torch.float32
    batches = epoch_batches(autocast.train_data, 128, 1, 0, group=2)
    for i in range(0, 8, 2):
        loss_a, _ = autocast.train_step(batches[i:i + 2])
        loss_m, _ = masters.train_step(batches[i:i + 2])
        assert torch.equal(loss_a, loss_m)
    state_a, state_m = autocast.model.state_dict(), masters.model.state_dict()
    assert state_m.keys() == state_a.keys()
    for key in state_a:  # the masters, fp32, equal to autocast's weights after 4 updates
        assert state_m[key].dtype == torch.float32 and torch.equal(state_a[key], state_m[key]), key
    assert torch.equal(linear.weight, state_m["encoder_layers.0.feed_forward.w1.weight"].to(torch.bfloat16))


@pytest.mark.parametrize("device", ["cpu", "cuda"], ids=["on a CPU", "on a CUDA GPU"])  # (an id "cuda" would mark it a GPU test)
def test_bf16_training_takes_master_weights_on_a_cpu_as_on_cuda_and_no_other_precision_does(device):
    """The bf16 path of a CPU (train.precision auto on AVX512-BF16 or AMX) is CUDA's: bf16 weights with
    fp32 masters, the same updates as autocast (above), faster (bench/results/cpu_master_weights.json);
    but with frozen weights a CPU keeps autocast."""
    from nmt.config import TrainConfig

    for precision in ("bf16", "fp32", "fp16"):
        cfg = TrainConfig(precision=precision)
        assert step_module.uses_master_weights(cfg, torch.device(device)) == (precision == "bf16")
    assert not step_module.uses_master_weights(TrainConfig(precision="bf16"), torch.device("mps"))
    # frozen weights: on a CPU their masters would sit beside them in the same memory
    for frozen in (TrainConfig(precision="bf16", lora_rank=4), TrainConfig(precision="bf16", freeze=["encoder"])):
        assert step_module.uses_master_weights(frozen, torch.device(device)) == (device == "cuda")


def test_a_pass_on_bf16_weights_casts_no_linear_weight(tmp_path, monkeypatch):
    settings = ["train.update_freq=2", "train.max_tokens=128", "train.micro_batches=1"]
    casts = {}
    for masters in (False, True):
        trainer = trainer_with(tmp_path / str(masters), masters, monkeypatch, *settings)
        batches = epoch_batches(trainer.train_data, 128, 1, 0, group=2)
        trainer.train_step(batches[:2])
        with OperatorCensus(trainer.model) as census:
            trainer.train_step(batches[2:4])
        casts[masters] = sum(census.parameter_casts.values())
    assert casts[True] == 1  # the tied embedding, cast once for the output layer
    assert casts[False] > 20


def test_training_on_bf16_weights_validates_and_resumes_from_fp32_checkpoints(tmp_path, monkeypatch):
    """A run saves fp32 masters, validates (greedy decoding in fp32 works: the fp32 weights are in
    place), and a resumed run continues to the uninterrupted run's weights."""
    settings = ["train.update_freq=2", "train.max_tokens=128", "train.valid_bleu_sentences=4"]
    monkeypatch.setattr(step_module, "uses_master_weights", lambda cfg, device: cfg.precision == "bf16")
    recipe = prepared_tiny(tmp_path / "whole", "train.precision=bf16", "train.max_steps=6", "train.valid_every=3",
                           "train.log_every=3", "decode.precision=fp32", *settings)
    whole = train(recipe, show_progress=False)
    payload = load_checkpoint(whole.checkpoint)
    assert all(t.dtype == torch.float32 for t in payload["model"].values())
    first = prepared_tiny(tmp_path / "resumed", "train.precision=bf16", "train.max_steps=3", "train.valid_every=3",
                          "train.log_every=3", "decode.precision=fp32", *settings)
    train(first, show_progress=False)
    second = prepared_tiny(tmp_path / "resumed", "train.precision=bf16", "train.max_steps=6", "train.valid_every=3",
                           "train.log_every=3", "decode.precision=fp32", *settings)
    resumed = load_checkpoint(train(second, show_progress=False).checkpoint)
    for key, value in payload["model"].items():
        assert torch.equal(value, resumed["model"][key]), key


def test_bf16_weights_under_ddp_reduce_their_gradients_before_the_masters_take_them(tmp_path, monkeypatch):
    """DDP all-reduces the bf16 gradients that the passes accumulated (no_sync until the last), and
    only then do they go into the fp32 masters: a one-process group makes the plain step's update,
    up to bf16 rounding of the two passes' sum."""
    from bench.gpu import _OneProcessWorld, one_process_group

    settings = ["train.update_freq=2", "train.max_tokens=128", "train.micro_batches=2"]
    plain = trainer_with(tmp_path / "plain", True, monkeypatch, *settings)
    group = epoch_batches(plain.train_data, 128, 1, 0, group=2)[:2]
    with one_process_group(torch.device("cpu")):
        ddp = trainer_with(tmp_path / "ddp", False, monkeypatch, *settings)  # its own step replaced below
        ddp.model.load_state_dict(plain.model.state_dict())
        monkeypatch.setattr(step_module, "uses_master_weights", lambda cfg, device: True)
        ddp.update = step_module.TrainStep(ddp.model, ddp.train_cfg, torch.device("cpu"), _OneProcessWorld())
        assert ddp.update.master_weights and ddp.update.world.distributed
        loss_ddp, _ = ddp.train_step(group)
        ddp.update.forward = ddp.model  # let DDP go before its process group
    loss_plain, _ = plain.train_step(group)
    assert torch.allclose(loss_ddp, loss_plain, rtol=1e-6)
    for key, value in plain.model.state_dict().items():
        assert torch.allclose(ddp.model.state_dict()[key], value, rtol=0, atol=2e-3), key


def test_under_cuda_graphs_the_bf16_weights_gradients_are_allocated_once_and_added_into(tmp_path, monkeypatch):
    """Under CUDA graphs a replay overwrites the graph's outputs, so no gradient may be one. The
    H100 GPU day (bench/gpu_day/results/gpu_h100_run4) failed there: the bf16 weights' gradients
    were left to the backward, only what the optimizer holds was allocated. Run on the CPU with
    the step's graph settings (bucketed batches, gradients kept, 2 passes per update): every
    parameter the passes train holds one gradient tensor from the start through every update,
    and the updates equal those of the step without graphs on the same batches."""
    settings = ["train.update_freq=2", "train.max_tokens=128", "train.micro_batches=2", "train.compile=false"]
    plain = trainer_with(tmp_path / "plain", True, monkeypatch, *settings)
    monkeypatch.setattr(step_module, "resolve_cuda_graphs", lambda cfg, device, compiled, processes: (True, None))
    graphed = trainer_with(tmp_path / "graphed", True, monkeypatch, *settings)
    assert graphed.update.cuda_graphs and graphed.update.master_weights and not plain.update.cuda_graphs
    plain.model.load_state_dict(graphed.model.state_dict())
    trained = [p for p in graphed.model.parameters() if p.requires_grad]
    assert any(p.dtype == torch.bfloat16 for p in trained)
    allocated = [p.grad for p in trained]
    assert all(grad is not None for grad in allocated)
    batches = epoch_batches(graphed.train_data, 128, 1, 0, group=2, bucketed=True)
    for i in range(0, 8, 2):
        loss_graphed, tokens = graphed.train_step(batches[i:i + 2])
        loss_plain, _ = plain.train_step(batches[i:i + 2])
        assert all(p.grad is grad for p, grad in zip(trained, allocated))
        assert float(loss_graphed) / tokens == pytest.approx(float(loss_plain) / tokens, rel=1e-3)
    for key, value in plain.model.state_dict().items():
        assert torch.allclose(graphed.model.state_dict()[key], value, rtol=0, atol=2e-3), key


@pytest.mark.parametrize("frozen", ["train.lora_rank=4", "train.freeze=[encoder]"])
def test_frozen_weights_in_bf16_make_autocasts_updates_and_keep_their_fp32_values_on_the_host(tmp_path, monkeypatch,
                                                                                              frozen):
    """LoRA's base weights and train.freeze's are bf16 in the passes too (no cast per pass, none
    held for the backward), their fp32 masters out of the optimizer and in host memory: the updates
    are autocast's bit for bit, checkpoints hold the frozen fp32 values unchanged, and validation
    gets them back in place."""
    settings = ["train.update_freq=2", "train.max_tokens=128", "train.micro_batches=1", frozen]
    autocast = trainer_with(tmp_path / "autocast", False, monkeypatch, *settings)
    masters = trainer_with(tmp_path / "masters", True, monkeypatch, *settings)
    before = {key: value.clone() for key, value in autocast.model.state_dict().items()}
    for key, value in masters.model.state_dict().items():  # the same seed: lowering kept every fp32 value
        assert value.dtype == torch.float32 and torch.equal(value, before[key]), key
    step = masters.update
    trained = [p for p in masters.model.parameters() if p.requires_grad]
    assert step.parameters == [m for m in step.parameters if m.requires_grad] and len(step.parameters) == len(trained)
    assert len(step.master_weights.masters) == len(step.master_weights.master_grads) < len(step.master_weights._places)
    frozen_linear = [module.weight for module in masters.model.modules()
                     if isinstance(module, torch.nn.Linear) and not module.weight.requires_grad]
    assert frozen_linear and all(w.dtype == torch.bfloat16 for w in frozen_linear)
    batches = epoch_batches(autocast.train_data, 128, 1, 0, group=2)
    for i in range(0, 6, 2):
        loss_a, _ = autocast.train_step(batches[i:i + 2])
        if i == 4:
            with OperatorCensus(masters.model) as census:
                loss_m, _ = masters.train_step(batches[i:i + 2])
        else:
            loss_m, _ = masters.train_step(batches[i:i + 2])
        assert torch.equal(loss_a, loss_m)
    frozen_names = {name for name, p in masters.model.named_parameters() if not p.requires_grad}
    assert not [name for name in census.parameter_casts if name in frozen_names and "embed" not in name]
    state_a, state_m = autocast.model.state_dict(), masters.model.state_dict()
    for key in state_a:
        assert state_m[key].dtype == torch.float32 and torch.equal(state_a[key], state_m[key]), key
    changed = {key for key in state_a if not torch.equal(state_a[key], before[key])}
    assert changed and all(name not in changed for name in frozen_names)  # only what trains moved
    with step.fp32_weights():
        assert all(module.weight.dtype == torch.float32 for module in masters.model.modules()
                   if isinstance(module, torch.nn.Linear))
    assert all(w.dtype == torch.bfloat16 for w in frozen_linear)


def test_the_first_pass_copies_into_the_masters_gradients_the_next_add_and_an_unused_weight_gets_zero():
    """The masters' fp32 gradients are not zeroed before an update: its first pass's bf16 gradients
    are copied in, the next passes' added. A weight an update's first pass leaves unused must get
    a zero gradient, not the last update's."""
    from torch import nn

    from nmt.train.master_weights import MasterWeights

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4))
    masters = MasterWeights(model)
    x = torch.randn(3, 4, dtype=torch.bfloat16)
    masters.start_update()
    expected = []
    for _ in range(2):  # two passes: the masters' gradients are their sum, in fp32
        model(x).square().sum().backward()
        expected.append([low.grad.float() for low in masters.lowered])
        masters.add_gradients_to_masters()
    for master, first, second in zip(masters.masters, *expected):
        assert torch.equal(master.grad, first + second) and master.grad.abs().sum() > 0
    masters.start_update()
    model[0](x).square().sum().backward()  # the second layer unused
    masters.add_gradients_to_masters()
    assert masters.masters[0].grad.abs().sum() > 0
    assert all(torch.count_nonzero(master.grad) == 0 for master in masters.masters[2:])
