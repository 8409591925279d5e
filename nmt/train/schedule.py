"""Learning-rate schedules as plain functions of the update number (1-based), optionally cooled
down to 0 over the end of the training budget."""

from __future__ import annotations

from typing import Callable

from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR

from nmt.config import TrainConfig


def paper_peak_rate(d_model: int, warmup_steps: int) -> float:
    """The peak of the paper's rate d_model^-0.5 · min(step^-0.5, step · warmup^-1.5) (5.3), at step = warmup."""
    return (d_model * max(warmup_steps, 1)) ** -0.5


def inverse_sqrt_rate(step: int, peak_lr: float, warmup_steps: int) -> float:
    """Linear warmup to `peak_lr`, then decay with 1/sqrt(step) (the paper's shape; fairseq's inverse_sqrt)."""
    step = max(step, 1)
    if warmup_steps <= 0:
        return peak_lr / step ** 0.5
    return peak_lr * min(step / warmup_steps, (warmup_steps / step) ** 0.5)


def rate_function(cfg: TrainConfig, d_model: int):
    peak = cfg.lr if cfg.lr is not None else paper_peak_rate(d_model, cfg.warmup_steps)
    return lambda step: inverse_sqrt_rate(step, peak, cfg.warmup_steps)


def cooldown_factor(budget_used: float, cooldown: float) -> float:
    """1 until the last `cooldown` fraction of the budget, then down linearly to 0 at its end."""
    if cooldown <= 0:
        return 1.0
    return min(1.0, max(0.0, (1.0 - budget_used) / cooldown))


def build_scheduler(optimizer: Optimizer, cfg: TrainConfig, d_model: int,
                    budget_used: Callable[[int], float] | None = None) -> LambdaLR:
    """The optimizer's base lr must be 1.0: LambdaLR multiplies it by rate(update number).

    LambdaLR counts from 0 before the first update, so update n (1-based) runs at rate(n), times
    the cool-down factor of the budget fraction used before it. `budget_used(completed updates)`
    defaults to the fraction of max_steps; the trainer also counts wall time and epochs.
    """
    rate = rate_function(cfg, d_model)
    if budget_used is None:
        budget_used = lambda completed: completed / cfg.max_steps  # noqa: E731
    return LambdaLR(optimizer, lambda completed: rate(completed + 1) * cooldown_factor(budget_used(completed), cfg.cooldown))
