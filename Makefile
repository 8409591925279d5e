# nmt: the two set-up commands of the README are `make demo` and `make test`.
# The product's rules are here: install, the demo, the tests, the speed benchmarks (bench/), the
# GPU day, WMT14. Each study's rules sit beside its script and results, in experiments/*/rules.mk,
# included at the end (a tree without experiments/ still runs everything here).
# Every pipeline step is re-runnable: tokenizer, prepare and train skip themselves when their
# output is up to date (train resumes), and translate/score rerun only when the model changed.

PYTHON ?= python3
VENV   ?= .venv
TORCH  ?= torch==2.13.0
BIN    := $(VENV)/bin
NMT    := $(BIN)/nmt

.PHONY: install install-comet demo test test-cost bench bench-peers bench-cpu-settings bench-cpu-master-weights bench-gpu gpu-check gpu-wheels bench-wmt14-scale bench-serve bench-decode-compile bench-page bench-large-models wmt14-base wmt14-big clean

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

# COMET (the comet extra) lives in an environment of its own: unbabel-comet 2.2 pins numpy<2 and
# huggingface-hub<1, so transformers<5, and nmt's Hugging Face import and export need transformers 5
# (docs/quality.md). `nmt score --metric comet`, COMET validation, MBR and reranking with COMET run there.
COMET_VENV ?= .venv-comet
install-comet: $(COMET_VENV)/.installed
$(COMET_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv --without-pip $(COMET_VENV)
	($(PYTHON) -m pip --python $(COMET_VENV)/bin/python install --quiet uv && $(COMET_VENV)/bin/uv pip install --quiet \
	    --python $(COMET_VENV)/bin/python $(if $(FIND_LINKS),--find-links $(FIND_LINKS)) pip "$(TORCH)" -e ".[comet]" pytest) \
	  || ($(COMET_VENV)/bin/python -m ensurepip --default-pip && $(COMET_VENV)/bin/pip install --quiet "$(TORCH)" -e ".[comet]" pytest)
	touch $@

# Two workers (pytest-xdist): the suite's tests are mostly single-threaded set-up and small models,
# so two at a time finish in about 0.65x the time of one after another on 2 cores. The COMET tests
# (marked comet) run beside them in the COMET environment, their output shown after the suite's;
# the target fails if either run fails. The tests start many Python processes: each imports the
# compiled bytecode written by the first (unset PYTHONDONTWRITEBYTECODE), rather than compiling
# sympy, transformers and the rest from source again (about 2 s more per training process). The
# suite's report ends with its 10 slowest test phases: where its minutes go.
test:
	@$(MAKE) --no-print-directory -j2 install install-comet  # the two environments side by side
	@# the COMET tests at the lowest priority, on what the suite's two workers leave idle
	@unset PYTHONDONTWRITEBYTECODE; nice -n 19 $(COMET_VENV)/bin/python -m pytest -m comet tests/metrics > .comet-tests.log 2>&1 & comet=$$!; \
	$(BIN)/python -m pytest -n 2 --dist worksteal -m "not comet" --durations=10; suite=$$?; \
	wait $$comet; comet_status=$$?; echo "--- the COMET tests ($(COMET_VENV)):"; cat .comet-tests.log; \
	rm -f .comet-tests.log; test $$suite -eq 0 && test $$comet_status -eq 0

# The suite as `make test` runs it, each test's CPU time recorded (the commands it waited for
# included: runs/test_cost.tsv), then the tests and files that cost the most: what to trim when
# the suite outgrows its 4 minutes on 2 cores (tools/test_cost.py).
test-cost: install
	@unset PYTHONDONTWRITEBYTECODE; $(BIN)/python -m pytest -p tools.test_cost -n 2 --dist worksteal -m "not comet" -q
	$(BIN)/python -m tools.test_cost

bench: install
	$(BIN)/python -m bench.run
	$(BIN)/python -m bench.decode_engines
	$(BIN)/python -m bench.prepare
	$(BIN)/python -m bench.host_overhead

# nmt beside eole (with CTranslate2) and JoeyNMT on the same data and shape, in one run: each peer
# installs itself into its own environment under PEERS_HOME (package index needed); about 15 minutes.
bench-peers: install
	$(BIN)/python -m bench.peers

# Which value of a training setting makes faster CPU updates (train.attention by default: sdpa
# against matmul, the figures behind its CPU default), in alternating windows; about 15 minutes.
bench-cpu-settings: install
	$(BIN)/python -m bench.cpu_settings

# bf16 training on this CPU with fp32 master weights against autocast over fp32 weights (the same
# updates; the figures behind train.precision bf16's CPU path), in alternating windows; about 5 minutes.
bench-cpu-master-weights: install
	$(BIN)/python -m bench.cpu_master_weights

# What a large model costs where nmt reads it (import, info, translate, export, average): a wide model's
# memory and a 250k-piece vocabulary's time; about 3 minutes.
bench-large-models: install
	$(BIN)/python -m bench.large_models

bench-serve: install
	$(BIN)/python -m bench.serve_load --engine torch
	$(BIN)/python -m bench.serve_load --engine ctranslate2
	$(BIN)/python -m bench.serve_load --engine torch --overload --clients 400
# decode.compile against eager decoding on the demo's model (run `make demo` first); about 10 minutes.
bench-decode-compile: install
	$(BIN)/python -m bench.decode_compile
bench-page: install
	$(BIN)/python -m bench.page_screenshot

# Training speed and MFU of the base and big shapes on a GPU (the tiny shape on a CPU without one).
bench-gpu: install
	$(BIN)/python -m bench.gpu

# On a GPU machine: the three parts of the GPU check in order, with the machine's own PyTorch (no
# venv, no index there; pydantic comes from the wheels in bench/gpu_day/wheels/). bench/gpu_day/README.md.
GPU_PYTHON ?= python3
gpu-wheels:
	bash bench/gpu_day/wheels.sh
gpu-check:
	GPU_PYTHON=$(GPU_PYTHON) bash bench/gpu_day/run.sh correctness
	GPU_PYTHON=$(GPU_PYTHON) bash bench/gpu_day/run.sh speed
	GPU_PYTHON=$(GPU_PYTHON) bash bench/gpu_day/run.sh training

# The base recipe through every step on a 4.5M-pair stand-in for WMT14 (about an hour on 2 cores).
bench-wmt14-scale: install
	$(BIN)/python -m bench.wmt14_scale

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
# settings for a short run (each chosen on val; experiments/multi30k/README.md, "The demo"): dropout 0.1, not
# the recipe's 0.3, since a few epochs gain more from fitting than from regularization; batches
# of 1,024 tokens, since this early more updates learn more from the same tokens (warm-up kept
# at the same number of tokens); the last 30 % of the budget cools the rate down to 0; the
# 8,000-piece vocabulary (the recipe's 6,000 is untried at this length).
DEMO_MINUTES ?= 12
DEMO_RESULT ?= runs/demo/summary.json
DEMO_SET = --set output_dir=runs/demo --set train.max_minutes=$(DEMO_MINUTES) --set model.dropout=0.1 \
	--set tokenizer.vocab_size=8000 \
	--set train.max_tokens=1024 --set train.warmup_steps=400 --set train.cooldown=0.3 \
	--set train.valid_every=500 --set train.valid_bleu_sentences=300
# The recipe's outputs never repeat a 3-gram (decode.no_repeat_ngram_size), so long sentences do
# not trail off into repetitions (experiments/multi30k/README.md, "Repetitions").
demo: install
	$(call pipeline,recipes/multi30k_en_de.yaml,runs/demo,data/multi30k/test_2016_flickr,en,de,$(DEMO_SET),runs/demo/checkpoints/best.pt)
	$(BIN)/python -m tools.run_summary runs/demo --checkpoint checkpoints/best.pt --hypotheses test.de.hyp \
	    --reference data/multi30k/test_2016_flickr.de.gz --recipe recipes/multi30k_en_de.yaml -o $(DEMO_RESULT)
	@$(BIN)/python -m tools.examples data/multi30k/test_2016_flickr.en.gz runs/demo/test.de.hyp data/multi30k/test_2016_flickr.de.gz 3

# WMT14 needs its data first: `make data/wmt14` exports it from the Hugging Face Hub (network).
# WMT14=FOLDER exports a dataset saved with `save_to_disk` instead (e.g. bench/wmt14_standin.py's).
# The export is atomic: train.en.gz, the up-to-date marker, appears only when every file is complete.
WMT14 ?= wmt/wmt14
data/wmt14: data/wmt14/train.en.gz
data/wmt14/train.en.gz:
	$(BIN)/python -m tools.export_hf $(WMT14) $(if $(filter wmt/wmt14,$(WMT14)),de-en) data/wmt14 --src en --tgt de
wmt14-base: install data/wmt14/train.en.gz
	$(call pipeline,recipes/wmt14_en_de_base.yaml,runs/wmt14_en_de_base,data/wmt14/test,en,de,,runs/wmt14_en_de_base/checkpoints/best.pt)
wmt14-big: install data/wmt14/train.en.gz
	$(call pipeline,recipes/wmt14_en_de_big.yaml,runs/wmt14_en_de_big,data/wmt14/test,en,de,,runs/wmt14_en_de_big/checkpoints/best.pt)

clean:
	rm -rf runs

# The studies' rules (experiments/README.md).
-include $(wildcard experiments/*/rules.mk)
