"""Learning-rate schedules as plain functions of the update number (1-based) and of the fraction
of the training budget spent: a linear warm-up to the peak rate, then the schedule's shape
(inverse square root, constant or a cosine), optionally cooled down to 0 over the end of the
budget, and scaled by train.lr_plateau's cuts (Schedule)."""

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


def scheduled_rate(cfg: TrainConfig, d_model: int) -> Callable[[int, float, float | None], float]:
    """rate(step, budget used before it, budget used when warm-up ended or None before): the
    recipe's schedule, its cool-down included. The cosine runs from the warm-up's end to the
    budget's end, whatever the budget (steps, minutes or epochs)."""
    peak, warmup = peak_rate(cfg, d_model), cfg.warmup_steps
    if cfg.lr_schedule == "cosine":
        def cosine(step: int, used: float, decay_from: float | None) -> float:
            if decay_from is None:
                return warmup_rate(step, peak, warmup)
            return peak * cosine_factor((used - decay_from) / (1.0 - decay_from) if decay_from < 1.0 else 1.0)
        return cosine
    shape = inverse_sqrt_rate if cfg.lr_schedule == "inverse_sqrt" else warmup_rate
    return lambda step, used, decay_from: shape(step, peak, warmup) * cooldown_factor(used, cfg.cooldown)


class Schedule(LambdaLR):
    """The optimizer's base lr must be 1.0: LambdaLR multiplies it by rate(update number).

    LambdaLR counts from 0 before the first update, so update n (1-based) runs at rate(n), given
    the budget fraction used before it, times `scale`. `budget_used(completed updates)` defaults
    to the fraction of max_steps; the trainer also counts wall time and epochs. Saved with the
    scheduler's state, for an exact resume: `scale`, the factor train.lr_plateau's cuts have
    brought the rate to, and `decay_from`, the budget fraction spent when warm-up ended (where
    the cosine starts)."""

    def __init__(self, optimizer: Optimizer, cfg: TrainConfig, d_model: int,
                 budget_used: Callable[[int], float] | None = None):
        self.scale, self.decay_from = 1.0, None
        rate, warmup = scheduled_rate(cfg, d_model), cfg.warmup_steps
        if budget_used is None:
            budget_used = lambda completed: completed / cfg.max_steps  # noqa: E731

        def rate_of(completed: int) -> float:  # a function, not a method: LambdaLR saves no state of it
            used = budget_used(completed)
            if self.decay_from is None and completed >= warmup:
                self.decay_from = used
            return rate(completed + 1, used, self.decay_from) * self.scale

        super().__init__(optimizer, rate_of)

    def cut(self, factor: float) -> None:
        """train.lr_plateau: the rate times `factor`, from the next update on (its rate, already
        in the optimizer, included)."""
        self.scale *= factor
        for group in self.optimizer.param_groups:
            group["lr"] *= factor
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]
