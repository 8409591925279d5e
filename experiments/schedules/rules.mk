# experiments/schedules: learning-rate schedules at the same peak rate and updates (README.md beside this file).
# Included by the top-level Makefile, whose variables it uses.
.PHONY: bench-schedules bench-plateau

# The demo's Multi30k settings under three schedules, side by side (needs runs/demo: make demo).
bench-schedules: install
	$(BIN)/python -m experiments.schedules.schedules

# A constant rate with and without cuts on a plateau, beside the demo's schedule, for 4,000 updates.
bench-plateau: install
	$(BIN)/python -m experiments.schedules.plateau
