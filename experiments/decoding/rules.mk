# experiments/decoding: decoding settings and scores on the demo model: length penalty, terminology, filtering, choosing among candidates (README.md beside this file).
# Included by the top-level Makefile, whose variables and pipeline macro it uses.
.PHONY: bench-length-penalty bench-terminology bench-glossary bench-filtering bench-selection demo-de-en

# The demo model's val BLEU for each length penalty and patience (the recipe's are the best).
bench-length-penalty: install
	$(BIN)/python -m experiments.decoding.length_penalty
# Terminology constraints from the reference on test_2016_flickr, with the demo model.
bench-terminology: install
	$(BIN)/python -m experiments.decoding.terminology
# A glossary of nouns built from val, on test_2016_flickr, with the demo model.
bench-glossary: install
	$(BIN)/python -m experiments.decoding.glossary
# Finding misaligned pairs with forced-decoding scores of an en→de and a de→en demo model
# (the second: `make demo-de-en`).
bench-filtering: install
	$(BIN)/python -m experiments.decoding.filtering
# Beam search against MBR (chrF over 16/32/64 samples, plain and epsilon sampling) and reranking the
# 8-best by the de→en demo model (its weight chosen on val), on test_2016_flickr (after `make demo-de-en`).
bench-selection: install
	$(BIN)/python -m experiments.decoding.selection
# The demo in the other direction, German→English (for `make bench-filtering`).
demo-de-en: install
	$(call pipeline,recipes/multi30k_en_de.yaml,runs/demo_de_en,data/multi30k/test_2016_flickr,de,en,$(DEMO_SET) --set output_dir=runs/demo_de_en --set data.src_lang=de --set data.tgt_lang=en,runs/demo_de_en/checkpoints/best.pt)
