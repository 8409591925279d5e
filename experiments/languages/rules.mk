# experiments/languages: several languages: multilingual, zero-shot, back-translation (README.md beside this file).
# Included by the top-level Makefile, whose variables and pipeline macro it uses.
.PHONY: multilingual zero-shot back-translation source-identification

# Several languages on Multi30k (experiments/languages/languages.py, docs/languages.md): one en→{de,fr,cs} model
# against three bilingual ones; zero-shot de↔fr against pivoting; back-translation. Budgets in
# updates (UPDATES per bilingual model), two trainings at a time on one thread each.
UPDATES ?= 2000
# The zero-shot model trains 4 x ZERO_SHOT_UPDATES (four directions).
ZERO_SHOT_UPDATES ?= 1500
# Which zero-shot setups to train (experiments/languages/languages.py ZERO_SHOT_SETUPS), two at a time; the
# pivot_bt ones fine-tune the source (or target) setup's checkpoint (all of them: about 4 hours on 2 cores).
ZERO_SHOT_SETUPS ?= source,target,both,residual_free,pivot_bt,pivot_bt_light,pivot_bt_light_fast,pivot_bt_continued,pivot_bt_light_continued,target_pivot_bt,target_pivot_bt_continued,target_pivot_bt_continued_full
multilingual: install
	$(BIN)/python -m experiments.languages.languages multilingual --updates $(UPDATES)
zero-shot: install
	$(BIN)/python -m experiments.languages.languages zero-shot --updates $(ZERO_SHOT_UPDATES) --setups $(ZERO_SHOT_SETUPS)
back-translation: install
	$(BIN)/python -m experiments.languages.languages back-translation --updates $(UPDATES)
# --src-lang auto: Multi30k's test lines in four languages identified among a model's sources (no
# training; seconds).
source-identification: install
	$(BIN)/python -m experiments.languages.source_identification
