# experiments/averaging: the weights' exponential moving average (train.ema_decay) against the
# weights and against the mean of the last checkpoints (README.md beside this file).
# Included by the top-level Makefile, whose variables it uses.
.PHONY: bench-weight-average

# The demo's Multi30k settings, the same updates, with and without the average, under two schedules (needs runs/demo: make demo).
bench-weight-average: install
	$(BIN)/python -m experiments.averaging.weight_average
