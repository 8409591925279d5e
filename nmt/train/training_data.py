"""What a run trains and validates on: the prepared pairs (and their sampled segmentations, one
per epoch in turn), the size of each corpus when there are several, the dev sets; and each
epoch's batches, a pure function of the seed and the epoch."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nmt.config import Recipe, TrainConfig
from nmt.data.batching import epoch_batches
from nmt.data.packing import packed_epoch_batches, packed_rows_per_batch
from nmt.data.prepare import corpus_sizes, data_dir, dropped_reasons
from nmt.data.sampling import epoch_selection
from nmt.data.shards import ParallelShards, Shard
from nmt.data.tokenizer import load_processor, require_tokenizer, tokenizer_paths
from nmt.data.word_alignments import ALIGN_SPLIT, PieceWords, alignment_targets
from nmt.errors import NmtError
from nmt.files import cached_record
from nmt.train.validate import valid_sets


def check_prepared(recipe: Recipe) -> None:
    """What `nmt tokenizer` and `nmt prepare` leave for a run: its tokenizer models and its prepared
    data, or the one-line error naming the step to run. `nmt train --nproc` checks them before it
    starts its processes, each of which would say the same."""
    for path in dict.fromkeys(tokenizer_paths(recipe.out, recipe.tokenizer.joint)):
        require_tokenizer(path)
    _require_prepared(data_dir(recipe.out))


def _require_prepared(shards) -> None:
    if not (shards / "train.src.idx").is_file():
        raise NmtError(f"{shards}: no prepared data (run `nmt prepare` first)")
    if not (shards / "report.json").is_file():  # written last: the splits after train are incomplete
        raise NmtError(f"{shards}: `nmt prepare` did not finish (run it again)")


class TrainingData:
    def __init__(self, recipe: Recipe):
        self.recipe = recipe
        shards, data = data_dir(recipe.out), recipe.data
        _require_prepared(shards)
        self.pairs = ParallelShards(shards, "train", data.forced_target_tokens)
        self.corpus_sizes = corpus_sizes(recipe.out)  # None: one training corpus
        if self.corpus_sizes and len(self.corpus_sizes) != len(data.corpora()):
            raise NmtError(f"{shards}: prepared from {len(self.corpus_sizes)} corpora, but data.train lists "
                           f"{len(data.corpora())} (run `nmt prepare` again)")
        self.samples = []  # subword regularization: one sampled segmentation per epoch, in turn
        if data.subword_sampling_alpha > 0:
            names = [f"train.s{k}" for k in range(data.subword_samples)]
            if not all((shards / f"{name}.src.idx").is_file() for name in names):
                raise NmtError(f"{shards}: no sampled segmentations for data.subword_sampling_alpha "
                               "(run `nmt prepare` again)")
            self.samples = [ParallelShards(shards, name, data.forced_target_tokens) for name in names]
        if len(self.pairs) == 0:
            raise NmtError(f"{shards}: the training split is empty after cleaning{_why_dropped(shards)}")
        longest = int(max(self.pairs.src.lengths.max(), self.pairs.tgt.lengths.max()))
        if longest + 1 > recipe.model.max_positions:  # its EOS (or BOS) takes a position too
            raise NmtError(f"{shards}: a prepared sentence has {longest} pieces, more than model.max_positions "
                           f"({recipe.model.max_positions}) holds; set data.max_tokens_per_sentence to at most "
                           f"{recipe.model.max_positions - 1} and run `nmt prepare` again")
        if recipe.train.pack_width and longest + 1 > recipe.train.pack_width:
            raise NmtError(f"{shards}: a prepared pair takes {longest + 1} positions, more than train.pack_width "
                           f"({recipe.train.pack_width}) holds; set pack_width to at least {-(-(longest + 1) // 8) * 8}")
        self.valid_sets = valid_sets(recipe, shards)
        self.alignments = self.piece_words = None  # guided alignment: each pair's word links
        if recipe.train.guided_alignment.active:
            if not (shards / f"{ALIGN_SPLIT}.idx").is_file():
                raise NmtError(f"{shards}: no word alignments for train.guided_alignment "
                               "(set data.word_alignments and run `nmt prepare` again)")
            self.alignments = Shard(shards / ALIGN_SPLIT)
            if len(self.alignments) != len(self.pairs):
                raise NmtError(f"{shards}: {ALIGN_SPLIT} and the training pairs differ in number (run `nmt prepare` again)")
            src_model, tgt_model = tokenizer_paths(recipe.out, recipe.tokenizer.joint)
            by_rules = recipe.data.word_alignments == "dice"  # the words dice's links number (a file's: spaces)
            self.piece_words = tuple(PieceWords(load_processor(model), by_rules) for model in (src_model, tgt_model))

    def alignment_targets(self, pairs: ParallelShards, indices: np.ndarray, shape: tuple[int, int, int],
                          places: np.ndarray | None = None):
        """The guided-attention targets (B, T, S) of the batch of `pairs` rows `indices`, collated
        to `shape`, or packed at `places` (nmt.data.word_alignments.alignment_targets)."""
        return alignment_targets([pairs.src[i] for i in indices], [pairs.tgt[i] for i in indices],
                                 [self.alignments[i] for i in indices], *self.piece_words, shape, places)

    def epoch(self, epoch: int) -> tuple[ParallelShards, list[np.ndarray]]:
        """The pairs of `epoch` (its segmentation sample, if any) and its batches."""
        data, train = self.recipe.data, self.recipe.train
        pairs = self.samples[epoch % len(self.samples)] if self.samples else self.pairs
        selection = None
        if self.corpus_sizes:  # several corpora: this epoch's draw from each (nmt.data.sampling)
            selection = epoch_selection(self.corpus_sizes, [c.weight for c in data.corpora()],
                                        data.sampling_temperature, train.seed, epoch)
        return pairs, run_epoch_batches(pairs, train, epoch, selection)


def _why_dropped(shards: Path) -> str:
    """The training pairs' reasons for being dropped, as prepare's report counts them, to say."""
    dropped = cached_record(shards / "report.json").get("splits", {}).get("train", {}).get("dropped")
    return f" (dropped: {dropped_reasons(dropped)})" if dropped else ""


def run_epoch_batches(pairs: ParallelShards, train: TrainConfig, epoch: int, selection: np.ndarray | None = None
                      ) -> list[np.ndarray]:
    """An epoch's batches as the run's settings cut them: packed (train.pack_width), in shape
    buckets (train.cuda_graphs) or plain; a pure function of the seed and the epoch."""
    if train.pack_width:
        rows = packed_rows_per_batch(train.max_tokens, train.pack_width)
        return packed_epoch_batches(pairs, train.pack_width, rows, train.seed, epoch, selection)
    return epoch_batches(pairs, train.max_tokens, train.seed, epoch, selection=selection,
                         group=train.update_freq, bucketed=train.cuda_graphs)
