# nmt: the two set-up commands of the README are `make demo` and `make test`.
# Every pipeline step is re-runnable: tokenizer, prepare and train skip themselves when their
# output is up to date (train resumes), and translate/score rerun only when the model changed.

PYTHON ?= python3
VENV   ?= .venv
TORCH  ?= torch==2.13.0
BIN    := $(VENV)/bin
NMT    := $(BIN)/nmt

.PHONY: install demo demo-augmented demo-tagged student bench-students bench-shortlist demo-seed2 ensemble demo-de-en test bench bench-peers bench-gpu gpu-check gpu-wheels bench-wmt14-scale bench-finetune bench-export bench-length-penalty bench-terminology bench-huggingface bench-robustness bench-alignment bench-filtering bench-serve bench-page multi30k multi30k-de-en multilingual zero-shot back-translation wmt14-base wmt14-big clean

# uv installs what pip would, in a fraction of the time; where uv cannot be had, pip does it. The
# environment starts without pip (ensurepip takes 5 s): the system's pip puts uv into it, and uv
# installs pip with the rest, for the user's own `pip install` later. uv reads no pip
# configuration: pip's find-links (a folder of local wheels, such as a CPU build of torch) is
# passed on. Bytecode: torch, which every process imports, is compiled at install (in
# parallel); everything else is compiled by the first process that imports it, and kept, which
# is why make lets Python write bytecode even where the environment says not to: compiling every
# installed package would cost 40 s of the install for files no command imports, and a process
# that may not keep its bytecode compiles what it imports again at every start. compileall runs
# with -qq and || true: a few of torch's files are written for newer Pythons and do not compile.
unexport PYTHONDONTWRITEBYTECODE
FIND_LINKS ?= $(or $(PIP_FIND_LINKS),$(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null))
install: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv --without-pip $(VENV)
	($(PYTHON) -m pip --python $(BIN)/python install --quiet uv && $(BIN)/uv pip install --quiet --python $(BIN)/python \
	    $(if $(FIND_LINKS),--find-links $(FIND_LINKS)) pip "$(TORCH)" -e ".[dev]") \
	  || ($(BIN)/python -m ensurepip --default-pip && $(BIN)/pip install --quiet "$(TORCH)" -e ".[dev]")
	$(BIN)/python -m compileall -qq -j 0 "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/torch" || true
	touch $@

# Two workers (pytest-xdist): the suite's tests are mostly single-threaded set-up and small models,
# so two at a time finish in about 0.65x the time of one after another on 2 cores.
test: install
	$(BIN)/python -m pytest -n 2 --dist worksteal

bench: install
	$(BIN)/python -m bench.run
	$(BIN)/python -m bench.decode_engines
	$(BIN)/python -m bench.prepare
	$(BIN)/python -m bench.host_overhead

# nmt beside eole (with CTranslate2) and JoeyNMT on the same data and shape, in one run: each peer
# installs itself into its own environment under PEERS_HOME (package index needed); about 15 minutes.
bench-peers: install
	$(BIN)/python -m bench.peers

# On the demo model (run `make demo` first): BLEU of its CTranslate2 exports beside nmt's own
# decoder; a 30 s load run of `nmt serve` with each engine; the page at / in headless Chromium.
bench-export: install
	$(BIN)/python -m bench.export_quality
# The demo model's val BLEU for each length penalty and patience (the recipe's are the best).
bench-length-penalty: install
	$(BIN)/python -m bench.length_penalty
# Terminology constraints from the reference on test_2016_flickr, with the demo model.
bench-terminology: install
	$(BIN)/python -m bench.terminology
# The demo model exported to transformers: BLEU and time of generate beside nmt translate.
bench-huggingface: install
	$(BIN)/python -m bench.huggingface
# The demo model on text as users have it: paragraphs, upper and title case, inline tags, numbers,
# URLs and emoji (results/robustness.json). Tag placement is judged against eflomal (extra "bench").
# With runs/demo_augmented and runs/demo_tagged (make demo-augmented, make demo-tagged), those models
# are measured the same way beside it.
bench-robustness: install
	$(BIN)/pip install --quiet -e ".[bench]"
	$(BIN)/python -m bench.robustness
# The demo model's word alignments against eflomal's: AER of each layer, their mean, covered or not.
bench-alignment: install
	$(BIN)/pip install --quiet -e ".[bench]"
	$(BIN)/python -m bench.alignment_quality
# Finding misaligned pairs with forced-decoding scores of an en→de and a de→en demo model
# (the second: `make demo-de-en`).
bench-filtering: install
	$(BIN)/python -m bench.filtering
bench-serve: install
	$(BIN)/python -m bench.serve_load --engine torch
	$(BIN)/python -m bench.serve_load --engine ctranslate2
bench-page: install
	$(BIN)/python -m bench.page_screenshot

# Training speed and MFU of the base and big shapes on a GPU (the tiny shape on a CPU without one).
bench-gpu: install
	$(BIN)/python -m bench.gpu

# On a GPU machine: the three parts of the GPU check in order, with the machine's own PyTorch (no
# venv, no index there; pydantic comes from the wheels in bench/wheels/). README, "The GPU day".
GPU_PYTHON ?= python3
gpu-wheels:
	bash bench/gpu_wheels.sh
gpu-check:
	GPU_PYTHON=$(GPU_PYTHON) bash bench/gpu_day.sh correctness
	GPU_PYTHON=$(GPU_PYTHON) bash bench/gpu_day.sh speed
	GPU_PYTHON=$(GPU_PYTHON) bash bench/gpu_day.sh training

# The base recipe through every step on a 4.5M-pair stand-in for WMT14 (about an hour on 2 cores).
bench-wmt14-scale: install
	$(BIN)/python -m bench.wmt14_scale

# Fine-tuning on real data: a model trained without Multi30k's sports pairs, tuned on half of them.
bench-finetune: install
	$(BIN)/python -m bench.finetune_domain

# $(call pipeline,RECIPE,OUTPUT_DIR,TEST_PREFIX,SRC,TGT,EXTRA_SET_FLAGS,CHECKPOINT)
define pipeline
	$(NMT) tokenizer $(1) $(6)
	$(NMT) prepare $(1) $(6)
	$(NMT) train $(1) $(6)
	$(MAKE) --no-print-directory $(7)
	$(MAKE) --no-print-directory $(2)/test.$(5).hyp NMT_CKPT=$(7) NMT_SRC=$(3).$(4).gz NMT_RECIPE=$(1)
	$(NMT) score $(2)/test.$(5).hyp -r $(3).$(5).gz -m bleu -m chrf --json > $(2)/test.score.json
	$(NMT) score $(2)/test.$(5).hyp -r $(3).$(5).gz -m bleu -m chrf
endef

# Translation reruns only when the checkpoint or the recipe (its decode settings) is newer than the output.
# Several checkpoints in NMT_CKPT decode as an ensemble.
%.hyp: $(NMT_CKPT) $(NMT_RECIPE)
	$(NMT) translate $(foreach c,$(NMT_CKPT),-c $(c)) $(if $(word 2,$(NMT_CKPT)),--ensemble) --decode-from $(NMT_RECIPE) -i $(NMT_SRC) -o $@

# The mean of the last $(AVERAGE_LAST) step checkpoints, redone when training went on.
AVERAGE_LAST ?= 3
%/checkpoints/averaged.pt: %/checkpoints/last.pt
	$(NMT) average --last $(AVERAGE_LAST) --dir $(dir $@) -o $@

# The demo is the Multi30k recipe with a time budget: about 15 minutes in all on 2 cores, with
# settings for a short run (each chosen on val; docs/multi30k.md, "The demo"): dropout 0.1, not
# the recipe's 0.3, since a few epochs gain more from fitting than from regularization; batches
# of 1,024 tokens, since this early more updates learn more from the same tokens (warm-up kept
# at the same number of tokens); the last 30 % of the budget cools the rate down to 0; the
# 8,000-piece vocabulary (the recipe's 6,000 is untried at this length).
DEMO_MINUTES ?= 12
DEMO_RESULT ?= results/demo.json
DEMO_SET = --set output_dir=runs/demo --set train.max_minutes=$(DEMO_MINUTES) --set model.dropout=0.1 \
	--set tokenizer.vocab_size=8000 \
	--set train.max_tokens=1024 --set train.warmup_steps=400 --set train.cooldown=0.3 \
	--set train.valid_every=500 --set train.valid_bleu_sentences=300
# The recipe's outputs never repeat a 3-gram (decode.no_repeat_ngram_size), so long sentences do
# not trail off into repetitions (docs/multi30k.md, "Repetitions").
demo: install
	$(call pipeline,recipes/multi30k_en_de.yaml,runs/demo,data/multi30k/test_2016_flickr,en,de,$(DEMO_SET),runs/demo/checkpoints/best.pt)
	$(BIN)/python -m bench.run_summary runs/demo --checkpoint checkpoints/best.pt --hypotheses test.de.hyp \
	    --reference data/multi30k/test_2016_flickr.de.gz --recipe recipes/multi30k_en_de.yaml -o $(DEMO_RESULT)
	@$(BIN)/python -m bench.examples data/multi30k/test_2016_flickr.en.gz runs/demo/test.de.hyp data/multi30k/test_2016_flickr.de.gz 3

# The demo trained with 5 % of its pairs in capitals, 5 % in Title Case and 5 % with a typo
# (data.augment), for `make bench-robustness` to compare with the demo.
AUGMENT_SET = --set data.augment.uppercase=0.05 --set data.augment.titlecase=0.05 --set data.augment.typos=0.05
demo-augmented: install
	$(call pipeline,recipes/multi30k_en_de.yaml,runs/demo_augmented,data/multi30k/test_2016_flickr,en,de,$(DEMO_SET) --set output_dir=runs/demo_augmented $(AUGMENT_SET),runs/demo_augmented/checkpoints/best.pt)

# The demo trained with 10 % of its pairs holding a tag and 10 % a verbatim item (a number, URL,
# emoji, ...) on both sides, its tokenizer with byte fallback and the tags as pieces of their own:
# the model that keeps tags and copies items itself, for `make bench-robustness` to compare.
TAGGED_SET = --set data.augment.tags=0.1 --set data.augment.verbatim=0.1 --set tokenizer.byte_fallback=true \
	--set 'tokenizer.user_defined_symbols=[<b>, </b>, <i>, </i>, <em>, </em>, <strong>, </strong>, <u>, </u>, </span>, </a>, <br/>]'
demo-tagged: install
	$(call pipeline,recipes/multi30k_en_de.yaml,runs/demo_tagged,data/multi30k/test_2016_flickr,en,de,$(DEMO_SET) --set output_dir=runs/demo_tagged $(TAGGED_SET),runs/demo_tagged/checkpoints/best.pt)

# A student for deployment: make multi30k's ensemble (its two averaged seeds; `make multi30k` runs
# first where they are missing, about 90 minutes) translates the training sources with its beam
# (nmt distill), and recipes/multi30k_en_de_student.yaml (4+2 layers, greedy, starting from the
# first seed with its decoder shrunk to 2 layers) trains on those translations alone, without
# label smoothing, for the demo's 12 minutes. `make bench-students` compares it with the demo.
# TEACHER lists one checkpoint or several, which then translate as an ensemble.
DEMO_CHECKPOINT ?= runs/demo/checkpoints/best.pt
TEACHER ?= runs/multi30k_en_de/checkpoints/averaged.pt runs/multi30k_en_de_seed2/checkpoints/averaged.pt
runs/multi30k_en_de/checkpoints/last.pt:
	$(MAKE) multi30k
runs/multi30k_en_de_seed2/checkpoints/last.pt: runs/multi30k_en_de/checkpoints/last.pt
runs/demo_seed2/checkpoints/best.pt:
	$(MAKE) demo-seed2
runs/distill/train.de: $(TEACHER)
	zcat data/multi30k/train.en.gz > runs/distill.train.en
	$(NMT) distill $(foreach checkpoint,$(TEACHER),-c $(checkpoint)) $(if $(word 2,$(TEACHER)),--ensemble) \
	    -i runs/distill.train.en -o runs/distill/train --nproc 2
student: install runs/distill/train.de
	$(call pipeline,recipes/multi30k_en_de_student.yaml,runs/student,data/multi30k/test_2016_flickr,en,de,--set train.max_minutes=$(DEMO_MINUTES),runs/student/checkpoints/best.pt)
comma := ,
empty :=
space := $(empty) $(empty)
bench-students: install
	$(BIN)/python -m bench.students --model demo=$(DEMO_CHECKPOINT) --model teacher=$(subst $(space),$(comma),$(strip $(TEACHER))) \
	    --model student=runs/student/checkpoints/best.pt
	$(BIN)/python -m bench.student_deployment -c $(DEMO_CHECKPOINT) --student runs/student/checkpoints/best.pt
# Shortlists for the demo and its student (make demo, make student): co-occurrence against eflomal's
# alignments on val, then speed and BLEU with and without, in nmt's engine and CTranslate2's.
bench-shortlist: install
	$(BIN)/pip install --quiet -e ".[bench]"
	$(BIN)/python -m bench.shortlist --student runs/student/checkpoints/best.pt
	$(BIN)/python -m bench.shortlist_bound --student runs/student/checkpoints/best.pt

# The demo in the other direction, German→English (for `make bench-filtering`).
demo-de-en: install
	$(call pipeline,recipes/multi30k_en_de.yaml,runs/demo_de_en,data/multi30k/test_2016_flickr,de,en,$(DEMO_SET) --set output_dir=runs/demo_de_en --set data.src_lang=de --set data.tgt_lang=en,runs/demo_de_en/checkpoints/best.pt)

# The full recipes (about 90 minutes each on 2 cores) train two models side by side, one CPU core
# each (seeds 1 and 2; together the CPU time of one model on both cores), and translate with their
# ensemble. Each member is the mean of its last 3 checkpoints (chosen on val, see docs/multi30k.md).
# Test scores of both members and of the ensemble (paired bootstrap), the run summary and the
# learning curve go to results/. $(call multi30k_run,SRC,TGT,EXTRA_SET_FLAGS)
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
	$(BIN)/python -m bench.run_summary runs/multi30k_$(1)_$(2) runs/multi30k_$(1)_$(2)_seed2 \
	    --checkpoint checkpoints/averaged.pt --hypotheses test.$(2).hyp --ensemble runs/multi30k_$(1)_$(2)_ensemble/test.$(2).hyp \
	    --reference data/multi30k/test_2016_flickr.$(2).gz --recipe $(MULTI30K_RECIPE) -o results/multi30k_$(1)_$(2).json
	$(NMT) plot runs/multi30k_$(1)_$(2) -o results/multi30k_$(1)_$(2).png
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
ENSEMBLE_RESULT ?= results/demo_ensemble.json
demo-seed2: install
	$(call copy_tokenizer,runs/demo,runs/demo_seed2)
	$(call pipeline,recipes/multi30k_en_de.yaml,runs/demo_seed2,data/multi30k/test_2016_flickr,en,de,$(DEMO_SET) --set output_dir=runs/demo_seed2 --set train.seed=2 $(SET),runs/demo_seed2/checkpoints/best.pt)
# Several languages on Multi30k (bench/languages.py, docs/languages.md): one en→{de,fr,cs} model
# against three bilingual ones; zero-shot de↔fr against pivoting; back-translation. Budgets in
# updates (UPDATES per bilingual model), two trainings at a time on one thread each.
UPDATES ?= 2000
# The zero-shot model trains 4 x ZERO_SHOT_UPDATES (four directions).
ZERO_SHOT_UPDATES ?= 1500
# Which zero-shot setups to train (bench/languages.py ZERO_SHOT_SETUPS), two at a time; the
# pivot_bt ones fine-tune the source (or target) setup's checkpoint (all of them: about 4 hours on 2 cores).
ZERO_SHOT_SETUPS ?= source,target,both,residual_free,pivot_bt,pivot_bt_light,pivot_bt_light_fast,pivot_bt_continued,pivot_bt_light_continued,target_pivot_bt,target_pivot_bt_continued,target_pivot_bt_continued_full
multilingual: install
	$(BIN)/python -m bench.languages multilingual --updates $(UPDATES)
zero-shot: install
	$(BIN)/python -m bench.languages zero-shot --updates $(ZERO_SHOT_UPDATES) --setups $(ZERO_SHOT_SETUPS)
back-translation: install
	$(BIN)/python -m bench.languages back-translation --updates $(UPDATES)

ensemble: install
	mkdir -p $(RUN)_ensemble
	$(NMT) translate --ensemble -c $(RUN)/$(CKPT) -c $(RUN)_seed2/$(CKPT) --decode-from $(ENSEMBLE_RECIPE) \
	    -i data/multi30k/test_2016_flickr.en.gz -o $(RUN)_ensemble/test.de.hyp
	$(BIN)/python -m bench.run_summary $(RUN) $(RUN)_seed2 --checkpoint $(CKPT) --hypotheses test.de.hyp \
	    --ensemble $(RUN)_ensemble/test.de.hyp --reference data/multi30k/test_2016_flickr.de.gz \
	    --recipe $(ENSEMBLE_RECIPE) -o $(ENSEMBLE_RESULT)
	$(NMT) score $(RUN)/test.de.hyp $(RUN)_ensemble/test.de.hyp -r data/multi30k/test_2016_flickr.de.gz -m bleu
	$(NMT) score $(RUN)_seed2/test.de.hyp $(RUN)_ensemble/test.de.hyp -r data/multi30k/test_2016_flickr.de.gz -m bleu

# WMT14 needs its data first: `make data/wmt14` exports it from the Hugging Face Hub (network).
# WMT14=FOLDER exports a dataset saved with `save_to_disk` instead (e.g. bench/wmt14_standin.py's).
# The export is atomic: train.en.gz, the up-to-date marker, appears only when every file is complete.
WMT14 ?= wmt/wmt14
data/wmt14: data/wmt14/train.en.gz
data/wmt14/train.en.gz:
	$(BIN)/python -m bench.export_hf $(WMT14) $(if $(filter wmt/wmt14,$(WMT14)),de-en) data/wmt14 --src en --tgt de
wmt14-base: install data/wmt14/train.en.gz
	$(call pipeline,recipes/wmt14_en_de_base.yaml,runs/wmt14_en_de_base,data/wmt14/test,en,de,,runs/wmt14_en_de_base/checkpoints/best.pt)
wmt14-big: install data/wmt14/train.en.gz
	$(call pipeline,recipes/wmt14_en_de_big.yaml,runs/wmt14_en_de_big,data/wmt14/test,en,de,,runs/wmt14_en_de_big/checkpoints/best.pt)

clean:
	rm -rf runs
