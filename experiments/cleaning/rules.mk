# experiments/cleaning: the language filter of nmt prepare (data.language_filter), its removal of
# untranslated pairs (data.remove_copies) and nmt filter's dual conditional cross-entropy, each on a
# spoiled Multi30k corpus (README.md beside this file). Included by the top-level Makefile, whose
# variables it uses.
.PHONY: bench-language-filter bench-dual-cross-entropy bench-copies bench-escaped-corpus

# Detection at three thresholds, then the demo's settings trained without and with the filter (needs runs/demo: make demo).
bench-language-filter: install
	$(BIN)/python -m experiments.cleaning.language_filter

# Two models trained on the spoiled corpus score it (nmt filter); detection at three shares, then training on
# what each ranking keeps (needs runs/demo's tokenizer: make demo).
bench-dual-cross-entropy: install
	$(BIN)/python -m experiments.cleaning.dual_cross_entropy

# 10 % of the targets replaced by their source, trained with data.remove_copies off and on (needs runs/demo's tokenizer).
bench-copies: install
	$(BIN)/python -m experiments.cleaning.copies

# Multi30k escaped as Moses's preprocessing writes it (&apos; &quot; &amp;), trained with data.unescape off and on (needs runs/demo's tokenizer).
bench-escaped-corpus: install
	$(BIN)/python -m experiments.cleaning.escaped_corpus
