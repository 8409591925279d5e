"""Training: loss, learning-rate schedule, checkpoints, metrics log, and the loop."""
