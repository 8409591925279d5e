# experiments/precision: bf16 training with the residual stream in bf16 against fp32 (README.md beside this file).
# Included by the top-level Makefile, whose variables it uses.
.PHONY: bench-residual-stream

# The demo's Multi30k settings in bf16, both ways, the same updates (needs runs/demo's prepared data: make demo).
bench-residual-stream: install
	$(BIN)/python -m experiments.precision.residual_stream
