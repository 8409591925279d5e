# experiments/students: students for deployment and lexical shortlists (README.md beside this file).
# Included by the top-level Makefile, whose variables and pipeline macro it uses.
.PHONY: student bench-students bench-shortlist

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
	$(BIN)/python -m experiments.students.students --model demo=$(DEMO_CHECKPOINT) --model teacher=$(subst $(space),$(comma),$(strip $(TEACHER))) \
	    --model student=runs/student/checkpoints/best.pt
	$(BIN)/python -m experiments.students.student_deployment -c $(DEMO_CHECKPOINT) --student runs/student/checkpoints/best.pt
# Shortlists for the demo and its student (make demo, make student): co-occurrence against eflomal's
# alignments on val, then speed and BLEU with and without, in nmt's engine and CTranslate2's.
bench-shortlist: install
	$(BIN)/pip install --quiet -e ".[bench]"
	$(BIN)/python -m experiments.students.shortlist --student runs/student/checkpoints/best.pt
	$(BIN)/python -m experiments.students.shortlist_bound --student runs/student/checkpoints/best.pt
