# experiments/cleaning: the language filter of nmt prepare (data.language_filter) on a spoiled
# Multi30k corpus (README.md beside this file). Included by the top-level Makefile, whose variables it uses.
.PHONY: bench-language-filter

# Detection at three thresholds, then the demo's settings trained without and with the filter (needs runs/demo: make demo).
bench-language-filter: install
	$(BIN)/python -m experiments.cleaning.language_filter
