# experiments/packing: a model trained on packed rows against one trained a pair per row (README.md beside this file).
# Included by the top-level Makefile, whose variables it uses.
.PHONY: bench-packing-quality

# The demo's Multi30k settings, the same updates plain and packed (needs runs/demo's prepared data: make demo).
bench-packing-quality: install
	$(BIN)/python -m experiments.packing.packed_vs_plain
