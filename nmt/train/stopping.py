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
