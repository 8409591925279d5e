"""train.freeze: the parts named stay exactly as they were while the rest trains (compared tensor
by tensor), the optimizer holds only the rest, and a name that selects nothing is an error."""

from __future__ import annotations

import pytest
import torch

from nmt.checkpoint import open_checkpoint
from nmt.errors import NmtError
from nmt.train.trainer import Trainer, train
from tests.conftest import prepared_tiny

QUIET = ["train.valid_bleu_sentences=0", "train.log_every=50", "train.valid_every=1000", "train.max_steps=6"]


def test_frozen_parts_do_not_change_the_rest_trains_and_unknown_names_are_errors(tmp_path):
    """The run's starting weights (a Trainer of the same recipe and seed starts from the same ones)
    against its last checkpoint, tensor by tensor."""
    recipe = prepared_tiny(tmp_path, *QUIET, "train.freeze=[embeddings, encoder, decoder_layers.0]")
    unknown = recipe.train.model_copy(update={"freeze": ["encoders"]})
    with pytest.raises(NmtError, match="train.freeze: 'encoders' names no parameter"):
        Trainer(recipe.model_copy(update={"train": unknown}))
    start = Trainer(recipe)
    before = {name: p.detach().clone() for name, p in start.model.named_parameters()}
    train(recipe, show_progress=False)
    weights = open_checkpoint(recipe.out / "checkpoints" / "last.pt").weights
    frozen = [n for n in before if n.startswith(("src_embed.", "tgt_embed.", "encoder_layers.", "encoder_norm.",
                                                  "decoder_layers.0."))]
    trained = [n for n in before if n not in frozen]
    assert frozen and trained
    assert all(torch.equal(weights[n], before[n]) for n in frozen)
    assert all(not torch.equal(weights[n], before[n]) for n in trained)
    assert sum(p.numel() for p in start.update.parameters) == sum(before[n].numel() for n in trained)
