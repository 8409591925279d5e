# experiments/precision: bf16 training with the residual stream in bf16 against fp32, and attention
# by matmuls against the fused kernels (README.md beside this file).
# Included by the top-level Makefile, whose variables it uses.
.PHONY: bench-residual-stream bench-attention-by-matmul bench-cpu-bf16 bench-cpu-bf16-decoding

# The demo's Multi30k settings in bf16, both ways, the same updates (needs runs/demo's prepared data: make demo).
bench-residual-stream: install
	$(BIN)/python -m experiments.precision.residual_stream

# The demo's Multi30k settings in bf16 with train.attention sdpa and matmul, the same updates (needs runs/demo).
bench-attention-by-matmul: install
	$(BIN)/python -m experiments.precision.attention_by_matmul

# bf16 against fp32 training on this CPU, side by side for the same minutes, at the demo's width and
# at 256 (needs runs/demo's prepared data: make demo); about 25 minutes with the defaults.
bench-cpu-bf16: install
	$(BIN)/python -m experiments.precision.cpu_bf16

# bf16 against fp32 translation on this CPU: trained models on the test set (needs make demo and
# make bench-cpu-bf16), their scoring of 8,000 pairs, and searches at two shapes; about 5 minutes.
bench-cpu-bf16-decoding: install
	$(BIN)/python -m experiments.precision.cpu_bf16_decoding
