# experiments/finetuning: fine-tuning on a new domain: Multi30k's sports pairs (README.md beside this file).
# Included by the top-level Makefile, whose variables and pipeline macro it uses.
.PHONY: bench-finetune bench-adaptation bench-domain-selection bench-domain-selection-both-ways

# Fine-tuning on real data: a model trained without Multi30k's sports pairs, tuned on half of them.
bench-finetune: install
	$(BIN)/python -m experiments.finetuning.finetune_domain
# Full fine-tuning against LoRA against a frozen encoder, the same minutes on the same sports pairs.
bench-adaptation: install
	$(BIN)/python -m experiments.finetuning.adaptation
# A domain's pairs selected from a general corpus by nmt filter --domain-model, then fine-tuned on.
bench-domain-selection: install
	$(BIN)/python -m experiments.finetuning.selection
# The same with the difference taken both ways (an en→de and a de→en pair of models), after bench-domain-selection.
bench-domain-selection-both-ways: install
	$(BIN)/python -m experiments.finetuning.selection_both_ways
