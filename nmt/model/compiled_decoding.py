"""decode.compile: the decoder layers of each decoding step compiled by torch.compile (inductor).

A step of a small model on a CPU is mostly the cost of its operator calls, not of their
arithmetic: the demo's model (4 layers, 128 wide) calls about 200 operators per step. Compiled,
the layer norms, residual additions, attention softmaxes and each cache's gather and append are
fused into a few C++ kernels around the matrix products, which stay with MKL. Measured on 2
cores (`make bench-decode-compile`): requests of 1 line to a model of the demo's shape 0.80 of the
eager latency, of 4 lines 0.83, a file of 400 lines 0.92 of the time, the same outputs
(docs/serving.md, "Compiled decoding steps").

What is compiled: `Transformer.step_layers`, the decoder layers and the final norm. The embedding,
the output layer (a shortlist's too) and the search's rules stay eager. A batch's first
MIN_PAST steps run eagerly: the first has no past, and a past of one position would be a graph of
its own (torch specializes dimensions of size 1).

Shapes: rows, sentences, source length and past length are symbols (marked dynamic at every
call), heads, head size and width constants; the past's rows before the search's reorder are
read by index only, an unbacked symbol, so that no size of theirs makes a graph. A batch of one
sentence and one row (greedy search) still get graphs of their own: a process compiles four (one
sentence or several, by beams or by one row each), about a minute on 2 cores the first time and
13 s from torch's on-disk cache after that. A server compiles them before it takes requests
(nmt.decode.warm_up).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from nmt.errors import NmtError
from nmt.model.compiler import compile_settings, compile_smoke_test, failure_reason

# A Transformer and its DecoderState (nmt.model.transformer, which imports this module).
DecoderState = Any

MIN_PAST = 2  # positions a step's past must hold for the compiled layers to run it

# the backend every compiled step uses; tests set eager or aot_eager (dynamo's trace, and AOT
# autograd's, run by torch's own kernels): the same traces without inductor's C++ compile
BACKEND = "inductor"


class CompiledSteps:
    """One model's decoder layers compiled for decoding steps (`Transformer.step_layers`)."""

    def __init__(self, model: nn.Module):
        # dynamic=False: only the dimensions marked in __call__ are symbols
        self.layers = torch.compile(model.step_layers, dynamic=False, fullgraph=True, backend=BACKEND)

    @staticmethod
    def applies(state: DecoderState) -> bool:
        """Whether the step at `state` runs compiled: its past holds at least MIN_PAST positions."""
        return state.length >= MIN_PAST

    def __call__(self, x: Tensor, state: DecoderState, self_bias: Tensor | None) -> Tensor:
        mark = torch._dynamo.maybe_mark_dynamic
        mark(x, 0)
        in_order = None
        for cache in state.self_cache:
            if cache.rows is None:  # one graph whether or not the search reordered the rows: as
                # DecoderState.select's, one tensor for every layer (a graph holds for one aliasing)
                if in_order is None:
                    in_order = torch.arange(x.size(0), device=x.device)
                cache.rows = in_order
            mark(cache.rows, 0)
            for past in (cache.keys, cache.values):  # rows before the search's reorder: read by index only
                torch._dynamo.decorators.mark_unbacked(past, 0)
                mark(past, 2)
        for keys, values in state.memory_kv:  # keys (B, h, dh, S), values (B, h, S, dh)
            mark(keys, (0, 3))
            mark(values, (0, 2))
        mark(state.src_bias, (0, 3))
        if self_bias is not None:  # relative positions: (1, h, 1, t+1)
            mark(self_bias, 3)
        with compile_settings():
            return self.layers(x, state, self_bias)


def compiled_steps(model: nn.Module) -> CompiledSteps:
    """The model's compiled steps, made on first use and kept with it (compiling happens at the
    first call of each new kind of shape)."""
    if model.compiled_decoding is None:
        model.compiled_decoding = CompiledSteps(model)
    return model.compiled_decoding


_CHECKED: dict[str, str | None] = {}  # device type -> why compiling fails there (None: it works)


def check_compiler(device: torch.device) -> None:
    """NmtError (one line) where torch.compile fails on this machine for `device` (no C compiler,
    no Python headers, no triton); checked once per process and device type."""
    if device.type not in _CHECKED:
        try:
            compile_smoke_test(device, BACKEND)
            _CHECKED[device.type] = None
        except Exception as e:  # any failure of the compiler stack
            _CHECKED[device.type] = failure_reason(e)
    if _CHECKED[device.type] is not None:
        raise NmtError(f"decode.compile=true, but torch.compile fails on this machine ({_CHECKED[device.type]}); "
                       "set decode.compile=false to decode eagerly")
