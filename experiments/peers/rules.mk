# experiments/peers: nmt, eole and JoeyNMT at equal minutes on Multi30k (README.md beside this file).
# Included by the top-level Makefile, whose variables it uses.
.PHONY: bench-peers-quality

# Each toolkit trained for PEERS_MINUTES on 2 cores with the demo's settings, one after the other,
# then scored on test_2016_flickr (needs runs/demo's prepared data: make demo; the peers install
# themselves as make bench-peers does, which needs a package index). About 4 × (minutes + 1.5).
PEERS_MINUTES ?= 10
bench-peers-quality: install
	$(BIN)/python -m experiments.peers.quality --minutes $(PEERS_MINUTES)
