# experiments/alignment: word alignments of the demo model against eflomal's (README.md beside this file).
# Included by the top-level Makefile, whose variables and pipeline macro it uses.
.PHONY: bench-alignment bench-guided-alignment bench-guided-characters bench-export-attention

# The demo model's word alignments against eflomal's: AER of each layer, their mean, covered or not.
bench-alignment: install
	$(BIN)/pip install --quiet -e ".[bench]"
	$(BIN)/python -m experiments.alignment.alignment_quality

# Guided alignment: the demo unguided, guided by prepare's dice links and by eflomal's, the same
# minutes side by side; BLEU, and tags through nmt's engine and CTranslate2 (about 35 minutes).
bench-guided-alignment: install
	$(BIN)/pip install --quiet -e ".[bench,ctranslate2]"
	$(BIN)/python -m experiments.alignment.guided

# Guided alignment into a side written without spaces (Multi30k English as one Han character per
# word, reversed): unguided, dice between whitespace words, dice by characters (about 12 minutes).
bench-guided-characters: install
	$(BIN)/python -m experiments.alignment.characters

# Which attention a CTranslate2 export of the (unguided) demo model returns for alignments: tags
# placed by each decoder layer's heads, by nmt's mean of every layer, and along the diagonal.
bench-export-attention: install
	$(BIN)/pip install --quiet -e ".[bench,ctranslate2]"
	$(BIN)/python -m experiments.alignment.export_attention
