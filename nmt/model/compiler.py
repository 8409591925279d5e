"""torch.compile as nmt uses it, for training steps (nmt.train.compiling) and decoding steps
(nmt.model.compiled_decoding): the settings a compiled call runs under, and the check that
compiling works on this machine before a run relies on it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch.fx.experimental import _config as shape_config


@contextlib.contextmanager
def compile_settings() -> Iterator[None]:
    """Floats (the embedding scale, label smoothing, dropout rates) traced as the constants they
    are in a run. As symbols, torch specializes them only after tracing the whole model to its
    joint graph, then traces it all again: one wasted trace, seconds on every compile.

    And every dimension its own symbol. By default ("duck sizing") dimensions of equal size in
    the first call share one, so a first batch whose target length equals its batch size or its
    source length compiled a graph for that equality, and the first batch without it compiled
    the step again (on a GPU: a minute, and a host sync inside an update).

    Set and restored by hand: the configs' own `patch` took 0.5 ms a call, a third of a decoding
    step of a small model on a CPU; this takes 9 µs."""
    dynamo_config = torch._dynamo.config
    before = dynamo_config.specialize_float, shape_config.use_duck_shape
    dynamo_config.specialize_float, shape_config.use_duck_shape = True, False
    try:
        yield
    finally:
        dynamo_config.specialize_float, shape_config.use_duck_shape = before


def compile_smoke_test(device: torch.device, backend: str = "inductor") -> None:
    """A small module compiled with dynamic shapes, run at two sizes against eager: raises
    whatever makes torch.compile fail on this machine (no C compiler, no Python headers, no triton)."""
    generator = torch.Generator().manual_seed(0)
    layer = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16))
    with torch.no_grad():
        for parameter in layer.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator))
    layer = layer.to(device)
    compiled = torch.compile(layer, dynamic=True, backend=backend)
    for rows in (5, 8):
        x = torch.randn(rows, 16, generator=generator).to(device)
        with torch.no_grad(), compile_settings():
            if not torch.allclose(compiled(x), layer(x), rtol=1e-4, atol=1e-5):
                raise RuntimeError("the compiled output differs from eager")


def failure_reason(error: Exception) -> str:
    """An exception of the compiler stack in one line: its type and the first line of its text."""
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"
