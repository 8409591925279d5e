"""Noisy-corpus filtering with forced-decoding scores (`make bench-filtering`).

Dual conditional cross-entropy (Junczys-Dowmunt, 2018): a pair (x, y) is scored with an x→y and a
y→x model, H(y|x) and H(x|y) their cross-entropies per token (`nmt likelihood`'s per-token
log-probabilities, negated), and ranked by |H(y|x) - H(x|y)| + (H(y|x) + H(x|y)) / 2: low for
pairs both models find likely and equally so. The corpus: Multi30k's val and test_2016_flickr
(2,014 pairs that neither model was trained on), 10 % of them made misaligned by shuffling
their targets among themselves. Reports the precision and recall of the worst-scored 10 % at
finding those, beside each direction's cross-entropy alone. Writes experiments/decoding/results/filtering.json.

    python -m experiments.decoding.filtering [--forward runs/demo/checkpoints/best.pt] [--backward runs/demo_de_en/checkpoints/best.pt]
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import numpy as np
import torch

from nmt.data.corpus import read_lines
from nmt.decode.engines.engine import load_engine
from nmt.jobs.pair_scorings import dual_score
from nmt.jobs.likelihood import score_pairs
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
SPLITS = ("data/multi30k/val", "data/multi30k/test_2016_flickr")


def misalign(pairs: list[tuple[str, str]], fraction: float, seed: int) -> tuple[list[tuple[str, str]], set[int]]:
    """Shuffle the targets of a random `fraction` of the pairs among themselves, none kept in place."""
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(len(pairs)), round(fraction * len(pairs))))
    rng.shuffle(chosen)
    rotated = chosen[1:] + chosen[:1]  # each takes the next one's target: none keeps its own
    noisy = list(pairs)
    for i, j in zip(chosen, rotated):
        noisy[i] = (pairs[i][0], pairs[j][1])
    return noisy, set(chosen)


def precision_recall(scores: list[float], injected: set[int], cut: int) -> dict:
    worst = set(sorted(range(len(scores)), key=lambda i: -scores[i])[:cut])
    found = len(worst & injected)
    return {"precision": round(found / cut, 3), "recall": round(found / len(injected), 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--forward", default="runs/demo/checkpoints/best.pt", help="en→de checkpoint")
    parser.add_argument("--backward", default="runs/demo_de_en/checkpoints/best.pt", help="de→en checkpoint")
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    for path in (args.forward, args.backward):
        if not Path(path).is_file():
            raise SystemExit(f"{path}: not found (train the demo in both directions first; see the docstring)")
    pairs = [pair for split in SPLITS for pair in zip(read_lines(Path(f"{split}.en.gz")), read_lines(Path(f"{split}.de.gz")))]
    noisy, injected = misalign(pairs, args.fraction, args.seed)
    start = time.perf_counter()
    forward = score_pairs(load_engine([Path(args.forward)]), noisy, max_tokens=4096)
    backward = score_pairs(load_engine([Path(args.backward)]), [(de, en) for en, de in noisy], max_tokens=4096)
    seconds = time.perf_counter() - start
    h_fwd = [-s.log_prob_per_token for s in forward]
    h_bwd = [-s.log_prob_per_token for s in backward]
    dual = dual_score(np.array(h_fwd), np.array(h_bwd)).tolist()  # nmt filter's ranking
    cut = len(injected)
    report = {"forward": args.forward, "backward": args.backward, "pairs": len(noisy), "injected": len(injected),
              "cut": cut, "seed": args.seed, "threads": args.threads, "scoring_seconds_both_directions": round(seconds, 1),
              "dual_conditional_cross_entropy": precision_recall(dual, injected, cut),
              "forward_cross_entropy_only": precision_recall(h_fwd, injected, cut),
              "backward_cross_entropy_only": precision_recall(h_bwd, injected, cut)}
    print(report, flush=True)
    write_json(RESULTS / "filtering.json", report)


if __name__ == "__main__":
    main()
