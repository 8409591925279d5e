"""train.ema_decay (nmt.train.weight_average): the average by hand, the checkpoints' weights
against an average recomputed in float64 from an unaveraged run's weights, validation on the
average, readers of the weights, resuming across the setting, and the master weights' masters."""

from __future__ import annotations

import pytest
import torch
from typer.testing import CliRunner

from nmt.checkpoint import TRAINING_WEIGHTS, load_checkpoint
from nmt.cli import app
from nmt.config import load_recipe
from nmt.errors import NmtError
from nmt.train import step as step_module
from nmt.train import trainer as trainer_module
from nmt.train.trainer import Trainer, train
from nmt.train.weight_average import WeightAverage, decay_at
from tests.conftest import TINY, TINY_DATA, prepared_tiny

SETTINGS = ("train.max_tokens=128", "train.max_steps=6", "train.valid_every=3", "train.log_every=3",
            "train.valid_bleu_sentences=4")


def test_the_average_by_hand():
    weight = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    average = WeightAverage([weight], decay=0.9)
    with torch.no_grad():
        weight.copy_(torch.tensor([3.0, 6.0]))
    average.update(1)  # d_1 = min(0.9, 2/11)
    d = 2 / 11
    expected = torch.tensor([d * 1 + (1 - d) * 3, d * 2 + (1 - d) * 6])
    assert torch.allclose(average.averages[0], expected)
    with torch.no_grad():
        weight.copy_(torch.tensor([0.0, 0.0]))
    average.update(200)  # min(0.9, 201/210) = 0.9
    expected = 0.9 * expected
    assert torch.allclose(average.averages[0], expected)
    assert decay_at(0.9999, 1) == pytest.approx(2 / 11) and decay_at(0.9999, 10**6) == 0.9999
    with average.in_place():  # the parameter itself holds the average, and gets its weights back
        assert torch.allclose(weight, expected)
    assert torch.equal(weight, torch.zeros(2)) and torch.allclose(average.averages[0], expected)


def weights_after_each_update(recipe, monkeypatch) -> list[dict[str, torch.Tensor]]:
    """The run's weights before its first update and after each one (a copy each time)."""
    seen = []
    step = trainer_module.Trainer.train_step

    def recorded(self, group):
        if not seen:
            seen.append({k: v.clone() for k, v in self.model.state_dict().items()})
        result = step(self, group)
        seen.append({k: v.clone() for k, v in self.model.state_dict().items()})
        return result

    monkeypatch.setattr(trainer_module.Trainer, "train_step", recorded)
    train(recipe, show_progress=False)
    monkeypatch.undo()
    return seen


def test_checkpoints_hold_the_average_of_the_weights_an_unaveraged_run_trains(tmp_path, monkeypatch):
    """The average changes nothing in training (dropout 0; validation decodes greedily), so the
    trained weights of a run with train.ema_decay are those of the same run without it, and its
    checkpoints' weights are their average, recomputed here in float64; validation decoded that
    average."""
    plain = weights_after_each_update(prepared_tiny(tmp_path / "plain", *SETTINGS), monkeypatch)
    validated = []
    validate = trainer_module.validate

    def validate_recording(model, *args):
        validated.append({k: v.clone() for k, v in model.state_dict().items()})
        return validate(model, *args)

    monkeypatch.setattr(trainer_module, "validate", validate_recording)
    averaged = prepared_tiny(tmp_path / "averaged", *SETTINGS, "train.ema_decay=0.5")
    train(averaged, show_progress=False)
    folder = averaged.out / "checkpoints"
    for step in (3, 6):
        payload = load_checkpoint(folder / f"step_{step:07d}.pt")
        trained, weights = payload[TRAINING_WEIGHTS], payload["model"]
        assert trained.keys() == {k for k, v in weights.items() if v.is_floating_point() and "positions" not in k}
        for name, tensor in plain[step].items():
            if name not in trained:  # the positional table: a buffer, in "model" alone
                assert torch.equal(weights[name], tensor), name
                continue
            assert torch.equal(trained[name], tensor), name  # bitwise: the same training
            expected = plain[0][name].double()
            for t in range(1, step + 1):
                d = min(0.5, (1 + t) / (10 + t))
                expected = d * expected + (1 - d) * plain[t][name].double()
            assert torch.allclose(weights[name].double(), expected, atol=1e-6), name
            assert not torch.equal(weights[name], tensor), name
            assert torch.equal(validated[step // 3 - 1][name], weights[name]), name  # validation decoded the average
    assert load_checkpoint(folder / "best.pt", optimizer=False).keys().isdisjoint({TRAINING_WEIGHTS, "optimizer"})
    out = tmp_path / "valid.de"  # readers translate the average
    result = CliRunner().invoke(app, ["translate", "-c", str(folder / "best.pt"), "-i", str(TINY_DATA / "valid.en"),
                                      "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").count("\n") == 8
    info = CliRunner().invoke(app, ["info", str(folder / "best.pt")])
    assert "weights      their exponential moving average over training (train.ema_decay 0.5)" in info.output


def test_resuming_with_the_setting_turned_on_or_off_says_what_it_does(tmp_path):
    """A run without an average resumed with one starts the average from its weights; a run with
    one resumed without goes on from its trained weights, not from the average."""
    steps = ("train.max_steps=3", "train.max_steps=6")
    plain = prepared_tiny(tmp_path / "plain", *SETTINGS, steps[0])
    train(plain, show_progress=False)
    on = Trainer(prepared_tiny(tmp_path / "plain", *SETTINGS, steps[1], "train.ema_decay=0.9"))
    notes = []
    on.log = notes.append
    on.resume()
    assert any("keeps no average of the weights" in str(n) for n in notes)
    assert all(torch.equal(a, p) for a, p in zip(on.update.average.averages, on.update.parameters))

    averaged = prepared_tiny(tmp_path / "averaged", *SETTINGS, steps[0], "train.ema_decay=0.9")
    train(averaged, show_progress=False)
    saved = load_checkpoint(averaged.out / "checkpoints" / "last.pt")
    off = Trainer(prepared_tiny(tmp_path / "averaged", *SETTINGS, steps[1]))
    notes = []
    off.log = notes.append
    off.resume()
    assert any("training goes on from its trained weights" in str(n) for n in notes)
    state = off.model.state_dict()
    for name, tensor in saved[TRAINING_WEIGHTS].items():
        assert torch.equal(state[name], tensor), name


def test_the_average_is_of_the_fp32_masters_under_bf16_weights(tmp_path, monkeypatch):
    """With bf16 weights in the passes (CUDA's master weights, run on the CPU), the average is kept
    of the fp32 masters the optimizer updates; validation and the checkpoint see it in fp32, and the
    passes get their bf16 weights back."""
    monkeypatch.setattr(step_module, "uses_master_weights", lambda cfg, device: cfg.precision == "bf16")
    trainer = Trainer(prepared_tiny(tmp_path, *SETTINGS, "train.precision=bf16", "train.ema_decay=0.9",
                                    "decode.precision=fp32"))
    assert trainer.update.master_weights and all(a.dtype == torch.float32 for a in trainer.update.average.averages)
    linear = trainer.model.encoder_layers[0].feed_forward.w1
    result = trainer.run(show_progress=False)
    bf16 = linear.weight.detach().clone()
    assert bf16.dtype == torch.bfloat16
    payload = load_checkpoint(result.checkpoint)
    name = "encoder_layers.0.feed_forward.w1.weight"
    average, trained = payload["model"][name], payload[TRAINING_WEIGHTS][name]
    assert average.dtype == trained.dtype == torch.float32 and not torch.equal(average, trained)
    assert torch.equal(trained.to(torch.bfloat16), bf16)  # the weights the passes use: the trained ones
    with trainer.update.validation_model() as model:
        assert torch.equal(model.encoder_layers[0].feed_forward.w1.weight, average)
    assert linear.weight is trainer.model.encoder_layers[0].feed_forward.w1.weight and torch.equal(linear.weight, bf16)


def test_the_setting_is_checked_where_the_recipe_is_read():
    with pytest.raises(NmtError, match="ema_decay"):
        load_recipe(TINY, ["train.ema_decay=1.0"])
    assert load_recipe(TINY, ["train.ema_decay=0.999", "train.parallel=fsdp"]).train.ema_decay == 0.999  # sharded
