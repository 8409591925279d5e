"""Shape buckets for CUDA graphs (train.cuda_graphs), on the CPU: the ladder by hand, a bucketed
batch's loss and gradients equal to the plain batch's, a bounded number of shapes per epoch, and
the settings that cannot run said as errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bench.gpu import synthetic_shards
from nmt.config import TrainConfig
from nmt.data.batching import bucket_width, collate, epoch_batches
from nmt.data.buckets import bucket_rows, collate_bucketed, epoch_shapes
from nmt.data.shards import ParallelShards
from nmt.errors import NmtError
from nmt.special_tokens import BOS, EOS, PAD
from nmt.train.compiling import resolve_cuda_graphs
from nmt.train.micro_batches import passes_of
from nmt.train.trainer import Trainer
from tests.conftest import assert_same_gradients, loss_and_gradients, prepared_tiny

QUIET = ["train.valid_bleu_sentences=0", "train.log_every=5", "train.valid_every=1000"]


def test_bucket_widths_by_hand():
    widths = {1: 8, 8: 8, 9: 16, 64: 64, 65: 80, 128: 128, 129: 160, 250: 256, 257: 320, 513: 640, 700: 768}
    assert {w: bucket_width(w) for w in widths} == widths


def test_a_bucketed_batch_gives_the_plain_batchs_loss_and_gradients(tmp_path):
    """Empty rows (an EOS source, a BOS target) and bucket widths score nothing and change no
    gradient; every attention row has a real key, so nothing turns into NaN."""
    trainer = Trainer(prepared_tiny(tmp_path, *QUIET))
    data = trainer.train_data
    indices = epoch_batches(data, 256, 1, 0)[0]
    assert bucket_rows(data, [indices], 256) >= len(indices)
    rows = len(indices) + 3  # three empty rows
    plain, bucketed = collate(data, indices), collate_bucketed(data, indices, rows, BOS)
    assert bucketed.src.shape == (rows, bucket_width(plain.src.size(1)))
    assert bucketed.tgt_in.shape == (rows, bucket_width(plain.tgt_in.size(1)))
    assert bucketed.n_tgt_tokens == plain.n_tgt_tokens and len(bucketed.out_positions) == bucketed.tgt_in.numel()
    empty = len(indices)  # the first empty row
    assert bucketed.src[empty, 0] == EOS and (bucketed.src[empty, 1:] == PAD).all()
    assert bucketed.tgt_in[empty, 0] == BOS and (bucketed.out_targets.view(rows, -1)[empty] == PAD).all()
    model = trainer.model.eval()
    (plain_loss, plain_grads), (bucketed_loss, bucketed_grads) = (loss_and_gradients(model, b) for b in (plain, bucketed))
    assert torch.isfinite(bucketed_loss) and torch.allclose(plain_loss, bucketed_loss, rtol=1e-5)
    assert_same_gradients(model, plain_grads, bucketed_grads)


def test_forced_first_target_tokens_stay_unscored_in_a_bucketed_batch(tmp_path):
    recipe = prepared_tiny(tmp_path)
    data = ParallelShards(recipe.out / "data", "train", forced_target_tokens=1)
    indices = np.arange(6)
    plain = collate(data, indices)
    bucketed = collate_bucketed(data, indices, 8, BOS)
    assert bucketed.n_tgt_tokens == plain.n_tgt_tokens
    scored = bucketed.out_targets[bucketed.out_targets != PAD]
    assert torch.equal(scored, plain.out_targets)  # the same targets, row by row, the forced ones left out


def test_an_epoch_in_buckets_has_a_bounded_number_of_shapes(tmp_path):
    """A news-like epoch (the base recipe's 2 × 12,500 tokens per update, in one pass): without
    buckets every pass is a new shape; in buckets, half as many here (50 of 106 passes), and far
    fewer as the epoch grows (74 for 324 passes at 200,000 pairs, measured), at a padding reported."""
    data = synthetic_shards(tmp_path, vocab=1000, pairs=60_000)
    plain_passes = [passes_of(u, 1)[0] for u in _updates(epoch_batches(data, 12_500, 1, 0, group=2), 2)]
    plain = {(sum(len(b) for b in run), int(data.src.lengths[np.concatenate(run)].max()),
              int(data.tgt.lengths[np.concatenate(run)].max())) for run in plain_passes}
    bucketed_passes = [passes_of(u, 1)[0] for u in _updates(epoch_batches(data, 12_500, 1, 0, group=2, bucketed=True), 2)]
    census = epoch_shapes(data, bucketed_passes, 12_500)
    assert census["passes"] == len(bucketed_passes) > 100
    assert len(plain) == len(plain_passes) and census["shapes"] <= 60 and len(plain) > 1.5 * census["shapes"]
    assert 0 < census["target_padding_fraction"] < 0.3


def _updates(batches: list[np.ndarray], freq: int) -> list[list[np.ndarray]]:
    return [batches[i:i + freq] for i in range(0, len(batches), freq)]


def test_a_step_in_buckets_makes_the_plain_steps_update(tmp_path):
    """TrainStep with shape buckets (what CUDA graphs replay), set on the CPU: the same summed loss
    and gradients as the plain step on the same update."""
    settings = ["train.update_freq=2", "train.max_tokens=128", "train.micro_batches=1", *QUIET]
    plain = Trainer(prepared_tiny(tmp_path / "plain", *settings))
    bucketed = Trainer(prepared_tiny(tmp_path / "bucketed", *settings))
    bucketed.model.load_state_dict(plain.model.state_dict())
    bucketed.update.shape_buckets = True
    group = epoch_batches(plain.train_data, 128, 1, 0, group=2)[:2]
    results = []
    for trainer in (plain, bucketed):
        loss, tokens = trainer.train_step(group)
        results.append((float(loss), tokens, [p.grad.clone() for p in trainer.model.parameters()]))
    assert results[0][1] == results[1][1] and results[1][0] == pytest.approx(results[0][0], rel=1e-5)
    assert_same_gradients(plain.model, results[0][2], results[1][2])


def test_cuda_graphs_where_they_cannot_run_are_errors_that_say_why():
    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    graphs = TrainConfig(cuda_graphs=True)
    assert resolve_cuda_graphs(TrainConfig(), cuda, True, 1) == (False, None)
    assert resolve_cuda_graphs(graphs, cuda, True, 1) == (True, None)
    with pytest.raises(NmtError, match="needs a CUDA device"):
        resolve_cuda_graphs(graphs, cpu, False, 1)
    with pytest.raises(NmtError, match="one process only"):
        resolve_cuda_graphs(graphs, cuda, True, 2)
    with pytest.raises(NmtError, match="set train.compile to auto or true"):
        resolve_cuda_graphs(TrainConfig(cuda_graphs=True, compile=False), cuda, False, 1)
    on, note = resolve_cuda_graphs(graphs, cuda, False, 1)  # auto compile turned off (a short run)
    assert not on and "the step is not compiled" in note


def test_under_cuda_graphs_each_epoch_says_its_shapes_how_many_are_new_and_its_padding(tmp_path):
    """What each shape costs the first time (an eager pass, then a recording) is said per epoch:
    the shapes of its passes as the step collates them, those the run had not met, the padding."""
    trainer = Trainer(prepared_tiny(tmp_path, "train.update_freq=2", "train.max_tokens=128", "train.micro_batches=1",
                                    *QUIET))
    trainer.update.shape_buckets = True  # as under train.cuda_graphs on a GPU: an update in one pass
    lines: list[str] = []
    trainer.log = lines.append
    met, said = set(), []
    for epoch in (0, 1):
        trainer.progress.epoch = epoch
        batches = trainer._epoch_batches()
        collated = [trainer.update._collate(trainer.train_data, batches[i:i + 2]) for i in range(0, len(batches), 2)]
        shapes = {(*b.src.shape, b.tgt_in.size(1)) for b in collated}
        padding = 1 - sum(b.n_tgt_tokens for b in collated) / sum(len(b.out_positions) for b in collated)
        said.append(f"CUDA graphs: epoch {epoch + 1}'s {len(collated)} passes take {len(shapes)} shapes, "
                    f"{len(shapes - met)} new to this process (a new shape's first pass runs eagerly, its second is recorded); "
                    f"{100 * padding:.1f} % of target positions are padding")
        met |= shapes
    assert lines == said and len(met) > 1
    assert f"{len(met)} new" in said[0] and " 0 new" in said[1]  # the tiny corpus's epochs meet the same shapes
