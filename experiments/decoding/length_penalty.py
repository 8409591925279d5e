"""Choosing the length penalty on val (`make bench-length-penalty`).

Translates the validation set with the demo model (or -c CKPT) through nmt's beam search, with
the recipe's other decode settings and each setting of a grid: alpha for |Y|^alpha (the default
form, CTranslate2's) with patience 1 and 2, and alpha for GNMT's ((5 + |Y|) / 6)^alpha. Scores
each with sacreBLEU and writes experiments/decoding/results/length_penalty.json; the recipe's decode.length_penalty
and decode.patience are the best of the grid on val.

    python -m experiments.decoding.length_penalty [-c runs/demo/checkpoints/best.pt] [--recipe recipes/multi30k_en_de.yaml]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import sacrebleu
import torch

from experiments.shared.demo_model import demo_checkpoint
from nmt.config import load_recipe
from nmt.data.corpus import read_lines
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import translate_lines
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
GRID = ([("power", alpha, patience) for patience in (1.0, 2.0) for alpha in (0.0, 0.6, 0.8, 1.0, 1.2, 1.5, 2.0)]
        + [("gnmt", alpha, 1.0) for alpha in (0.6, 1.0, 1.5, 2.0)])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--checkpoint", default="runs/demo/checkpoints/best.pt")
    parser.add_argument("--recipe", default="recipes/multi30k_en_de.yaml", help="Decode settings to use.")
    parser.add_argument("--valid", default="data/multi30k/val")
    parser.add_argument("--pair", default="en-de")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=str(RESULTS / "length_penalty.json"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    ckpt = demo_checkpoint(args.checkpoint)
    src_lang, tgt_lang = args.pair.split("-")
    sources = list(read_lines(Path(f"{args.valid}.{src_lang}.gz")))
    references = list(read_lines(Path(f"{args.valid}.{tgt_lang}.gz")))
    decode = load_recipe(Path(args.recipe)).decode
    translator = load_engine([ckpt])

    runs = []
    for form, alpha, patience in GRID:
        cfg = decode.model_copy(update={"length_penalty": alpha, "length_penalty_form": form, "patience": patience})
        start = time.perf_counter()
        hyps = translate_lines(translator, sources, cfg)
        seconds = time.perf_counter() - start
        bleu = sacrebleu.corpus_bleu([translator.tgt_tokenizer.decode(h[0].tokens) for h in hyps], [references])
        runs.append({"length_penalty_form": form, "length_penalty": alpha, "patience": patience,
                     "bleu": round(bleu.score, 2), "length_ratio": round(bleu.sys_len / bleu.ref_len, 3),
                     "seconds": round(seconds, 1)})
        print(runs[-1], flush=True)
    best = max(runs, key=lambda r: r["bleu"])
    write_json(Path(args.out), {"checkpoint": str(ckpt), "valid": args.valid, "pair": args.pair,
                                "threads": args.threads, "decode": decode.model_dump(), "runs": runs, "best": best})


if __name__ == "__main__":
    main()
