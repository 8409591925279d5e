"""When training stops: a budget (max_steps, max_epochs, max_minutes), patience, or a signal
(SIGINT/SIGTERM, which end training after the current update, with a checkpoint)."""

from __future__ import annotations

import signal

from nmt.config import TrainConfig


class StopSignal:
    """Notes SIGINT/SIGTERM instead of dying of them, while training runs."""

    def __init__(self):
        self.received: str | None = None
        self._previous = {}

    def __enter__(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, _frame):
        self.received = signal.Signals(signum).name

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def stop_reason(cfg: TrainConfig, progress, signalled: bool = False, signal_name: str | None = None) -> str | None:
    """Why training stops now, if it does; `signalled`: a signal reached this rank or another."""
    if progress.step >= cfg.max_steps:
        return "max_steps"
    if cfg.max_epochs and progress.epoch >= cfg.max_epochs:
        return "max_epochs"
    if cfg.patience and progress.bad_validations >= cfg.patience:
        return "patience"
    if cfg.max_minutes > 0 and progress.elapsed_seconds >= 60 * cfg.max_minutes:
        return "max_minutes"
    if signalled:
        return f"signal {signal_name or 'on another rank'}"
    return None


def budget_fractions(cfg: TrainConfig, progress, completed_updates: int, batches_this_epoch: int) -> dict[str, float]:
    """The fraction of each budget the run has spent ("steps", and "minutes" and "epochs" where
    set): the largest is where training stands (the cool-down's clock, the progress bar)."""
    used = {"steps": completed_updates / cfg.max_steps}
    if cfg.max_minutes > 0:
        used["minutes"] = progress.elapsed_seconds / (60 * cfg.max_minutes)
    if cfg.max_epochs and batches_this_epoch:
        used["epochs"] = (progress.epoch + progress.batch_in_epoch / batches_this_epoch) / cfg.max_epochs
    return used


def budget_text(cfg: TrainConfig, progress, used: dict[str, float]) -> str:
    """The updates done and the budget nearest its end: "4,524/100,000 steps", "4,524 steps of
    12 min" (the bar and the time left say how far into them) or "4,524 steps, epoch 3/10"."""
    nearest = max(used, key=used.get)
    if nearest == "minutes":
        return f"{progress.step:,} steps of {cfg.max_minutes:g} min"
    if nearest == "epochs":
        return f"{progress.step:,} steps, epoch {min(progress.epoch + 1, cfg.max_epochs)}/{cfg.max_epochs}"
    return f"{progress.step:,}/{cfg.max_steps:,} steps"
