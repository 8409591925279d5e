"""Learning-rate schedules as plain functions of the update number (1-based) and of the fraction
of the training budget spent: a linear warm-up to the peak rate, then the schedule's shape
(inverse square root, constant or a cosine), optionally cooled down to 0 over the end of the
budget, and scaled by train.lr_plateau's cuts (RateScale)."""

from __future__ import annotations

import math
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


def warmup_rate(step: int, peak_lr: float, warmup_steps: int) -> float:
    """Linear warmup to `peak_lr`, then `peak_lr` (the constant schedule; the cosine's envelope)."""
    return peak_lr * min(1.0, max(step, 1) / warmup_steps) if warmup_steps > 0 else peak_lr


def cosine_factor(budget_used: float) -> float:
    """Half a cosine from 1 at the budget's start to 0 at its end (Loshchilov & Hutter's annealing, one cycle)."""
    return 0.5 * (1.0 + math.cos(math.pi * min(1.0, max(0.0, budget_used))))


def cooldown_factor(budget_used: float, cooldown: float) -> float:
    """1 until the last `cooldown` fraction of the budget, then down linearly to 0 at its end."""
    if cooldown <= 0:
        return 1.0
    return min(1.0, max(0.0, (1.0 - budget_used) / cooldown))


def peak_rate(cfg: TrainConfig, d_model: int) -> float:
    return cfg.lr if cfg.lr is not None else paper_peak_rate(d_model, cfg.warmup_steps)


def scheduled_rate(cfg: TrainConfig, d_model: int) -> Callable[[int, float], float]:
    """rate(step, budget used before it): the recipe's schedule, its cool-down included."""
    peak, warmup = peak_rate(cfg, d_model), cfg.warmup_steps
    if cfg.lr_schedule == "cosine":
        return lambda step, used: warmup_rate(step, peak, warmup) * cosine_factor(used)
    shape = inverse_sqrt_rate if cfg.lr_schedule == "inverse_sqrt" else warmup_rate
    return lambda step, used: shape(step, peak, warmup) * cooldown_factor(used, cfg.cooldown)


class RateScale:
    """The factor train.lr_plateau's cuts have brought the rate to (1 without any), applied to the
    rate of the update under way at once and to every later one. The training state keeps it."""

    def __init__(self, optimizer: Optimizer):
        self.optimizer, self.value = optimizer, 1.0

    def set(self, value: float) -> None:
        """A cut: the rate of the next update, already in the optimizer, is scaled too."""
        for group in self.optimizer.param_groups:
            group["lr"] *= value / self.value
        self.value = value

    def restore(self, value: float) -> None:
        """A resumed run's scale: its optimizer's saved rate already holds it."""
        self.value = value


def build_scheduler(optimizer: Optimizer, cfg: TrainConfig, d_model: int,
                    budget_used: Callable[[int], float] | None = None) -> tuple[LambdaLR, RateScale]:
    """The optimizer's base lr must be 1.0: LambdaLR multiplies it by rate(update number).

    LambdaLR counts from 0 before the first update, so update n (1-based) runs at rate(n), given
    the budget fraction used before it, times the plateau's scale. `budget_used(completed
    updates)` defaults to the fraction of max_steps; the trainer also counts wall time and epochs.
    """
    rate, scale = scheduled_rate(cfg, d_model), RateScale(optimizer)
    if budget_used is None:
        budget_used = lambda completed: completed / cfg.max_steps  # noqa: E731
    scheduler = LambdaLR(optimizer, lambda completed: rate(completed + 1, budget_used(completed)) * scale.value)
    return scheduler, scale
