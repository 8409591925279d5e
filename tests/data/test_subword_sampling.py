"""Subword regularization: `nmt prepare` writes sampled segmentations of the training split,
and training reads one per epoch, in turn."""

from __future__ import annotations

from tests.conftest import prepared_tiny
from nmt.data.prepare import data_dir, prepare
from nmt.data.shards import ParallelShards
from nmt.data.tokenizer import load_processor, tokenizer_paths


def shard_bytes(folder) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("train*"))}


def test_samples_keep_the_text_and_differ_in_segmentation(tmp_path):
    recipe = prepared_tiny(tmp_path, "data.subword_sampling_alpha=0.3", "data.subword_samples=3")
    folder = data_dir(recipe.out)
    sp = load_processor(tokenizer_paths(recipe.out, True)[0])
    plain = ParallelShards(folder, "train")
    samples = [ParallelShards(folder, f"train.s{k}") for k in range(3)]
    for sample in samples:
        assert len(sample) == len(plain) > 0
        for side in ("src", "tgt"):
            ours, theirs = getattr(plain, side), getattr(sample, side)
            for i in range(len(plain)):  # the same sentence, segmented otherwise
                assert sp.decode(theirs[i].tolist()) == sp.decode(ours[i].tolist())
        assert sum(sample.src.lengths) > sum(plain.src.lengths)  # dropped merges: more, shorter pieces
    for side in ("src", "tgt"):  # each sample is a segmentation of its own, not one drawn three times
        for a in range(3):
            for b in range(a + 1, 3):
                ours, theirs = getattr(samples[a], side), getattr(samples[b], side)
                differing = sum(ours[i].tolist() != theirs[i].tolist() for i in range(len(plain)))
                assert differing > len(plain) // 2, (side, a, b, differing)

    before = shard_bytes(folder)  # same inputs, same samples
    (folder / "report.json").unlink()
    prepare(recipe.data, recipe.tokenizer, recipe.out)
    assert shard_bytes(folder) == before


def test_turning_sampling_off_removes_the_samples(tmp_path):
    recipe = prepared_tiny(tmp_path, "data.subword_sampling_alpha=0.3", "data.subword_samples=2")
    assert (data_dir(recipe.out) / "train.s1.src.idx").is_file()
    off = prepared_tiny(tmp_path)
    assert not list(data_dir(off.out).glob("train.s[0-9]*"))


def test_training_reads_one_sample_per_epoch(tmp_path):
    from nmt.train.trainer import Trainer

    recipe = prepared_tiny(tmp_path, "data.subword_sampling_alpha=0.3", "data.subword_samples=2",
                           "train.max_epochs=3", "train.max_steps=1000", "train.valid_every=1000")
    trainer = Trainer(recipe)
    seen = []
    original = trainer.train_step

    def spy(group):
        seen.append((trainer.progress.epoch, trainer.train_data))
        return original(group)

    trainer.train_step = spy
    trainer.run(show_progress=False)
    by_epoch = {epoch: data for epoch, data in seen}
    assert sorted(by_epoch) == [0, 1, 2]
    assert by_epoch[0] is trainer.data.samples[0] and by_epoch[1] is trainer.data.samples[1]
    assert by_epoch[2] is trainer.data.samples[0]
