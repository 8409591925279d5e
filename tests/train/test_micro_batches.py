"""An update's batches in fewer, larger passes (train.micro_batches): the batches an epoch groups
into updates, how they merge, the same loss and gradients merged or split, and the retry with
more passes when the device runs out of memory."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nmt.data.batching import epoch_batches, pack_by_tokens
from nmt.data.shards import ParallelShards
from nmt.errors import NmtError
from nmt.train import step as step_module
from nmt.train.micro_batches import initial_micro_batches, merge, rank_passes
from nmt.train.trainer import Trainer
from tests.conftest import assert_same_gradients, prepared_tiny

QUIET = ["train.valid_bleu_sentences=0", "train.log_every=5", "train.valid_every=1000"]


def test_an_epochs_batches_without_groups_are_its_packed_batches_shuffled(tmp_path):
    """group=1 (update_freq 1, every Multi30k recipe): the packing of the length-sorted pairs, its
    batches in a random order drawn from the same generator as before groups existed."""
    data = ParallelShards(prepared_tiny(tmp_path).out / "data", "train")
    src_len, tgt_len = data.src.lengths + 1, data.tgt.lengths + 1
    rng = np.random.default_rng([3, 0])
    perm = rng.permutation(len(data))
    packed = pack_by_tokens(perm[np.lexsort((src_len[perm], tgt_len[perm]))], np.maximum(src_len, tgt_len), 128)
    expected = [packed[i].tolist() for i in rng.permutation(len(packed))]
    assert [b.tolist() for b in epoch_batches(data, 128, seed=3, epoch=0)] == expected


def test_an_updates_batches_are_neighbours_in_length_and_every_pair_comes_once(tmp_path):
    data = ParallelShards(prepared_tiny(tmp_path).out / "data", "train")
    packed = [b.tolist() for b in epoch_batches(data, 128, seed=3, epoch=0, group=1)]
    grouped = [b.tolist() for b in epoch_batches(data, 128, seed=3, epoch=0, group=3)]
    assert sorted(map(sorted, grouped)) == sorted(map(sorted, packed))  # the same batches, reordered
    assert sorted(np.concatenate(grouped).tolist()) == list(range(len(data)))
    full, longest = len(grouped) // 3, [int(data.tgt.lengths[b].max()) for b in grouped]
    assert len(grouped) % 3 != 0  # the tiny corpus leaves a short last group
    # Every run of 3 is 3 consecutive batches of the length-sorted packing, the runs in a shuffled
    # order, and the short run (the longest sentences) last.
    for run in range(full):
        assert longest[run * 3:run * 3 + 3] == sorted(longest[run * 3:run * 3 + 3])
    starts = longest[0:full * 3:3]
    assert starts != sorted(starts)
    assert min(longest[full * 3:]) >= max(longest[:full * 3])


def test_merge_by_hand():
    a, b, c, d, e = (np.array([i]) for i in range(5))
    assert [m.tolist() for m in merge([a, b, c, d, e], 2)] == [[0, 1, 2], [3, 4]]
    assert [m.tolist() for m in merge([a, b, c, d, e], 5)] == [[0], [1], [2], [3], [4]]
    assert [m.tolist() for m in merge([a, b, c], 9)] == [[0], [1], [2]]  # never more passes than batches
    assert [m.tolist() for m in merge([a, b, c], 1)] == [[0, 1, 2]]
    assert initial_micro_batches("auto", torch.device("cuda"), 4) == 1
    assert initial_micro_batches("auto", torch.device("cpu"), 4) == 4
    assert initial_micro_batches(3, torch.device("cpu"), 2) == 2


def update_gradients(trainer: Trainer, group: list[np.ndarray]) -> tuple[float, list[torch.Tensor]]:
    """The update's summed loss and the gradients it stepped with (left in .grad until the next update)."""
    loss, tokens = trainer.train_step(group)
    return float(loss), [p.grad.clone() for p in trainer.model.parameters()]


def test_one_merged_pass_gives_the_split_updates_loss_and_gradients(tmp_path):
    """The update's summed loss and gradients are those of its batches one by one (float
    rounding only: the merged pass pads its shorter rows and sums in another order)."""
    settings = ["train.update_freq=3", "train.max_tokens=128", *QUIET]  # tiny: dropout 0
    split = Trainer(prepared_tiny(tmp_path / "split", *settings, "train.micro_batches=3"))
    merged = Trainer(prepared_tiny(tmp_path / "merged", *settings, "train.micro_batches=1"))
    assert split.update.micro_batches == 3 and merged.update.micro_batches == 1
    merged.model.load_state_dict(split.model.state_dict())
    batches = epoch_batches(split.train_data, 128, 1, 0, group=3)
    group = batches[:3]
    passes = []
    real_forward = merged.update.forward
    merged.update.forward = lambda src, *rest: passes.append(src.size(0)) or real_forward(src, *rest)
    split_loss, split_grads = update_gradients(split, group)
    merged_loss, merged_grads = update_gradients(merged, group)
    assert passes == [sum(len(b) for b in group)]  # one pass with every sentence of the update
    assert merged_loss == pytest.approx(split_loss, rel=1e-5)
    assert_same_gradients(split.model, split_grads, merged_grads)


def test_out_of_memory_retries_the_update_in_more_passes_and_says_so(tmp_path, monkeypatch):
    """`auto` on one process (what a CUDA run starts with: one pass) splits an update that does not
    fit, and keeps the larger count; the retried update equals the split update."""
    monkeypatch.setattr(step_module, "initial_micro_batches", lambda setting, device, batches: 1)
    settings = ["train.update_freq=4", "train.max_tokens=128", *QUIET]
    notes = []
    trainer = Trainer(prepared_tiny(tmp_path / "auto", *settings))
    trainer.update.note = notes.append
    reference = Trainer(prepared_tiny(tmp_path / "split", *settings, "train.micro_batches=4"))
    reference.model.load_state_dict(trainer.model.state_dict())
    group = epoch_batches(trainer.train_data, 128, 1, 0, group=4)[:4]
    fits = max(len(b) for b in group) * 2  # rows of the two largest batches at most
    real_forward = trainer.update.forward

    def limited(src, *rest):
        if src.size(0) > fits:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")
        return real_forward(src, *rest)

    trainer.update.forward = limited
    loss, grads = update_gradients(trainer, group)
    assert trainer.update.micro_batches == 2
    assert notes == ["out of device memory: this update and the next run in 2 passes (train.micro_batches)"]
    reference_loss, reference_grads = update_gradients(reference, group)
    assert loss == pytest.approx(reference_loss, rel=1e-5)
    assert_same_gradients(trainer.model, reference_grads, grads)


def test_out_of_memory_with_a_set_number_of_passes_is_a_clear_error(tmp_path):
    trainer = Trainer(prepared_tiny(tmp_path, "train.update_freq=2", "train.micro_batches=1", *QUIET))
    trainer.update.forward = lambda *args: (_ for _ in ()).throw(torch.OutOfMemoryError("CUDA out of memory"))
    group = epoch_batches(trainer.train_data, 512, 1, 0, group=2)[:2]
    with pytest.raises(NmtError, match=r"1 pass\(es\) per update; set train.micro_batches=2"):
        trainer.train_step(group)
    trainer.update.micro_batches = 2
    with pytest.raises(NmtError, match="one batch of train.max_tokens=512 per pass; lower train.max_tokens"):
        trainer.train_step(group)


def census_of_an_update(tmp_path, passes: int, monkeypatch=None, chunk_elements: int | None = None):
    """The operator census of one bf16 update (after a first one has made Adam's state) of 2 batches in `passes` passes."""
    from nmt.model import output_loss
    from tests.op_census import OperatorCensus

    if chunk_elements is not None:
        monkeypatch.setattr(output_loss, "_CPU_CHUNK_ELEMENTS", chunk_elements)
    trainer = Trainer(prepared_tiny(tmp_path, "train.precision=bf16", "train.update_freq=2", "train.max_tokens=128",
                                    f"train.micro_batches={passes}", *QUIET))
    first, second = (batches := epoch_batches(trainer.train_data, 128, 1, 0, group=2))[:2], batches[2:4]
    trainer.train_step(first)
    with OperatorCensus(trainer.model) as census:
        trainer.train_step(second)
    scored = [sum(int(trainer.train_data.tgt.lengths[i]) + 1 for i in b) for b in second]
    return census, trainer, scored


def test_one_pass_launches_fewer_operators_and_casts_each_weight_once(tmp_path, monkeypatch):
    """CPU proxies of what a GPU's host launches per update: merged into one pass, the update runs
    well under the operators of two passes, and autocast (where no master weights take its place:
    fp16, frozen weights on a CPU) casts each weight once per pass (its cache), never once per use."""
    from nmt.train import step as step_module

    monkeypatch.setattr(step_module, "uses_master_weights", lambda cfg, device: False)
    one, trainer, _ = census_of_an_update(tmp_path / "one", 1)
    two, _, _ = census_of_an_update(tmp_path / "two", 2)
    weights = {name for name, p in trainer.model.named_parameters() if p.dim() == 2}
    assert one.calls < 0.7 * two.calls
    assert set(one.parameter_casts) >= weights  # every matmul weight goes to bf16 (the tied embedding too)
    assert max(one.parameter_casts.values()) == 1 and max(two.parameter_casts.values()) == 2


def test_the_eager_output_layer_never_makes_the_whole_fp32_logits(tmp_path, monkeypatch):
    """With chunks smaller than a pass's tokens (a GPU's 37k vocabulary against its chunk budget),
    no fp32 tensor of (tokens × vocabulary) elements exists in an update; with one chunk, the
    census sees it (so the check can fail)."""
    census, trainer, scored = census_of_an_update(tmp_path / "chunked", 1, monkeypatch, chunk_elements=32 * 160)
    vocabulary = trainer.model.output_weight.size(0)
    assert vocabulary == 160  # the chunk budget above holds 32 rows
    assert census.largest_fp32 < sum(scored) * vocabulary
    whole, _, scored = census_of_an_update(tmp_path / "whole", 1, monkeypatch, chunk_elements=1 << 22)
    assert whole.largest_fp32 >= sum(scored) * vocabulary


def test_sharded_ranks_run_as_many_passes_as_the_busiest_and_the_extra_ones_weigh_nothing():
    """Under FSDP every pass gathers each layer's shards on all ranks, so a rank with fewer batches
    at an epoch's end must still run as many passes (or the ranks wait on each other for ever)."""
    group = [np.array([0, 1]), np.array([2]), np.array([3, 4])]  # 3 batches for 2 ranks
    ranks = [rank_passes(group, rank, 2, passes=2) for rank in (0, 1)]
    assert [len(runs) for runs, _ in ranks] == [2, 1]  # DDP: uneven, it syncs once per update anyway
    runs, weights = rank_passes(group, 1, 2, passes=2, same_count=True)
    assert len(runs) == 2 and weights == [1.0, 0.0] and runs[1] is runs[0]
    assert rank_passes(group, 0, 2, passes=2, same_count=True) == ranks[0]
    empty_runs, empty_weights = rank_passes(group[:1], 1, 2, passes=1, same_count=True)  # no batch of its own
    assert empty_weights == [0.0] and empty_runs == [[group[0]]]
