"""Learning-rate schedules as plain functions of the update number (1-based)."""

from __future__ import annotations

from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR

from nmt.config import TrainConfig


def noam_rate(step: int, d_model: int, warmup_steps: int, factor: float = 1.0) -> float:
    """The paper's rate (5.3): factor · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)."""
    step = max(step, 1)
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


def inverse_sqrt_rate(step: int, peak_lr: float, warmup_steps: int) -> float:
    """Linear warmup to `peak_lr`, then decay with 1/sqrt(step) (fairseq's inverse_sqrt)."""
    step = max(step, 1)
    if warmup_steps <= 0:
        return peak_lr / step ** 0.5
    return peak_lr * min(step / warmup_steps, (warmup_steps / step) ** 0.5)


def rate_function(cfg: TrainConfig, d_model: int):
    if cfg.lr_schedule == "noam":
        return lambda step: noam_rate(step, d_model, cfg.warmup_steps, cfg.lr)
    return lambda step: inverse_sqrt_rate(step, cfg.lr, cfg.warmup_steps)


def build_scheduler(optimizer: Optimizer, cfg: TrainConfig, d_model: int) -> LambdaLR:
    """The optimizer's base lr must be 1.0: LambdaLR multiplies it by rate(update number).

    LambdaLR counts from 0 before the first update, so update n (1-based) runs at rate(n).
    """
    rate = rate_function(cfg, d_model)
    return LambdaLR(optimizer, lambda completed: rate(completed + 1))
