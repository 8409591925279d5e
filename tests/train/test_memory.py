"""Activation checkpointing (train.checkpoint_activations) and the memory estimate printed before
training: checkpointed layers give the same loss and gradients, dropout included, while autograd
keeps far less; the estimate's parts by hand, its per-token activations measured, and its warning
where the run does not fit."""

from __future__ import annotations

import pytest
import torch

from nmt.data.batching import collate, epoch_batches
from nmt.train import memory_estimate
from nmt.train.memory_estimate import MemoryEstimate, activation_bytes_per_token, estimate_memory
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
    plain_kept = activation_bytes_per_token(model, torch.device("cpu"))
    model.checkpoint_layers = True
    torch.manual_seed(5)
    kept_loss, kept_grads = loss_and_gradients(model, batch)
    assert torch.equal(plain_loss, kept_loss)
    assert_same_gradients(model, plain_grads, kept_grads, rtol=1e-6)
    assert activation_bytes_per_token(model, torch.device("cpu")) < 0.5 * plain_kept
    model.checkpoint_layers = False


def test_the_estimate_by_hand_and_its_warning(trainer, monkeypatch):
    parameters = sum(p.numel() for p in trainer.model.parameters())
    estimate = estimate_memory(trainer.model, trainer.train_cfg, torch.device("cpu"), tokens_per_pass=1000)
    assert (estimate.weights, estimate.gradients, estimate.optimizer) == (4 * parameters, 4 * parameters,
                                                                            8 * parameters)
    with_masters = estimate_memory(trainer.model, trainer.train_cfg, torch.device("cpu"), 1000, master_weights=True)
    assert with_masters.weights == 6 * parameters  # fp32 masters and the passes' bf16 copies
    # a bigger probe batch keeps the same bytes per token (activations grow with the tokens)
    monkeypatch.setattr(memory_estimate, "PROBE_ROWS", 8)
    assert activation_bytes_per_token(trainer.model, torch.device("cpu")) == pytest.approx(
        estimate.activations_per_token, rel=0.05)
    assert estimate.total == pytest.approx(16 * parameters + 1000 * estimate.activations_per_token)
    small = MemoryEstimate(10**9, 10**9, 2 * 10**9, 10**3, 10**6, available=2 * 10**9)
    assert small.fits is False and "more than the device's 2.0 GB" in small.describe()
    assert "train.checkpoint_activations" in small.describe()


def test_training_says_the_estimate_and_trains_with_checkpointing(tmp_path, capsys):
    recipe = prepared_tiny(tmp_path, *QUIET, "train.max_steps=3", "train.checkpoint_activations=true")
    train(recipe, show_progress=False)
    said = capsys.readouterr().err
    assert "memory estimate: weights" in said and "kB per token" in said
