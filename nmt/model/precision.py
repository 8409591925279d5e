"""Numeric precision on a device, set for the code that needs it and restored after: autocast for
bf16/fp16, and TF32 (fp32 matmuls on tensor cores) as a scoped switch rather than a process-wide
flag, so that a training run's TF32 never leaks into a later fp32 comparison or decode."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

AUTOCAST_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def autocast(device: torch.device, precision: str) -> contextlib.AbstractContextManager:
    """Autocast to `precision` (bf16, fp16) on `device`; fp32 runs as it is."""
    if precision not in AUTOCAST_DTYPES:
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=AUTOCAST_DTYPES[precision])


@contextlib.contextmanager
def tf32(device: torch.device, enabled: bool) -> Iterator[None]:
    """TF32 on (or off) for CUDA fp32 matmuls and convolutions inside the block; the process's
    previous setting afterwards. Nothing changes on other devices."""
    if device.type != "cuda":
        yield
        return
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
