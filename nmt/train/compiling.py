"""torch.compile for the training step: whether a run compiles (`train.compile`), how, and the
check that compiling works on this machine before a run relies on it.

`train.compile: auto` (the default) compiles on CUDA for runs long enough to pay back the
compile (a cold compile of the base model's step took 100 s on an H200, and the compiled update
was twice as fast as the eager one: docs/gpu.md), and never on a CPU, where the compiled step is
slower than the eager one. Where torch.compile does not work (no C compiler, no Python headers,
no triton), `auto` trains eagerly and says why; `true` is then an error.
"""

from __future__ import annotations

import torch

from nmt.config import TrainConfig
from nmt.errors import NmtError
from nmt.model.compiler import compile_smoke_test, failure_reason

# `auto` compiles a run only when it is at least this long: shorter runs would spend a large
# part of their time compiling.
MIN_STEPS_TO_COMPILE = 5_000
MIN_MINUTES_TO_COMPILE = 10.0


def compile_model(forward: torch.nn.Module, backend: str = "inductor", cuda_graphs: bool = False,
                  dynamic: bool = True) -> torch.nn.Module:
    """torch.compile with dynamic shapes: batch size and lengths are symbols, so a run's varying
    batch shapes share one graph instead of recompiling for each (see docs/gpu.md). With
    `cuda_graphs`, mode reduce-overhead: each new shape's kernels are recorded once into a CUDA
    graph and replayed (one per shape bucket). `dynamic=False` where every pass has one shape
    (packed rows under CUDA graphs): kernels specialized to it. Run the compiled module's calls
    inside `nmt.model.compiler.compile_settings()`."""
    if cuda_graphs:
        return torch.compile(forward, dynamic=dynamic, backend=backend, mode="reduce-overhead")
    return torch.compile(forward, dynamic=dynamic, backend=backend)


def long_enough_to_compile(cfg: TrainConfig) -> bool:
    """Whether the run's budget pays back a compile: enough updates, and no short time limit."""
    return cfg.max_steps >= MIN_STEPS_TO_COMPILE and not 0 < cfg.max_minutes < MIN_MINUTES_TO_COMPILE


def resolve_compile(cfg: TrainConfig, device: torch.device,
                    smoke_test=compile_smoke_test) -> tuple[bool, str | None]:
    """Whether this run compiles its step, and a note for the log saying why where that is not
    plain from the recipe. `train.compile: true` where compiling fails is an error."""
    if cfg.compile is False:
        return False, None
    if cfg.compile == "auto" and device.type != "cuda":
        return False, None
    if cfg.compile == "auto" and not long_enough_to_compile(cfg):
        return False, (f"train.compile auto: eager, the run is too short to pay back a compile "
                       f"(compiled from {MIN_STEPS_TO_COMPILE:,} updates and {MIN_MINUTES_TO_COMPILE:g} minutes)")
    try:
        smoke_test(device)
    except Exception as e:  # any failure of the compiler stack: the run can still train eagerly
        reason = failure_reason(e)
        if cfg.compile is True:
            raise NmtError(f"train.compile=true, but torch.compile fails on this machine ({reason}); "
                           "use train.compile=auto or false to train eagerly") from None
        return False, f"train.compile auto: eager, torch.compile fails on this machine ({reason})"
    if device.type == "cpu":  # asked for: compiled, but said what it costs there
        return True, ("train.compile=true on a CPU: about a minute of compiling, then 0.81-0.9 of eager's updates "
                      "per second where measured (docs/gpu.md); compiling pays on GPUs")
    return True, None if cfg.compile is True else "train.compile auto: the training step is compiled"


def resolve_cuda_graphs(cfg: TrainConfig, device: torch.device, compiled: bool, processes: int) -> tuple[bool, str | None]:
    """Whether the compiled step replays CUDA graphs (train.cuda_graphs), and a note where an
    automatic choice turned it off. Asked for where it cannot run: an error naming why."""
    if not cfg.cuda_graphs:
        return False, None
    if device.type != "cuda":
        raise NmtError(f"train.cuda_graphs=true needs a CUDA device (this run trains on {device})")
    if processes > 1:
        raise NmtError("train.cuda_graphs=true runs in one process only; set it to false under torchrun")
    if not compiled and cfg.compile is False:
        raise NmtError("train.cuda_graphs=true needs the compiled step: set train.compile to auto or true")
    if not compiled:
        return False, "train.cuda_graphs: off, the step is not compiled (see train.compile above)"
    return True, None
