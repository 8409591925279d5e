"""LoRA (train.lora_rank, nmt.model.lora): with B at zero the adapted model computes the base
model's logits; after fine-tuning only the adapters changed (tensor by tensor); every reader gets
the merged weights, whose logits equal the adapted model's within 1e-5; a target that names no
layer is an error."""

from __future__ import annotations

import shutil

import pytest
import torch

from nmt.checkpoint import load_checkpoint, open_checkpoint
from nmt.data.batching import collate, epoch_batches
from nmt.errors import NmtError
from nmt.info import checkpoint_info, describe
from nmt.model.lora import LoraLinear, add_lora
from nmt.model.transformer import Transformer
from nmt.train.trainer import Trainer, train
from tests.conftest import prepared_tiny

QUIET = ["train.valid_bleu_sentences=0", "train.log_every=50", "train.valid_every=1000"]


def logits(model: Transformer, batch) -> torch.Tensor:
    with torch.no_grad():
        return model.eval()(batch.src, batch.tgt_in)


@pytest.fixture(scope="module")
def fine_tuned(trained_tiny, tmp_path_factory):
    parent = trained_tiny.out / "checkpoints" / "best.pt"
    recipe = prepared_tiny(tmp_path_factory.mktemp("lora"), *QUIET, f"train.init_from={parent}", "train.lora_rank=4",
                           "train.max_steps=12", "train.lr=0.01", "train.warmup_steps=2")
    train(recipe, show_progress=False)
    return parent, recipe


def test_zero_b_starts_as_the_base_model_and_a_target_naming_no_layer_is_an_error(tmp_path, monkeypatch):
    recipe = prepared_tiny(tmp_path, *QUIET)
    unknown = recipe.train.model_copy(update={"lora_rank": 4, "lora_targets": ["attention"]})
    with pytest.raises(NmtError, match="train.lora_targets"):
        Trainer(recipe.model_copy(update={"train": unknown}))
    trainer = Trainer(recipe)
    batch = collate(trainer.train_data, epoch_batches(trainer.train_data, 512, 1, 0)[0])
    base = logits(trainer.model, batch)
    drawn, draw = [], torch.nn.init.kaiming_uniform_
    monkeypatch.setattr(torch.nn.init, "kaiming_uniform_",
                        lambda tensor, *args, **kwargs: drawn.append(tensor) or draw(tensor, *args, **kwargs))
    # qkv_proj: 2 encoder + 2 decoder self-attentions; out_proj: those and 2 cross-attentions
    assert add_lora(trainer.model, 4, 16.0, ["qkv_proj", "out_proj"]) == 4 + 6
    # only the adapters' A is drawn, not a weight of the layer's size that the base weight replaces
    assert [tuple(t.shape) for t in drawn if not t.is_meta] == [(4, recipe.model.d_model)] * 10
    assert torch.equal(logits(trainer.model, batch), base)
    assert all(p.requires_grad == name.endswith(("lora_a", "lora_b")) for name, p in trainer.model.named_parameters())


def test_only_the_adapters_change_and_the_merged_model_computes_the_adapted_ones_logits(fine_tuned, tmp_path):
    parent, recipe = fine_tuned
    before = load_checkpoint(parent)["model"]
    raw = load_checkpoint(recipe.out / "checkpoints" / "last.pt")["model"]
    adapters = [key for key in raw if key.endswith((".lora_a", ".lora_b"))]
    assert adapters and set(raw) - set(adapters) == set(before)
    assert all(torch.equal(raw[key], before[key]) for key in before)  # the base weights, untouched
    assert any(not torch.equal(raw[key], torch.zeros_like(raw[key])) for key in adapters if key.endswith("lora_b"))

    trainer = Trainer(recipe)  # the adapted model, as training holds it
    adapted = trainer.model
    adapted.load_state_dict(raw)
    merged = Transformer(recipe.model, adapted.src_embed.tokens.num_embeddings, adapted.tgt_embed.tokens.num_embeddings)
    weights = open_checkpoint(recipe.out / "checkpoints" / "last.pt").weights  # what every reader gets
    assert not any(key.endswith((".lora_a", ".lora_b")) for key in weights)
    merged.load_state_dict(weights)
    batch = collate(trainer.train_data, epoch_batches(trainer.train_data, 512, 1, 0)[0])
    base = Transformer(recipe.model, adapted.src_embed.tokens.num_embeddings, adapted.tgt_embed.tokens.num_embeddings)
    base.load_state_dict(before)
    assert (logits(merged, batch) - logits(base, batch)).abs().max() > 1e-3  # the adapters changed the model
    # in float64, so what is compared is the merge (its one rounding to fp32 weights), not the two
    # fp32 forwards' own roundings, which reach 1e-5 at logits of 10
    assert torch.allclose(logits(merged.double(), batch), logits(adapted.double(), batch), atol=1e-5, rtol=0)
    assert any(isinstance(m, LoraLinear) for m in adapted.modules())


def test_a_checkpoint_holds_the_adapters_and_names_one_file_of_the_frozen_weights(fine_tuned, trained_tiny, tmp_path):
    """The base weights never change, so they are written once, beside the checkpoints: each
    checkpoint holds the adapters and their optimizer state alone and names that file, whose
    weights every reader gets back (above). A checkpoint carried away without it, or the file
    read as a checkpoint, is a one-line error; a resumed run names the same file, and a file no
    checkpoint names any more is pruned."""
    parent, recipe = fine_tuned
    folder = recipe.out / "checkpoints"
    [frozen] = folder.glob("frozen_*.pt")
    raw = torch.load(folder / "last.pt", weights_only=True)
    assert raw["frozen"]["file"] == frozen.name
    assert raw["model"] and all(key.endswith((".lora_a", ".lora_b")) for key in raw["model"])
    assert (folder / "last.pt").stat().st_size < parent.stat().st_size / 4
    info = checkpoint_info(folder / "last.pt")  # nmt info names the file it needs
    assert info["frozen_weights"]["file"] == frozen.name and info["frozen_weights"]["weights"] == len(raw["frozen"]["order"]) - len(raw["model"])
    assert any(line.startswith("frozen") and frozen.name in line for line in describe(info))

    carried = tmp_path / "carried.pt"
    carried.write_bytes((folder / "last.pt").read_bytes())
    with pytest.raises(NmtError, match=f"its frozen weights .*{frozen.name} are missing"):
        load_checkpoint(carried)
    with pytest.raises(NmtError, match="the frozen weights of a run's checkpoints, not a checkpoint"):
        load_checkpoint(frozen)

    resumed = tmp_path / "resumed"
    shutil.copytree(recipe.out, resumed)
    stale = resumed / "checkpoints" / "frozen_0000001.pt"  # named by no checkpoint
    shutil.copyfile(frozen, stale)
    more = prepared_tiny(resumed, *QUIET, f"train.init_from={trained_tiny.out / 'checkpoints' / 'best.pt'}",
                         "train.lora_rank=4", "train.max_steps=14", "train.lr=0.01", "train.warmup_steps=2")
    assert train(more, show_progress=False).step == 14
    assert [p.name for p in (resumed / "checkpoints").glob("frozen_*.pt")] == [frozen.name]
    before = load_checkpoint(parent)["model"]
    after = load_checkpoint(resumed / "checkpoints" / "last.pt")["model"]
    assert all(torch.equal(after[key], before[key]) for key in before)
