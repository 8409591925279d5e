"""The device and the CPU threads a command runs on, from what the user wrote: a name torch cannot
read, a device this machine lacks, or a negative number of threads is a one-line error naming
the option, before anything loads. And a GPU's datasheet peak, which MFU is measured against."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from nmt.errors import NmtError

if TYPE_CHECKING:
    import torch


def resolve_device(name: str, option: str = "--device") -> torch.device:
    """`name` (cpu, cuda, cuda:1, mps, or auto: CUDA where there is one) as a torch device that
    exists here; `option` names the setting in errors (--device, train.device)."""
    import torch  # here, not above: `nmt score` checks --threads without a second of torch's import

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


def check_threads(threads: int, option: str = "--threads") -> None:
    if threads < 0:
        raise NmtError(f"{option} {threads}: a number of threads (0: torch's default)")


def use_threads(threads: int, option: str = "--threads") -> None:
    """torch's CPU threads: `threads`, or torch's default for 0."""
    check_threads(threads, option)
    if threads:
        import torch

        torch.set_num_threads(threads)


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity, e.g. under taskset or a container's
    cpuset), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def datasheet_bf16_tflops(device_name: str) -> tuple[float | None, str]:
    """NVIDIA's bf16 dense peak (TFLOP/s, no sparsity) for a device name as torch reports it, and
    the model it was read as; (None, "unknown") for a device not listed: never a guess."""
    name = device_name.upper()
    for pattern, model, peak in (
        (r"H100.*NVL", "H100 NVL", 835.0), (r"H100.*PCIE", "H100 PCIe", 756.0),
        (r"H100.*(SXM|HBM3)", "H100 SXM", 989.0), (r"H200.*NVL", "H200 NVL", 835.0), (r"H200", "H200 SXM", 989.0),
        (r"A100", "A100", 312.0),
    ):
        if re.search(pattern, name):
            return peak, model
    return None, "unknown"
