"""The device and the CPU threads a command runs on, from what the user wrote: a name torch cannot
read, a device this machine lacks, or a negative number of threads is a one-line error naming
the option, before anything loads."""

from __future__ import annotations

import torch

from nmt.errors import NmtError


def resolve_device(name: str, option: str = "--device") -> torch.device:
    """`name` (cpu, cuda, cuda:1, mps, or auto: CUDA where there is one) as a torch device that
    exists here; `option` names the setting in errors (--device, train.device)."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        raise NmtError(f"{option} {name}: not a device (cpu, cuda, cuda:1, ..., or auto)") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise NmtError(f"{option} {name}: CUDA is not available on this machine")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise NmtError(f"{option} {name}: this machine has {torch.cuda.device_count()} CUDA device(s), "
                           "numbered from 0")
    elif device.type == "mps":
        if not torch.backends.mps.is_available():
            raise NmtError(f"{option} {name}: Apple's MPS is not available on this machine")
    elif device.type != "cpu":
        raise NmtError(f"{option} {name}: nmt runs on cpu, cuda or mps")
    return device


def use_threads(threads: int, option: str = "--threads") -> None:
    """torch's CPU threads: `threads`, or torch's default for 0."""
    if threads < 0:
        raise NmtError(f"{option} {threads}: a number of threads (0: torch's default)")
    if threads:
        torch.set_num_threads(threads)
