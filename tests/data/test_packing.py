"""Packed rows (train.pack_width), on the CPU: first-fit rows by hand, every pair's tokens,
segments and positions where they belong, a packed batch's loss and gradients equal to the plain
batch's, FlexAttention's masks equal to the dense ones, a packed step making the plain step's
update (eager, and compiled into one graph), and the settings that cannot pack said as errors."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from nmt.config import TrainConfig
from nmt.data.batching import collate, epoch_batches
from nmt.data.packing import collate_packed, first_fit_rows
from nmt.data.shards import ParallelShards
from nmt.model import transformer as transformer_module
from nmt.model.packed_attention import dense_masks, flex_masks
from nmt.special_tokens import BOS, EOS, PAD
from nmt.train import step as step_module
from nmt.train.trainer import Trainer
from tests.conftest import assert_same_gradients, prepared_tiny

QUIET = ["train.valid_bleu_sentences=0", "train.log_every=5", "train.valid_every=1000"]


def test_first_fit_rows_by_hand():
    """Width 10, longest side first (ties in the given order): (6, 7) opens row 0; (3, 5) opens
    row 1 (7 + 5 > 10); (5, 4) fits row 1 after (3, 5) (3 + 5, 5 + 4), not row 0 (6 + 5 > 10);
    (4, 3) fills row 0 (6 + 4, 7 + 3); (2, 2) fits neither (row 1: 5 + 4 + 2 > 10) and opens row 2."""
    src = np.array([3, 6, 2, 5, 4])
    tgt = np.array([5, 7, 2, 4, 3])
    row, src_offset, tgt_offset = first_fit_rows(src, tgt, 10)
    assert row.tolist() == [1, 0, 2, 1, 0]
    assert src_offset.tolist() == [0, 0, 0, 3, 6]
    assert tgt_offset.tolist() == [0, 0, 0, 5, 7]


def _plain_and_packed(tmp_path, width: int, forced: int = 0):
    recipe = prepared_tiny(tmp_path, *QUIET)
    data = ParallelShards(recipe.out / "data", "train", forced_target_tokens=forced)
    indices = np.concatenate(epoch_batches(data, 512, 1, 0)[:2])
    return recipe, data, indices, collate(data, indices), collate_packed(data, indices, width)


def test_a_packed_batch_holds_each_pair_in_one_row_with_its_segments_and_positions(tmp_path):
    _, data, indices, plain, packed = _plain_and_packed(tmp_path, 64, forced=1)
    seg_src, seg_tgt, pos_src, pos_tgt = packed.packing
    width = packed.src.size(1)
    assert packed.tgt_in.shape == packed.tgt_out.shape == (packed.src.size(0), width) and width == 64
    assert packed.src.size(0) < len(indices)  # several pairs per row
    assert (packed.src != PAD).sum() == (plain.src != PAD).sum()  # every token once, nothing lost
    for row in range(packed.src.size(0)):
        for segment in range(1, int(seg_src[row].max()) + 1):
            src = packed.src[row][seg_src[row] == segment]
            tgt_in, tgt_out = packed.tgt_in[row][seg_tgt[row] == segment], packed.tgt_out[row][seg_tgt[row] == segment]
            pair = next(i for i in indices if len(data.src[i]) + 1 == len(src)
                        and np.array_equal(data.src[i], src[:-1].numpy()) and np.array_equal(data.tgt[i], tgt_out[:-1].numpy()))
            assert src[-1] == EOS and tgt_out[-1] == EOS and tgt_in[0] == BOS
            assert torch.equal(tgt_in[1:], tgt_out[:-1])
            assert pos_src[row][seg_src[row] == segment].tolist() == list(range(len(data.src[pair]) + 1))
            assert pos_tgt[row][seg_tgt[row] == segment].tolist() == list(range(len(data.tgt[pair]) + 1))
    # scored: the plain batch's tokens, less each target's forced first token
    assert packed.n_tgt_tokens == plain.n_tgt_tokens
    assert sorted(packed.out_targets.tolist()) == sorted(plain.out_targets.tolist())
    assert (packed.out_targets != PAD).all() and not bool((seg_tgt.view(-1)[packed.out_positions] == 0).any())
    starts = (pos_tgt.view(-1)[packed.out_positions] == 0).sum()
    assert starts == 0  # a forced first token is never scored


def test_a_pair_longer_than_the_width_widens_its_passs_rows(tmp_path):
    _, _, _, plain, packed = _plain_and_packed(tmp_path, 8)
    longest = max(plain.src.size(1), plain.tgt_in.size(1))
    assert packed.src.size(1) == packed.tgt_in.size(1) == longest
    assert collate_packed(ParallelShards(tmp_path / "data", "train"), np.arange(4), 8, multiple=8).src.size(1) % 8 == 0


def test_a_packed_batch_gives_the_plain_batchs_loss_and_gradients(tmp_path):
    """Each token attends within its own sentence at its own positions: the plain batch's summed
    loss and every gradient, float rounding aside. Attending across a row's sentences (a mask
    that ignores the segments) or counting positions along the row would change both."""
    recipe, _, _, plain, packed = _plain_and_packed(tmp_path, 96)
    model = Trainer(recipe).model.eval()

    def loss_and_gradients(batch):
        model.zero_grad()
        loss = model(batch.src, batch.tgt_in, batch.out_positions, batch.out_targets, 0.1, None, batch.packing)
        loss.backward()
        return loss.detach(), [p.grad.clone() for p in model.parameters()]

    (plain_loss, plain_grads), (packed_loss, packed_grads) = loss_and_gradients(plain), loss_and_gradients(packed)
    assert torch.isfinite(packed_loss) and torch.allclose(plain_loss, packed_loss, rtol=1e-5)
    assert_same_gradients(model, plain_grads, packed_grads)
    row_positions = packed.packing._replace(src_positions=torch.arange(packed.src.size(1)).expand_as(packed.src))
    with torch.no_grad():
        shifted = model(packed.src, packed.tgt_in, packed.out_positions, packed.out_targets, 0.1, None, row_positions)
    assert not torch.allclose(plain_loss, shifted, rtol=1e-3)


def test_flex_attentions_block_masks_are_the_dense_masks(tmp_path, monkeypatch):
    """FlexAttention (a compiled CUDA step's kernel) with the block masks gives the dense masks'
    forward pass; on a CPU flex has no backward, so a CUDA test checks training with it."""
    pytest.importorskip("torch.nn.attention.flex_attention")
    recipe, _, _, _, packed = _plain_and_packed(tmp_path, 96)
    rows, s, t = packed.src.size(0), packed.src.size(1), packed.tgt_in.size(1)
    dense, flex = dense_masks(packed.packing), flex_masks(packed.packing)
    for name, shape in (("encoder", (rows, 1, s, s)), ("decoder", (rows, 1, t, t)), ("cross", (rows, 1, t, s))):
        dense_mask, block_mask = getattr(dense, name), getattr(flex, name)
        assert dense_mask.shape == shape
        q, k = torch.meshgrid(torch.arange(shape[2]), torch.arange(shape[3]), indexing="ij")
        from_mod = torch.stack([block_mask.mask_mod(torch.tensor(b), torch.tensor(0), q, k) for b in range(rows)])
        assert torch.equal(from_mod, dense_mask[:, 0]), name
        assert dense_mask[:, 0].any(-1).all(), name  # no query without a key: no NaN row
    model = Trainer(recipe).model.eval()
    with torch.no_grad():
        expected = model(packed.src, packed.tgt_in, packed.out_positions, packed.out_targets, 0.1, None, packed.packing)
        monkeypatch.setattr(transformer_module, "use_flex", lambda *args: True)
        with pytest.warns(UserWarning):  # eager flex on a CPU runs unfused, and says so
            got = model(packed.src, packed.tgt_in, packed.out_positions, packed.out_targets, 0.1, None, packed.packing)
    assert torch.allclose(expected, got, rtol=1e-5)


def test_a_packed_step_makes_the_plain_steps_update(tmp_path):
    settings = ["train.update_freq=2", "train.max_tokens=128", "train.micro_batches=1", *QUIET]
    plain = Trainer(prepared_tiny(tmp_path / "plain", *settings))
    packed = Trainer(prepared_tiny(tmp_path / "packed", *settings, "train.pack_width=48"))
    packed.model.load_state_dict(plain.model.state_dict())
    for model in (plain.model, packed.model):  # dropout 0: the same masks on both sides
        for module in model.modules():
            if hasattr(module, "p"):
                module.p = 0.0
    group = epoch_batches(plain.train_data, 128, 1, 0, group=2)[:2]
    results = []
    for trainer in (plain, packed):
        loss, tokens = trainer.train_step(group)
        results.append((float(loss), tokens, [p.grad.clone() for p in trainer.model.parameters()]))
    assert results[0][1] == results[1][1] and results[1][0] == pytest.approx(results[0][0], rel=1e-5)
    assert_same_gradients(plain.model, results[0][2], results[1][2])


def test_a_compiled_packed_step_is_one_graph_for_every_pass(tmp_path, monkeypatch):
    """Packed passes of different rows and widths, compiled (aot_eager: dynamo's and AOT
    autograd's traces without inductor's C++): one graph, no break, eager's losses."""
    from torch._dynamo.utils import counters

    monkeypatch.setattr(step_module, "compile_model", functools.partial(step_module.compile_model, backend="aot_eager"))
    settings = ["train.max_tokens=256", "train.pack_width=40", *QUIET]
    eager = Trainer(prepared_tiny(tmp_path / "eager", *settings))
    compiled = Trainer(prepared_tiny(tmp_path / "compiled", *settings, "train.compile=true"))
    compiled.model.load_state_dict(eager.model.state_dict())
    rng = np.random.default_rng(0)
    groups = [[rng.choice(len(compiled.train_data), size, replace=False)] for size in (3, 9, 17, 30)]
    torch._dynamo.reset()
    counters.clear()
    shapes = set()
    for group in groups:
        shapes.add(tuple(collate_packed(compiled.train_data, group[0], 40).src.shape))
        loss_compiled, tokens = compiled.train_step(group)
        loss_eager, _ = eager.train_step(group)
        assert loss_compiled.item() / tokens == pytest.approx(loss_eager.item() / tokens, rel=2e-3)
    assert len(shapes) >= 3
    assert not counters["graph_break"], dict(counters["graph_break"])
    assert counters["stats"]["unique_graphs"] == 1


def test_packing_where_it_cannot_run_is_an_error_that_says_why():
    with pytest.raises(ValueError, match="guided alignment trains on one pair per row"):
        TrainConfig(pack_width=64, guided_alignment={"weight": 0.1})
    with pytest.raises(ValueError, match="CUDA graphs replay shape buckets"):
        TrainConfig(pack_width=64, cuda_graphs=True)
    with pytest.raises(ValueError, match="greater than or equal to 8"):
        TrainConfig(pack_width=4)
