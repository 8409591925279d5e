"""Fine-tuning (`train.init_from`) and `nmt info`."""

import json

import pytest
import torch
from typer.testing import CliRunner

from nmt.cli import app
from nmt.data.prepare import prepare
from nmt.data.shards import ParallelShards
from nmt.data.tokenizer import train_tokenizer
from nmt.errors import NmtError
from nmt.info import checkpoint_info
from nmt.model.transformer import Transformer
from nmt.checkpoint import load_checkpoint
from nmt.train.trainer import Trainer, train
from nmt.train.validate import dev_loss
from tests.conftest import TINY, TINY_DATA, one_line_error, tiny_recipe


def child_recipe(parent_recipe, out, *overrides):
    """The tiny recipe fine-tuned on a second corpus (the tiny valid pairs, unseen in training)."""
    return tiny_recipe(out, f"data.train={TINY_DATA / 'valid'}", f"data.valid={TINY_DATA / 'valid'}",
                       f"train.init_from={parent_recipe.out / 'checkpoints' / 'last.pt'}",
                       "train.max_steps=40", "train.warmup_steps=5", "train.valid_every=40",
                       "train.valid_bleu_sentences=0", *overrides)


def test_fine_tuning_keeps_the_tokenizer_and_lowers_the_loss_on_the_new_data(trained_tiny, tmp_path):
    parent = trained_tiny.out / "checkpoints" / "last.pt"
    parent_bytes = parent.read_bytes()
    child = child_recipe(trained_tiny, tmp_path / "child")
    train_tokenizer(child.data, child.tokenizer, child.out, child.train.init_from)
    assert (child.out / "spm.model").read_bytes() == (trained_tiny.out / "spm.model").read_bytes()
    prepare(child.data, child.tokenizer, child.out)
    new_data = ParallelShards(child.out / "data", "valid")

    before = Transformer(trained_tiny.model, 160, 160)
    before.load_state_dict(load_checkpoint(parent)["model"])
    loss_before = dev_loss(before.eval(), new_data, 512, torch.device("cpu"))["nll"]
    torch.manual_seed(child.train.seed)
    seeded = torch.get_rng_state()
    starting = Trainer(child)
    assert torch.equal(torch.get_rng_state(), seeded)  # no random weight drawn: every one comes from the parent
    starting.checkpoints.init_from_parent()
    for name, tensor in before.state_dict().items():  # the run starts from the parent's weights
        assert torch.equal(starting.model.state_dict()[name], tensor), name
    result = train(child, show_progress=False)
    saved = load_checkpoint(child.out / "checkpoints" / "last.pt")
    assert result.step == 40 and saved["progress"]["step"] == 40  # a fresh step count, not the parent's 300
    after = Transformer(trained_tiny.model, 160, 160)
    after.load_state_dict(saved["model"])
    assert dev_loss(after.eval(), new_data, 512, torch.device("cpu"))["nll"] < 0.7 * loss_before
    assert torch.equal(saved["tokenizer"]["src"], load_checkpoint(parent)["tokenizer"]["src"])
    assert parent.read_bytes() == parent_bytes  # the parent is never written to
    assert checkpoint_info(child.out / "checkpoints" / "last.pt")["init_from"] == str(parent)


def test_fine_tuning_refuses_another_vocabulary_or_shape(trained_tiny, tmp_path):
    vocab = child_recipe(trained_tiny, tmp_path / "vocab", "tokenizer.vocab_size=200")
    with pytest.raises(NmtError, match=r"tokenizer.vocab_size: the recipe has 200, but .*last.pt was trained with 160"):
        train_tokenizer(vocab.data, vocab.tokenizer, vocab.out, vocab.train.init_from)
    shape = child_recipe(trained_tiny, tmp_path / "shape", "model.d_ff=256")
    train_tokenizer(shape.data, shape.tokenizer, shape.out, shape.train.init_from)
    prepare(shape.data, shape.tokenizer, shape.out)
    with pytest.raises(NmtError, match=r"model.d_ff: the recipe has 256, but .*last.pt has 128"):
        Trainer(shape).run(show_progress=False)
    assert not (tmp_path / "shape" / "checkpoints" / "last.pt").exists()


def test_a_shrunk_child_starts_from_the_parent_layers_it_picks(trained_tiny, tmp_path):
    """Shrink and fine-tune: a 1-layer decoder from the parent's second layer, the rest as it was."""
    assert trained_tiny.model.decoder_layers == 2
    child = child_recipe(trained_tiny, tmp_path / "child", "model.decoder_layers=1", "train.init_decoder_layers=[1]")
    train_tokenizer(child.data, child.tokenizer, child.out, child.train.init_from)
    prepare(child.data, child.tokenizer, child.out)
    parent = load_checkpoint(trained_tiny.out / "checkpoints" / "last.pt")["model"]
    torch.manual_seed(child.train.seed)
    seeded = torch.get_rng_state()
    starting = Trainer(child)
    assert torch.equal(torch.get_rng_state(), seeded)  # no random weight drawn: every one comes from the parent
    starting.checkpoints.init_from_parent()
    weights = starting.model.state_dict()
    as_parent = {name: name.replace("decoder_layers.0.", "decoder_layers.1.") for name in weights}
    assert sorted(as_parent.values()) == sorted(name for name in parent if not name.startswith("decoder_layers.0."))
    for name, tensor in weights.items():
        assert torch.equal(tensor, parent[as_parent[name]]), name

    beyond = child_recipe(trained_tiny, tmp_path / "beyond", "model.decoder_layers=1", "train.init_decoder_layers=[2]")
    train_tokenizer(beyond.data, beyond.tokenizer, beyond.out, beyond.train.init_from)
    prepare(beyond.data, beyond.tokenizer, beyond.out)
    with pytest.raises(NmtError, match=r"train.init_decoder_layers \[2\]: .*last.pt has 2 decoder layers"):
        Trainer(beyond).run(show_progress=False)
    with pytest.raises(NmtError, match=r"train.init_decoder_layers \[0, 1\]: 1 different parent layers") as refused:
        child_recipe(trained_tiny, tmp_path / "x", "model.decoder_layers=1", "train.init_decoder_layers=[0,1]")
    assert "{" not in str(refused.value)  # the keys named, not the whole recipe shown
    with pytest.raises(NmtError, match=r"train.init_encoder_layers needs train.init_from"):
        tiny_recipe(tmp_path / "y", "model.encoder_layers=1", "train.init_encoder_layers=[0]")


def test_a_parent_written_before_newer_model_keys_existed_fine_tunes(trained_tiny, tmp_path):
    """A key added after the parent was saved reads as its default, the meaning it had then."""
    payload = load_checkpoint(trained_tiny.out / "checkpoints" / "last.pt")
    for key in ("positions", "decoder_start", "residual_free_encoder_layer"):
        del payload["recipe"]["model"][key]
    old_parent = tmp_path / "old.pt"
    torch.save(payload, old_parent)
    child = child_recipe(trained_tiny, tmp_path / "child", f"train.init_from={old_parent}")
    train_tokenizer(child.data, child.tokenizer, child.out, child.train.init_from)
    prepare(child.data, child.tokenizer, child.out)
    assert Trainer(child).checkpoints.init_from_parent() is None  # the weights loaded; the rest fresh
    shape = child_recipe(trained_tiny, tmp_path / "shape", f"train.init_from={old_parent}", "model.decoder_start=eos")
    train_tokenizer(shape.data, shape.tokenizer, shape.out, shape.train.init_from)
    prepare(shape.data, shape.tokenizer, shape.out)
    with pytest.raises(NmtError, match=r"model.decoder_start: the recipe has eos, but .*old.pt has bos"):
        Trainer(shape).checkpoints.init_from_parent()


def test_continued_training_goes_on_with_the_parents_optimizer_and_schedule(trained_tiny, tmp_path):
    """train.init_from_continues: Adam's moments and the update count are the parent's, so the rate
    of the new run's updates is the parent schedule's (0.003 · sqrt(30 / k) for update k after
    warm-up, by hand), not a new warm-up's."""
    parent = load_checkpoint(trained_tiny.out / "checkpoints" / "last.pt")
    done = parent["progress"]["step"]
    child = child_recipe(trained_tiny, tmp_path / "child", "train.init_from_continues=true",
                         f"train.max_steps={done + 10}", "train.warmup_steps=30", "train.log_every=5")
    train_tokenizer(child.data, child.tokenizer, child.out, child.train.init_from)
    prepare(child.data, child.tokenizer, child.out)
    starting = Trainer(child)
    state = starting.checkpoints.init_from_parent()
    assert (state.step, state.epoch, state.best_score) == (done, 0, None)
    moments = starting.update.optimizer.state_dict()["state"]
    assert all(torch.equal(moments[i]["exp_avg"], parent["optimizer"]["state"][i]["exp_avg"]) for i in moments)
    result = train(child, show_progress=False)
    assert result.step == done + 10
    logged = {m["step"]: m["lr"] for m in map(json.loads, (child.out / "metrics.jsonl").read_text().splitlines())
              if m["kind"] == "train"}
    assert sorted(logged) == [done + 5, done + 10]
    for step, lr in logged.items():  # the log's rate after update k is the rate of update k + 1 (6 decimals)
        assert lr == pytest.approx(0.003 * (30 / (step + 1)) ** 0.5, abs=5e-7)
    too_few = child_recipe(trained_tiny, tmp_path / "few", "train.init_from_continues=true", f"train.max_steps={done}")
    train_tokenizer(too_few.data, too_few.tokenizer, too_few.out, too_few.train.init_from)
    prepare(too_few.data, too_few.tokenizer, too_few.out)
    with pytest.raises(NmtError, match=rf"train.max_steps={done}: .* has made {done} updates already"):
        Trainer(too_few).checkpoints.init_from_parent()


def test_continuing_an_averaged_checkpoint_is_a_one_line_error(trained_tiny, tmp_path):
    """An averaged (or imported) checkpoint has weights but no optimizer state to go on with."""
    from nmt.checkpoint import average_into

    ckpts = trained_tiny.out / "checkpoints"
    averaged = tmp_path / "averaged.pt"
    average_into(averaged, [ckpts / "best.pt", ckpts / "last.pt"])
    recipe_file = tmp_path / "recipe.yaml"
    recipe_file.write_text(TINY.read_text())
    sets = ["--set", f"output_dir={tmp_path / 'child'}", "--set", f"data.train={TINY_DATA / 'valid'}",
            "--set", f"data.valid={TINY_DATA / 'valid'}", "--set", f"data.test={TINY_DATA / 'valid'}",
            "--set", f"train.init_from={averaged}", "--set", "train.init_from_continues=true"]
    runner = CliRunner()
    for verb in ("tokenizer", "prepare"):
        assert runner.invoke(app, [verb, str(recipe_file), *sets]).exit_code == 0
    result = runner.invoke(app, ["train", str(recipe_file), *sets, "--no-progress"])
    one_line_error(result, "train.init_from_continues:", "averaged.pt has no optimizer state")
    assert not (tmp_path / "child" / "checkpoints" / "last.pt").exists()


def test_fine_tuning_errors_on_the_command_line_are_one_line(trained_tiny, tmp_path):
    runner = CliRunner()
    missing = child_recipe(trained_tiny, tmp_path / "missing")
    recipe_file = tmp_path / "child.yaml"
    recipe_file.write_text(json.dumps(missing.model_dump(mode="json") | {}), encoding="utf-8")  # JSON is YAML
    result = runner.invoke(app, ["tokenizer", str(recipe_file), "--set", f"train.init_from={tmp_path / 'none.pt'}"])
    assert result.exit_code == 2 and "none.pt: checkpoint not found" in result.output
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"\x80\x02 not a checkpoint")
    result = runner.invoke(app, ["tokenizer", str(recipe_file), "--set", f"train.init_from={corrupt}"])
    assert result.exit_code == 2 and "corrupt.pt: not a readable nmt checkpoint" in result.output
    assert "Traceback" not in result.output


def test_info_describes_a_checkpoint(trained_tiny):
    last = trained_tiny.out / "checkpoints" / "last.pt"
    result = CliRunner().invoke(app, ["info", str(last), "--json"])
    assert result.exit_code == 0
    info = json.loads(result.output)
    assert info["step"] == 300 and info["vocabulary"] == {"joint": True, "src": 160, "tgt": 160}
    assert info["model"]["d_model"] == 64 and info["recipe"]["train"]["max_steps"] == 300
    assert info["parameters"] == Transformer(trained_tiny.model, 160, 160).num_parameters()
    assert info["best_dev"]["metric"] == "bleu" and info["best_dev"]["step"] == 300
    assert info["versions"]["torch"] == torch.__version__
    text = CliRunner().invoke(app, ["info", str(last)]).output
    assert "step 300" in text and f"{info['parameters']:,} parameters" in text
    assert f"{info['training_seconds']:.0f} s of training" in text and 0 < info["training_seconds"] < 60
    bad = CliRunner().invoke(app, ["info", str(trained_tiny.out / "nothing.pt")])
    assert bad.exit_code == 2 and "nothing.pt: checkpoint not found" in bad.output


def test_training_times_read_at_a_glance():
    from nmt.info import _duration

    assert [_duration(s) for s in (0.4, 59.4, 60, 7199, 7200, 12 * 3600)] == ["0 s", "59 s", "1.0 min", "120.0 min",
                                                                             "2.0 h", "12.0 h"]


def test_info_of_a_checkpoint_without_progress_says_so(trained_tiny, tmp_path):
    """An average of imported models records no progress: nmt info says so (it failed formatting
    the step it did not have)."""
    from nmt.checkpoint import load_checkpoint, save_checkpoint

    payload = load_checkpoint(trained_tiny.out / "checkpoints" / "best.pt", optimizer=False)
    del payload["progress"]
    save_checkpoint(payload | {"averaged_from": ["a.pt", "b.pt"]}, tmp_path / "mean.pt")
    result = CliRunner().invoke(app, ["info", str(tmp_path / "mean.pt")])
    assert result.exit_code == 0, result.output
    assert "progress     none recorded" in result.output
