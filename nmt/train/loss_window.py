"""The window the training loss and speed of a log line are summed over."""

from __future__ import annotations

import time

import torch


class LossWindow:
    """The training loss and target tokens since the last log line. The loss stays on the device
    until it is read, so that updates in between never wait for it."""

    def __init__(self, device: torch.device):
        self.loss = torch.zeros((), dtype=torch.float64, device=device)  # this rank's
        self.alignment_loss: torch.Tensor | None = None  # guided alignment's, once one is added
        self.last_alignment_loss: float | None = None  # summed over ranks, at the last read
        self.tokens = 0  # all ranks' (every rank knows them)
        self.flops = 0.0  # the model FLOPs of all ranks' updates, where the run measures MFU
        self.last_flops = 0.0  # at the last read
        self.start = time.perf_counter()

    def add(self, loss: torch.Tensor, tokens: int, alignment_loss: torch.Tensor | None = None,
            flops: float = 0.0) -> None:
        self.loss += loss
        self.tokens += tokens
        self.flops += flops
        if alignment_loss is not None:
            self.alignment_loss = alignment_loss.double() if self.alignment_loss is None else self.alignment_loss + alignment_loss

    def restart(self) -> None:
        self.start = time.perf_counter()

    def read(self, world) -> tuple[float, int, float]:
        """(loss summed over ranks, tokens, seconds) since the last read; starts a new window."""
        result = float(world.sum(self.loss.clone())), self.tokens, time.perf_counter() - self.start
        self.loss.zero_()
        if self.alignment_loss is not None:  # every rank trains guided or none does
            self.last_alignment_loss = float(world.sum(self.alignment_loss))
            self.alignment_loss = None
        self.tokens = 0
        self.last_flops, self.flops = self.flops, 0.0
        self.restart()
        return result
