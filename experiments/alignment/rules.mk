# experiments/alignment: word alignments of the demo model against eflomal's (README.md beside this file).
# Included by the top-level Makefile, whose variables and pipeline macro it uses.
.PHONY: bench-alignment

# The demo model's word alignments against eflomal's: AER of each layer, their mean, covered or not.
bench-alignment: install
	$(BIN)/pip install --quiet -e ".[bench]"
	$(BIN)/python -m experiments.alignment.alignment_quality
