"""Packed rows (train.pack_width), on the CPU: first-fit rows by hand, every pair's tokens,
segments and positions where they belong, a packed batch's loss and gradients equal to the plain
batch's, FlexAttention's masks equal to the dense ones, a packed step making the plain step's
update (eager, and compiled into one graph; with guided alignment too), and the settings that
cannot pack said as errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from nmt.config import TrainConfig
from nmt.data.batching import collate
from bench.gpu import synthetic_shards
from nmt.data.packing import collate_packed, first_fit, pair_sizes, packed_epoch_batches
from nmt.data.shards import ParallelShards
from nmt.model import transformer as transformer_module
from nmt.model.packed_attention import dense_masks, flex_masks
from nmt.special_tokens import BOS, EOS, PAD
from nmt.train import step as step_module
from nmt.errors import NmtError
from nmt.train.trainer import Trainer
from nmt.train.training_data import TrainingData, run_epoch_batches
from tests.conftest import assert_same_gradients, compile_with_aot_eager, prepared_tiny

QUIET = ["train.valid_bleu_sentences=0", "train.log_every=5", "train.valid_every=1000"]


def test_first_fit_by_hand():
    """Rows of 10: (6, 7) opens row 0; (3, 5) cannot join it (7 + 5 > 10) and opens row 1; (5, 4)
    joins row 1 (3 + 5, 5 + 4), not row 0 (6 + 5 > 10); (4, 3) fills row 0; (2, 2) fits nowhere."""
    free_src, free_tgt = [10, 10], [10, 10]
    rows = [first_fit(s, t, free_src, free_tgt) for s, t in ((6, 7), (3, 5), (5, 4), (4, 3), (2, 2))]
    assert rows == [0, 1, 1, 0, None]
    assert (free_src, free_tgt) == ([0, 2], [0, 1])


def test_a_packed_epoch_holds_every_pair_once_in_batches_of_one_shape(tmp_path):
    """News-like lengths in the base recipe's batches (48 rows of 256): every pair exactly once, in
    an order of the seed and the epoch, and each batch fits its rows. Packed, the positions run
    through are at most 6 % padding on each side (plain batches cut from sorted lengths, widths
    rounded to 8: 25 % of the source side, bench/packing.py)."""
    data = synthetic_shards(tmp_path, vocab=1000, pairs=20_000)
    batches = packed_epoch_batches(data, 256, 48, seed=1, epoch=0)
    everything = np.concatenate(batches)
    assert np.array_equal(np.sort(everything), np.arange(len(data)))
    again, other = packed_epoch_batches(data, 256, 48, seed=1, epoch=0), packed_epoch_batches(data, 256, 48, seed=1, epoch=1)
    assert all(np.array_equal(a, b) for a, b in zip(batches, again)) and not np.array_equal(everything, np.concatenate(other))
    src, tgt = pair_sizes(data, everything)
    assert 1 - src.sum() / (len(batches) * 48 * 256) < 0.06 and 1 - tgt.sum() / (len(batches) * 48 * 256) < 0.06
    for run in (batches[:1], batches[-1:], batches[3:5]):
        assert collate_packed(data, run, 256, 48).src.shape == (48 * len(run), 256)
    with pytest.raises(ValueError, match="wider than the packed rows"):
        packed_epoch_batches(data, 64, 48, seed=1, epoch=0)
    selection = np.array([5, 5, 7])  # several corpora drawn by weight: repeats
    assert sorted(np.concatenate(packed_epoch_batches(data, 256, 48, 1, 0, selection)).tolist()) == [5, 5, 7]


def _plain_and_packed(tmp_path, width: int, forced: int = 0):
    recipe = prepared_tiny(tmp_path, *QUIET)
    data = ParallelShards(recipe.out / "data", "train", forced_target_tokens=forced)
    indices = packed_epoch_batches(data, width, 6, 1, 0)[0]
    return recipe, data, indices, collate(data, indices), collate_packed(data, [indices], width, 6)


def test_a_packed_batch_holds_each_pair_in_one_row_with_its_segments_and_positions(tmp_path):
    _, data, indices, plain, packed = _plain_and_packed(tmp_path, 64, forced=1)
    seg_src, seg_tgt, pos_src, pos_tgt = packed.packing
    assert packed.src.shape == packed.tgt_in.shape == packed.tgt_out.shape == (6, 64)
    assert len(indices) > 6  # several pairs per row
    assert (packed.src != PAD).sum() == (plain.src != PAD).sum()  # every token once, nothing lost
    found = []
    for row in range(packed.src.size(0)):
        for segment in range(1, int(seg_src[row].max()) + 1):
            src = packed.src[row][seg_src[row] == segment]
            tgt_in, tgt_out = packed.tgt_in[row][seg_tgt[row] == segment], packed.tgt_out[row][seg_tgt[row] == segment]
            pair = next(i for i in indices if np.array_equal(data.src[i], src[:-1].numpy())
                        and np.array_equal(data.tgt[i], tgt_out[:-1].numpy()))
            found.append(pair)
            assert src[-1] == EOS and tgt_out[-1] == EOS and tgt_in[0] == BOS
            assert torch.equal(tgt_in[1:], tgt_out[:-1])
            assert pos_src[row][seg_src[row] == segment].tolist() == list(range(len(data.src[pair]) + 1))
            assert pos_tgt[row][seg_tgt[row] == segment].tolist() == list(range(len(data.tgt[pair]) + 1))
    assert sorted(found) == sorted(indices.tolist())
    # scored: the plain batch's tokens, less each target's forced first token
    assert packed.n_tgt_tokens == plain.n_tgt_tokens
    assert sorted(packed.out_targets.tolist()) == sorted(plain.out_targets.tolist())
    assert (packed.out_targets != PAD).all() and not bool((seg_tgt.view(-1)[packed.out_positions] == 0).any())
    assert not bool((pos_tgt.view(-1)[packed.out_positions] == 0).any())  # a forced first token is never scored


def test_a_short_batch_gets_empty_rows_and_a_batch_not_cut_for_the_rows_is_refused(tmp_path):
    _, data, indices, _, _ = _plain_and_packed(tmp_path, 64)
    short = collate_packed(data, [indices[:2]], 64, 6)
    assert short.src.shape == (6, 64) and (short.src[2:] == PAD).all() and (short.packing.tgt_segments[2:] == 0).all()
    with pytest.raises(ValueError, match="fits none of the 2 rows of 64"):
        collate_packed(data, [indices], 64, 2)


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


def _plain_and_packed_trainers(tmp_path, *overrides: str) -> tuple[Trainer, Trainer, list[np.ndarray]]:
    """Two trainers of the same weights, one packing rows of 48, without dropout (the same masks on
    both sides), and an update's group of two batches (merged into one pass of 2 x 2 rows)."""
    settings = ["train.update_freq=2", "train.max_tokens=128", "train.micro_batches=1", *QUIET, *overrides]
    plain = Trainer(prepared_tiny(tmp_path / "plain", *settings))
    packed = Trainer(prepared_tiny(tmp_path / "packed", *settings, "train.pack_width=48"))
    packed.model.load_state_dict(plain.model.state_dict())
    for model in (plain.model, packed.model):
        for module in model.modules():
            if hasattr(module, "p"):
                module.p = 0.0
    return plain, packed, run_epoch_batches(packed.train_data, packed.train_cfg, 0)[:2]


def test_a_packed_step_makes_the_plain_steps_update(tmp_path):
    plain, packed, group = _plain_and_packed_trainers(tmp_path)
    assert len(group[0]) + len(group[1]) > 4
    results = []
    for trainer in (plain, packed):
        loss, tokens = trainer.train_step(group)
        results.append((float(loss), tokens, [p.grad.clone() for p in trainer.model.parameters()]))
    assert results[0][1] == results[1][1] and results[1][0] == pytest.approx(results[0][0], rel=1e-5)
    assert_same_gradients(plain.model, results[0][2], results[1][2])


GUIDED = ("data.word_alignments=dice", "train.guided_alignment.weight=1.0", "train.guided_alignment.layer=-1",
          "train.guided_alignment.heads=2")


def test_a_packed_step_with_guided_alignment_makes_the_plain_steps_update(tmp_path, monkeypatch):
    """Guided alignment on packed rows: each pair's links placed where its tokens lie, so the
    update (its translation and alignment losses, every gradient) is the plain step's; the
    alignment heads read the dense cross mask where FlexAttention runs the cross-attention."""
    plain, packed, group = _plain_and_packed_trainers(tmp_path, *GUIDED)
    results = []
    for trainer in (plain, packed):
        loss, tokens = trainer.train_step(group)
        results.append((float(loss), float(trainer.update.alignment_loss), [p.grad.clone() for p in trainer.model.parameters()]))
    assert results[0][1] > 0 and results[1][1] == pytest.approx(results[0][1], rel=1e-5)
    assert results[1][0] == pytest.approx(results[0][0], rel=1e-5)
    assert_same_gradients(plain.model, results[0][2], results[1][2])

    # the links of each pair where its tokens are: the same targets, moved
    data, indices = packed.train_data, np.concatenate(group)
    batch = collate_packed(data, group, 48, 2)  # as the step collated it
    targets = packed.data.alignment_targets(data, indices, (*batch.tgt_out.shape, batch.src.size(1)), batch.pair_places)
    plain_targets = packed.data.alignment_targets(data, indices, (len(indices), 48, 48))
    for k, (i, (row, s0, t0)) in enumerate(zip(indices, batch.pair_places)):
        src_len, tgt_len = len(data.src[i]), len(data.tgt[i])
        assert torch.equal(targets[row, t0:t0 + tgt_len, s0:s0 + src_len], plain_targets[k, :tgt_len, :src_len])
    assert targets.sum() == plain_targets.sum() > 0

    pytest.importorskip("torch.nn.attention.flex_attention")
    model = packed.model.eval()
    batch.alignment = targets
    with torch.no_grad():
        expected = model(batch.src, batch.tgt_in, batch.out_positions, batch.out_targets, 0.0, batch.alignment, batch.packing)
        monkeypatch.setattr(transformer_module, "use_flex", lambda *args: True)
        with warnings.catch_warnings():  # eager flex on a CPU runs unfused, and says so (once a process)
            warnings.simplefilter("ignore", UserWarning)
            got = model(batch.src, batch.tgt_in, batch.out_positions, batch.out_targets, 0.0, batch.alignment, batch.packing)
    assert all(torch.allclose(a, b, rtol=1e-5) for a, b in zip(expected, got))


def test_a_compiled_packed_step_is_one_graph_for_every_pass(tmp_path, monkeypatch):
    """Packed passes of one batch and of two merged (twice the rows), each scoring its own number of
    tokens, compiled (aot_eager: dynamo's and AOT autograd's traces without inductor's C++): one
    graph, no break, eager's losses."""
    from torch._dynamo.utils import counters

    compile_with_aot_eager(monkeypatch)
    settings = ["train.max_tokens=256", "train.pack_width=64", "model.encoder_layers=1", "model.decoder_layers=1", *QUIET]
    eager = Trainer(prepared_tiny(tmp_path / "eager", *settings))
    compiled = Trainer(prepared_tiny(tmp_path / "compiled", *settings, "train.compile=true"))
    compiled.model.load_state_dict(eager.model.state_dict())
    batches = run_epoch_batches(compiled.train_data, compiled.train_cfg, 0)
    groups = [batches[:1], batches[1:2], batches[2:4], batches[4:5]]
    torch._dynamo.reset()
    counters.clear()
    shapes, scored = set(), set()
    for group in groups:
        batch = collate_packed(compiled.train_data, group, 64, 4)
        shapes.add(tuple(batch.src.shape))
        scored.add(batch.n_tgt_tokens)
        loss_compiled, tokens = compiled.train_step(group)
        loss_eager, _ = eager.train_step(group)
        assert loss_compiled.item() / tokens == pytest.approx(loss_eager.item() / tokens, rel=2e-3)
    assert shapes == {(4, 64), (8, 64)} and len(scored) == 4
    assert not counters["graph_break"], dict(counters["graph_break"])
    assert counters["stats"]["unique_graphs"] == 1


def _graphs_on_the_cpu(monkeypatch) -> list[bool]:
    """TrainStep set up as under train.cuda_graphs on a GPU, on the CPU: the choice to replay graphs
    made, and the step compiled with aot_eager (dynamo's and AOT autograd's traces) at the
    dynamism TrainStep asks for (returned, one per compile), without mode reduce-overhead."""
    asked = compile_with_aot_eager(monkeypatch)
    monkeypatch.setattr(step_module, "resolve_cuda_graphs", lambda *args: (True, None))
    return asked


def test_packed_passes_for_cuda_graphs_have_one_shape_compiled_once_and_make_the_plain_update(tmp_path, monkeypatch):
    """Under CUDA graphs packed passes have one shape and score one number of positions over a
    whole epoch, its short last update (one batch of two) included: the step compiles once, for
    that shape (not dynamic), and each update equals the plain step's (every position scored, PAD
    at padding, so the number of scored tokens changes nothing)."""
    from torch._dynamo.utils import counters

    dynamic = _graphs_on_the_cpu(monkeypatch)
    settings = ["train.update_freq=2", "train.max_tokens=256", "train.micro_batches=1", "train.pack_width=64", *QUIET]
    graphed = Trainer(prepared_tiny(tmp_path / "graphed", *settings, "train.compile=true", "train.cuda_graphs=true"))
    plain = Trainer(prepared_tiny(tmp_path / "plain", *settings[:3], *QUIET))
    plain.model.load_state_dict(graphed.model.state_dict())
    assert graphed.update.one_packed_shape and not graphed.update.shape_buckets and dynamic == [False]
    batches = run_epoch_batches(graphed.train_data, graphed.train_cfg, 0)
    assert len(batches) % 2 == 1  # the epoch ends on an update of one batch
    groups = [batches[i:i + 2] for i in range(0, len(batches), 2)]
    passes = [graphed.update._collate(graphed.train_data, group) for group in groups]
    assert {tuple(p.src.shape) for p in passes} == {tuple(p.tgt_in.shape) for p in passes} == {(8, 64)}
    assert {len(p.out_positions) for p in passes} == {8 * 64}
    torch._dynamo.reset()
    counters.clear()
    for group in groups:
        loss_graphed, tokens = graphed.train_step(group)
        loss_plain, _ = plain.train_step(group)
        assert loss_graphed.item() / tokens == pytest.approx(loss_plain.item() / tokens, rel=2e-3)
    assert not counters["graph_break"] and counters["stats"]["unique_graphs"] == 1
    assert counters["frames"]["total"] == counters["frames"]["ok"] == 1  # no recompile for the last update


def test_packing_where_it_cannot_run_is_an_error_that_says_why():
    assert TrainConfig(pack_width=64, guided_alignment={"weight": 0.1}).pack_width == 64  # links placed per pair
    assert TrainConfig(pack_width=64, cuda_graphs=True).pack_width == 64  # one shape: packed_passes_for_cuda_graphs
    with pytest.raises(ValueError, match="greater than or equal to 8"):
        TrainConfig(pack_width=0)
    with pytest.raises(ValueError, match="multiple of 8"):
        TrainConfig(pack_width=100)


def test_rows_narrower_than_a_prepared_pair_are_an_error_that_names_the_setting(tmp_path):
    with pytest.raises(NmtError, match=r"more than train.pack_width \(8\) holds; set pack_width to at least"):
        TrainingData(prepared_tiny(tmp_path, "train.pack_width=8"))
