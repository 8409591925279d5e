"""A Transformer built around weights one already holds (a checkpoint's, an import's), without
initialising random ones first.

`Transformer(cfg, ...)` followed by `load_state_dict` holds every weight twice for a moment (the
random ones and the given ones) and spends seconds per billion parameters drawing the random
ones. Built on the meta device and given the tensors themselves (`assign=True`), the model costs
its weights' memory once: what lets a 3-billion-parameter import or translation fit in memory
that holds the model once or twice but not three times.

A run whose every weight is loaded next (a fine-tune, which starts from its parent, or a run
resumed from its own checkpoint) gets its model from `unfilled_transformer`: built where it runs,
its weights allocated but not drawn."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import Tensor

from nmt.config import ModelConfig
from nmt.model.transformer import PositionalEncoding, Transformer


def transformer_from_weights(cfg: ModelConfig, src_vocab_size: int, tgt_vocab_size: int,
                             weights: dict[str, Tensor]) -> Transformer:
    """The Transformer of `cfg` whose parameters are the tensors of `weights` (a whole state dict,
    as `load_state_dict(strict=True)` takes it; a key missing or left over raises as it does), cast
    to the model's dtype where stored in another. The model and `weights` then share their tensors."""
    with torch.device("meta"), _initialisers_skipped():
        model = Transformer(cfg, src_vocab_size, tgt_vocab_size)
    dtypes = {name: t.dtype for name, t in model.state_dict().items()}
    cast = {name: t.to(dtypes[name]) if name in dtypes else t for name, t in weights.items()}
    model.load_state_dict(cast, strict=True, assign=True)
    _tables_remade(model, torch.device("cpu"))  # buffers no state dict holds
    unset = [name for name, t in [*model.named_parameters(), *model.named_buffers()] if t.is_meta]
    if unset:  # a tensor the state dict does not hold, made in __init__ on the meta device
        raise RuntimeError(f"transformer_from_weights: {', '.join(unset)} not set by the weights")
    return model


def unfilled_transformer(cfg: ModelConfig, src_vocab_size: int, tgt_vocab_size: int,
                         device: torch.device) -> Transformer:
    """The Transformer of `cfg` on `device` with its parameters and persistent buffers allocated
    there but not filled (torch.empty: whatever the memory held), for a caller that loads every one
    of them next (`load_state_dict`, which reports any it does not). No random weight is drawn,
    which costs about 8 ns per parameter on a CPU (half a minute for NLLB-200 3.3B), and on a GPU
    the model is never held in host memory. Nothing the state dict leaves out is left unset:
    the sinusoid tables are computed as `Transformer(...)` computes them, on the CPU."""
    with torch.device("meta"), _initialisers_skipped():
        model = Transformer(cfg, src_vocab_size, tgt_vocab_size)
    model.to_empty(device=device)
    _tables_remade(model, device)
    return model


def _tables_remade(model: Transformer, device: torch.device) -> None:
    """The sinusoid tables of a model built on the meta device, which no state dict holds, computed
    on the CPU (bit for bit those of a model built there) and put on `device`."""
    for module in model.modules():
        if isinstance(module, PositionalEncoding):
            module.remake_table(torch.device("cpu"))
            module.table = module.table.to(device)


@contextmanager
def _initialisers_skipped() -> Iterator[None]:
    """torch.nn.init's functions as no-ops for a while, as transformers' `no_init_weights` does: a
    meta tensor has nothing to fill, and `normal_` on one imports torch._dynamo, a second of start-up
    for every `nmt translate`."""
    names = [name for name in vars(torch.nn.init) if name.endswith("_") and not name.startswith("_")]
    originals = {name: getattr(torch.nn.init, name) for name in names}
    try:
        for name in names:
            setattr(torch.nn.init, name, lambda tensor, *args, **kwargs: tensor)
        yield
    finally:
        for name, function in originals.items():
            setattr(torch.nn.init, name, function)
