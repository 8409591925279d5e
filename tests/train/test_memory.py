"""Activation checkpointing (train.checkpoint_activations) and the memory estimate printed before
training: checkpointed layers give the same loss and gradients, dropout included, while autograd
keeps far less; the estimate's parts by hand (master weights, frozen parameters), its activations
measured at two batch sizes predicting a third, autocast's weight casts counted once, and its
warning where the run does not fit."""

from __future__ import annotations

import re
import weakref
from pathlib import Path

import pytest
import torch
from torch import nn

from nmt.data.batching import collate, epoch_batches
from nmt.train import memory_estimate
from nmt.train.memory_estimate import MemoryEstimate, activation_bytes, estimate_memory, kept_bytes, state_bytes
from nmt.train.trainer import Trainer, train
from tests.conftest import assert_same_gradients, loss_and_gradients, prepared_tiny

QUIET = ["train.valid_bleu_sentences=0", "train.log_every=5", "train.valid_every=1000"]


@pytest.fixture(scope="module")
def trainer(tmp_path_factory):
    return Trainer(prepared_tiny(tmp_path_factory.mktemp("memory"), *QUIET, "model.dropout=0.3"))


def test_checkpointed_layers_give_the_same_loss_and_gradients_and_keep_less(trainer):
    indices = epoch_batches(trainer.train_data, trainer.train_cfg.max_tokens, 1, 0)[0]
    batch = collate(trainer.train_data, indices)
    model = trainer.model.train()  # dropout on: the recomputation must draw the same masks
    torch.manual_seed(5)
    plain_loss, plain_grads = loss_and_gradients(model, batch)
    plain_kept, _ = activation_bytes(model, torch.device("cpu"))
    model.checkpoint_layers = True
    torch.manual_seed(5)
    kept_loss, kept_grads = loss_and_gradients(model, batch)
    assert torch.equal(plain_loss, kept_loss)
    assert_same_gradients(model, plain_grads, kept_grads, rtol=1e-6)
    assert activation_bytes(model, torch.device("cpu"))[0] < 0.5 * plain_kept
    model.checkpoint_layers = False


def test_the_estimate_by_hand_and_its_warning(trainer, monkeypatch):
    model = trainer.model
    parameters = sum(p.numel() for p in model.parameters())
    linear = sum(p.numel() for m in model.modules() if isinstance(m, nn.Linear) for p in m.parameters(recurse=False))
    estimate = estimate_memory(model, trainer.train_cfg, torch.device("cpu"), tokens_per_pass=1000)
    assert (estimate.weights, estimate.gradients, estimate.optimizer) == (4 * parameters, 4 * parameters,
                                                                            8 * parameters)
    with_masters = estimate_memory(model, trainer.train_cfg, torch.device("cpu"), 1000, master_weights=True)
    # linear layers: fp32 masters and the passes' bf16 copies (their gradients alike); the rest fp32
    assert with_masters.weights == with_masters.gradients == 6 * linear + 4 * (parameters - linear)
    assert with_masters.optimizer == 8 * parameters
    assert estimate.total == pytest.approx(16 * parameters + 1000 * estimate.activations_per_token
                                           + estimate.activations_fixed)
    # compiled, the output layer's (tokens × V) logits and their gradient, whole, in the passes' precision
    vocab = model.output_weight.size(0)
    compiled = estimate_memory(model, trainer.train_cfg, torch.device("cpu"), 1000, compiled=True)
    assert compiled.total - estimate.total == pytest.approx(2 * 4 * 1000 * vocab, rel=0.02)
    assert "the compiled step's logits" in compiled.describe() and "compiled" not in estimate.describe()
    bf16 = trainer.train_cfg.model_copy(update={"precision": "bf16"})
    assert estimate_memory(model, bf16, torch.device("cpu"), 1000, compiled=True).compiled_logits == 2 * 2 * 1000 * vocab
    held = estimate_memory(model, trainer.train_cfg, torch.device("cpu"), 1000, process=3 * 10**8)
    assert held.total == pytest.approx(estimate.total + 3 * 10**8, rel=0.02)
    assert "the process besides 0.30 GB" in held.describe() and "besides" not in estimate.describe()
    # a CPU's heap may hold half as much again (glibc): a run within that of the machine's memory is told
    # how to have large blocks given back, unless the environment sets glibc's malloc already
    assert estimate.heap_may_grow and "MALLOC_MMAP_THRESHOLD_" not in estimate.describe()  # 25 GB
    tight = MemoryEstimate(10**9, 10**9, 2 * 10**9, 0, 0, available=5 * 10**9, heap_may_grow=True)
    assert tight.fits and "run with MALLOC_MMAP_THRESHOLD_=1048576" in tight.describe()
    assert "MALLOC" not in MemoryEstimate(10**9, 10**9, 2 * 10**9, 0, 0, available=7 * 10**9, heap_may_grow=True).describe()
    assert "MALLOC" not in MemoryEstimate(10**9, 10**9, 2 * 10**9, 0, 0, available=5 * 10**9).describe()
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "1048576")
    assert not estimate_memory(model, trainer.train_cfg, torch.device("cpu"), 1000).heap_may_grow
    small = MemoryEstimate(10**9, 10**9, 2 * 10**9, 10**3, 10**6, available=2 * 10**9)
    assert small.fits is False and "more than the device's 2.0 GB" in small.describe()
    assert "train.checkpoint_activations" in small.describe()


def test_frozen_parameters_have_no_gradients_or_adam_moments(trainer):
    model = trainer.model
    frozen = list(model.encoder_layers.parameters())
    try:
        for parameter in frozen:
            parameter.requires_grad_(False)
        trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
        assert 0 < trained < sum(p.numel() for p in model.parameters())
        weights, gradients, optimizer = state_bytes(model)
        assert (weights, gradients, optimizer) == (4 * sum(p.numel() for p in model.parameters()),
                                                   4 * trained, 8 * trained)
        # master weights: a frozen linear weight's bf16 copy alone on the device (its fp32 in host memory)
        linear = {id(p) for m in model.modules() if isinstance(m, nn.Linear) for p in m.parameters(recurse=False)}
        by_hand = sum(p.numel() * (4 if id(p) not in linear else 6 if p.requires_grad else 2)
                      for p in model.parameters())
        assert state_bytes(model, master_weights=True)[0] == by_hand
    finally:
        for parameter in frozen:
            parameter.requires_grad_(True)


def test_activations_measured_at_two_sizes_predict_a_third_and_count_weight_casts_once(trainer):
    """What autograd keeps grows in a line with the batch; autocast's bf16 copy of each fp32 weight
    is kept once a pass, whatever its size, so it is the line's fixed part, not a share per token
    (one probe batch of 128 tokens counted an NLLB-3.3B LoRA run's casts 32 times over on a
    4,096-token pass: 231 GB estimated, 44 GB measured)."""
    model, cpu = trainer.model, torch.device("cpu")
    linear = sum(m.weight.numel() for m in model.modules() if isinstance(m, nn.Linear))
    rows = 3 * memory_estimate.PROBE_ROWS
    fits = {}
    for precision in ("fp32", "bf16"):
        per_token, fixed = fits[precision] = activation_bytes(model, cpu, precision)
        measured = kept_bytes(model, cpu, precision, rows)
        assert fixed + per_token * rows * memory_estimate.PROBE_LENGTH == pytest.approx(measured, rel=0.01)
    (fp32_per_token, fp32_fixed), (bf16_per_token, bf16_fixed) = fits["fp32"], fits["bf16"]
    assert bf16_per_token < 0.8 * fp32_per_token  # bf16 activations
    assert 2 * linear <= bf16_fixed - fp32_fixed <= 2.2 * sum(p.numel() for p in model.parameters())


def test_the_probe_keeps_nothing_once_measured(trainer):
    """What the probe's forward pass made dies with it: the estimate runs before every training run,
    and a probe graph left alive holds its activations for the whole run (on a 353M-parameter model
    at 1,000 tokens per pass, 624 MB of 8.5 GB; on a GPU, device memory)."""
    outputs = []
    hooks = [module.register_forward_hook(lambda module, args, out: outputs.append(weakref.ref(out)))
             for module in trainer.model.modules() if isinstance(module, (nn.Linear, nn.ReLU, nn.LayerNorm))]
    try:
        activation_bytes(trainer.model, torch.device("cpu"))
    finally:
        for hook in hooks:
            hook.remove()
    assert len(outputs) > 20 and [ref for ref in outputs if ref() is not None] == []


def test_training_says_the_estimate_and_trains_with_checkpointing(tmp_path, capsys):
    recipe = prepared_tiny(tmp_path, *QUIET, "train.max_steps=3", "train.checkpoint_activations=true")
    train(recipe, show_progress=False)
    said = capsys.readouterr().err
    assert "memory estimate: weights" in said and "kB per token" in said
    if Path("/proc/self/status").is_file():  # the interpreter, torch and the data: some 100 MB at least
        besides = re.search(r"the process besides ([\d.]+) (MB|GB)", said)
        assert besides and float(besides[1]) * (1000 if besides[2] == "GB" else 1) > 100, said


def test_the_probe_backward_makes_every_activation_gradient_and_no_weight_gradient(trainer):
    """On a GPU the estimate measures the probe's forward and backward passes (peak_bytes); the
    backward must make no weight gradient (it would stay allocated until the first update) and
    leave the model and the run's random stream as they were, with layers checkpointed too."""
    model, cpu = trainer.model, torch.device("cpu")
    model.zero_grad(set_to_none=True)
    model.eval()
    try:
        for checkpointed in (False, True):
            model.checkpoint_layers = checkpointed
            state = torch.get_rng_state()
            gradient = memory_estimate.probe_backward(model, cpu, "bf16", rows=2)
            assert torch.isfinite(gradient) and gradient != 0
            assert all(p.grad is None for p in model.parameters())
            assert torch.equal(torch.get_rng_state(), state) and not model.training
    finally:
        model.checkpoint_layers = False
        model.train()


def test_on_cuda_the_estimate_measures_a_quarter_and_half_of_the_pass(trainer, monkeypatch):
    """The device's own measure at a quarter and half of the run's pass (so the output layer's
    chunks are the run's); a probe the device cannot hold falls back to the kept bytes."""
    measured = []

    def peak(model, device, precision, rows):
        measured.append(rows)
        return 5_000 + 300 * rows * memory_estimate.PROBE_LENGTH

    monkeypatch.setattr(memory_estimate, "peak_bytes", peak)
    cuda = torch.device("cuda")
    assert activation_bytes(trainer.model, cuda, "bf16", tokens_per_pass=25_600) == (300, 5_000)
    assert measured == [200, 400]

    def out_of_memory(*args):
        raise torch.cuda.OutOfMemoryError("probe")

    monkeypatch.setattr(memory_estimate, "peak_bytes", out_of_memory)
    monkeypatch.setattr(memory_estimate, "kept_bytes", lambda model, device, precision, rows: 7 * rows)
    assert activation_bytes(trainer.model, cuda, "bf16", tokens_per_pass=25_600) == (7 / 32, 0.0)


def test_the_weights_average_adds_four_bytes_per_trained_weight(trainer):
    """train.ema_decay keeps an fp32 copy of each trained weight: half of Adam's two moments."""
    device = torch.device("cpu")
    plain = estimate_memory(trainer.model, trainer.train_cfg, device, 512)
    averaged = estimate_memory(trainer.model, trainer.train_cfg.model_copy(update={"ema_decay": 0.999}), device, 512)
    trained = sum(p.numel() for p in trainer.model.parameters() if p.requires_grad)
    assert plain.average == 0 and averaged.average == 4 * trained
    assert averaged.total == plain.total + 4 * trained
    assert "the weights' average" in averaged.describe() and "average" not in plain.describe()
