"""An exponential moving average of the trained weights (train.ema_decay; Polyak averaging, as
Marian's --exponential-smoothing and fairseq's --ema-decay keep one).

After update t the average moves towards the weights by 1 - d_t, with d_t = min(decay,
(1 + t) / (10 + t)) (TensorFlow's ExponentialMovingAverage given the update count): early on,
while the weights change fast, it follows them closely (d_1 = 0.18), later it averages over
about 1 / (1 - decay) updates. It is kept in fp32 beside the parameters the
optimizer updates (the fp32 masters under bf16 master weights), on their device, for the trained
parameters only: frozen ones never change. Under FSDP (train.parallel fsdp) each process keeps
the average of its own shards, beside them: the average is sharded as the weights are.

Validation, best.pt and every checkpoint's weights ("model", what translate, export, average and
fine-tuning read) are the average; a checkpoint also keeps the trained weights themselves
(nmt.checkpoint.TRAINING_WEIGHTS) so that a resumed run goes on exactly where it stopped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch


def decay_at(decay: float, update: int) -> float:
    """The decay used after update `update` (1-based)."""
    return min(decay, (1 + update) / (10 + update))


def _local(parameter: torch.Tensor) -> torch.Tensor:
    """A sharded (DTensor) parameter's own shard, writable in place; any other parameter itself."""
    return parameter.to_local() if hasattr(parameter, "to_local") else parameter


class WeightAverage:
    def __init__(self, parameters: list[torch.nn.Parameter], decay: float):
        self.parameters, self.decay = parameters, decay  # (the recipe holds decay within (0, 1))
        # FSDP's shards: their storage belongs to FSDP, which gathers the weights from it, so the
        # average is exchanged with them by copying (`in_place`), not by swapping storage
        self.sharded = any(hasattr(p, "to_local") for p in parameters)
        with torch.no_grad():
            self.averages = [_local(p).detach().clone() for p in parameters]

    def _weights(self) -> list[torch.Tensor]:
        """What the average follows: the parameters, or under FSDP this process's shards of them."""
        return [_local(p) for p in self.parameters] if self.sharded else self.parameters

    def update(self, update: int) -> None:
        """After update `update` (1-based): the average moved towards the weights (one fused kernel,
        no list built per update: under no_grad the parameters are read as they are)."""
        with torch.no_grad():
            torch._foreach_lerp_(self.averages, self._weights(), 1.0 - decay_at(self.decay, update))

    def restart_from_weights(self) -> None:
        """The average set to the weights as they are (a run resumed from a checkpoint without one)."""
        with torch.no_grad():
            torch._foreach_copy_(self.averages, self._weights())

    @contextlib.contextmanager
    def in_place(self) -> Iterator[None]:
        """Inside the block the parameters hold the average (their storage exchanged, nothing
        copied), and the trained weights come back after it: validation and the checkpoint's
        weights read the average through the model as they read the weights."""
        self._exchange()
        try:
            yield
        finally:
            self._exchange()

    def _exchange(self) -> None:
        if self.sharded:
            with torch.no_grad():
                for weights, average in zip(self._weights(), self.averages):
                    held = weights.clone()
                    weights.copy_(average)
                    average.copy_(held)
            return
        for i, parameter in enumerate(self.parameters):
            parameter.data, self.averages[i] = self.averages[i], parameter.data
