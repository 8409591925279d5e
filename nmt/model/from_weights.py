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

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import torch
from torch import Tensor

from nmt.config import ModelConfig
from nmt.errors import NmtError
from nmt.model.transformer import PositionalEncoding, Transformer


def transformer_from_weights(cfg: ModelConfig, src_vocab_size: int, tgt_vocab_size: int,
                             weights: dict[str, Tensor], source: Path | None = None) -> Transformer:
    """The Transformer of `cfg` whose parameters are the tensors of `weights` (a whole state dict,
    as `load_state_dict(strict=True)` takes it), cast to the model's dtype where stored in another.
    The model and `weights` then share their tensors. Weights that are not those of `cfg`'s model
    (a name missing or left over, a shape that differs) are a one-line NmtError naming `source`."""
    with torch.device("meta"), _initialisers_skipped():
        model = Transformer(cfg, src_vocab_size, tgt_vocab_size)
    _check_names(model, weights, source)
    dtypes = {name: t.dtype for name, t in model.state_dict().items()}
    cast = {name: t.to(dtypes[name]) if name in dtypes else t for name, t in weights.items()}
    try:
        model.load_state_dict(cast, strict=True, assign=True)
    except RuntimeError as e:  # shapes that differ: torch lists them, a line each, after a heading
        details = [line.strip() for line in str(e).splitlines()[1:] if line.strip()]
        raise NmtError(f"{_named(source)}: the weights do not fit the recipe's model section "
                       f"({details[0] if details else str(e).strip()})") from None
    _tables_remade(model, torch.device("cpu"))  # buffers no state dict holds
    unset = [name for name, t in [*model.named_parameters(), *model.named_buffers()] if t.is_meta]
    if unset:  # a tensor the state dict does not hold, made in __init__ on the meta device
        raise RuntimeError(f"transformer_from_weights: {', '.join(unset)} not set by the weights")
    return model


def check_weights(cfg: ModelConfig, weights: Mapping[str, Tensor], source: Path | None = None) -> None:
    """A one-line NmtError naming `source` where `weights` lack a parameter of `cfg`'s Transformer
    or hold one it does not have: a checkpoint whose recipe was edited by hand, or whose weights
    are another model's. For readers that take the weights by name without building the model
    (the CTranslate2 and transformers exports); transformer_from_weights checks as it builds."""
    with torch.device("meta"), _initialisers_skipped():
        model = Transformer(cfg, _rows(weights, "src_embed.tokens.weight"), _rows(weights, "tgt_embed.tokens.weight"))
    _check_names(model, weights, source)


def _rows(weights: Mapping[str, Tensor], name: str) -> int:
    return weights[name].shape[0] if name in weights else 8  # (any size: the names do not depend on it)


def _check_names(model: Transformer, weights: Mapping[str, Tensor], source: Path | None) -> None:
    expected = model.state_dict().keys()
    missing, extra = [n for n in expected if n not in weights], [n for n in weights if n not in expected]
    if missing or extra:
        parts = [f"{what} {len(names)} ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})"
                 for what, names in (("it lacks", missing), ("it has no place for", extra)) if names]
        raise NmtError(f"{_named(source)}: the weights do not fit the recipe's model section: {'; '.join(parts)}")


def _named(source: Path | None) -> str:
    return str(source) if source is not None else "the weights"


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
