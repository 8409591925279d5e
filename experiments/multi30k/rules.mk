# experiments/multi30k: the Multi30k recipes: both directions, two seeds, ensembles (README.md beside this file).
# Included by the top-level Makefile, whose variables and pipeline macro it uses.
.PHONY: multi30k multi30k-de-en demo-seed2 ensemble

# The full recipes (about 90 minutes each on 2 cores) train two models side by side, one CPU core
# each (seeds 1 and 2; together the CPU time of one model on both cores), and translate with their
# ensemble. Each member is the mean of its last 3 checkpoints (chosen on val, see experiments/multi30k/README.md).
# Test scores of both members and of the ensemble (paired bootstrap), the run summary and the
# learning curve go to experiments/multi30k/results/. $(call multi30k_run,SRC,TGT,EXTRA_SET_FLAGS)
# SET adds overrides, e.g. `make multi30k-de-en SET="--set train.max_minutes=45"`.
SET ?=
# A second seed shares the first run's tokenizer (so that the two can decode as an ensemble);
# copied with its time stamps, so that it counts as up to date. $(call copy_tokenizer,FROM,TO)
define copy_tokenizer
	mkdir -p $(2) && cp -p $(1)/spm.model $(1)/spm.vocab $(1)/tokenizer.json $(2)/
endef
MULTI30K_RECIPE = recipes/multi30k_en_de.yaml
define multi30k_run
	$(NMT) tokenizer $(MULTI30K_RECIPE) $(3) $(SET)
	$(NMT) prepare $(MULTI30K_RECIPE) $(3) $(SET)
	$(call copy_tokenizer,runs/multi30k_$(1)_$(2),runs/multi30k_$(1)_$(2)_seed2)
	$(NMT) prepare $(MULTI30K_RECIPE) $(3) --set output_dir=runs/multi30k_$(1)_$(2)_seed2 $(SET)
	@echo "training seed 1 here and seed 2 beside it (its log: runs/multi30k_$(1)_$(2)_seed2/train.log)"
	$(NMT) train $(MULTI30K_RECIPE) $(3) --set output_dir=runs/multi30k_$(1)_$(2)_seed2 --set train.seed=2 \
	    --set train.threads=1 $(SET) > runs/multi30k_$(1)_$(2)_seed2/train.log 2>&1 & seed2=$$!; \
	  $(NMT) train $(MULTI30K_RECIPE) $(3) --set train.threads=1 $(SET); one=$$?; wait $$seed2; two=$$?; \
	  [ $$two -eq 0 ] || tail -n 1 runs/multi30k_$(1)_$(2)_seed2/train.log; [ $$one -eq 0 ] && [ $$two -eq 0 ]
	$(MAKE) --no-print-directory runs/multi30k_$(1)_$(2)/checkpoints/averaged.pt runs/multi30k_$(1)_$(2)_seed2/checkpoints/averaged.pt
	$(MAKE) --no-print-directory runs/multi30k_$(1)_$(2)/test.$(2).hyp NMT_CKPT=runs/multi30k_$(1)_$(2)/checkpoints/averaged.pt \
	    NMT_SRC=data/multi30k/test_2016_flickr.$(1).gz NMT_RECIPE=$(MULTI30K_RECIPE)
	$(MAKE) --no-print-directory runs/multi30k_$(1)_$(2)_seed2/test.$(2).hyp NMT_CKPT=runs/multi30k_$(1)_$(2)_seed2/checkpoints/averaged.pt \
	    NMT_SRC=data/multi30k/test_2016_flickr.$(1).gz NMT_RECIPE=$(MULTI30K_RECIPE)
	mkdir -p runs/multi30k_$(1)_$(2)_ensemble
	$(MAKE) --no-print-directory runs/multi30k_$(1)_$(2)_ensemble/test.$(2).hyp NMT_SRC=data/multi30k/test_2016_flickr.$(1).gz NMT_RECIPE=$(MULTI30K_RECIPE) \
	    NMT_CKPT="runs/multi30k_$(1)_$(2)/checkpoints/averaged.pt runs/multi30k_$(1)_$(2)_seed2/checkpoints/averaged.pt"
	$(BIN)/python -m tools.run_summary runs/multi30k_$(1)_$(2) runs/multi30k_$(1)_$(2)_seed2 \
	    --checkpoint checkpoints/averaged.pt --hypotheses test.$(2).hyp --ensemble runs/multi30k_$(1)_$(2)_ensemble/test.$(2).hyp \
	    --reference data/multi30k/test_2016_flickr.$(2).gz --recipe $(MULTI30K_RECIPE) -o experiments/multi30k/results/multi30k_$(1)_$(2).json
	$(NMT) plot runs/multi30k_$(1)_$(2) -o experiments/multi30k/results/multi30k_$(1)_$(2).png
	$(BIN)/python -m tools.results record experiments/multi30k/results/multi30k_$(1)_$(2).png
endef
multi30k: install
	$(call multi30k_run,en,de,)
multi30k-de-en: install
	$(call multi30k_run,de,en,--set data.src_lang=de --set data.tgt_lang=en --set output_dir=runs/multi30k_de_en)

# Ensembles of the demo: a second 12-minute run with another seed (its tokenizer copied from the
# first, so that the two share their vocabulary), then both decoding together (`nmt translate
# --ensemble`), scored against each run alone with paired bootstrap:
#   make demo demo-seed2 && make ensemble
# (`make multi30k` trains and ensembles its two seeds itself.)
RUN ?= runs/demo
CKPT ?= checkpoints/best.pt
ENSEMBLE_RECIPE ?= recipes/multi30k_en_de.yaml
ENSEMBLE_RESULT ?= experiments/multi30k/results/demo_ensemble.json
demo-seed2: install
	$(call copy_tokenizer,runs/demo,runs/demo_seed2)
	$(call pipeline,recipes/multi30k_en_de.yaml,runs/demo_seed2,data/multi30k/test_2016_flickr,en,de,$(DEMO_SET) --set output_dir=runs/demo_seed2 --set train.seed=2 $(SET),runs/demo_seed2/checkpoints/best.pt)
ensemble: install
	mkdir -p $(RUN)_ensemble
	$(NMT) translate --ensemble -c $(RUN)/$(CKPT) -c $(RUN)_seed2/$(CKPT) --decode-from $(ENSEMBLE_RECIPE) \
	    -i data/multi30k/test_2016_flickr.en.gz -o $(RUN)_ensemble/test.de.hyp
	$(BIN)/python -m tools.run_summary $(RUN) $(RUN)_seed2 --checkpoint $(CKPT) --hypotheses test.de.hyp \
	    --ensemble $(RUN)_ensemble/test.de.hyp --reference data/multi30k/test_2016_flickr.de.gz \
	    --recipe $(ENSEMBLE_RECIPE) -o $(ENSEMBLE_RESULT)
	$(NMT) score $(RUN)/test.de.hyp $(RUN)_ensemble/test.de.hyp -r data/multi30k/test_2016_flickr.de.gz -m bleu
	$(NMT) score $(RUN)_seed2/test.de.hyp $(RUN)_ensemble/test.de.hyp -r data/multi30k/test_2016_flickr.de.gz -m bleu
