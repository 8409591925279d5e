"""Beam search against choosing among candidates (`make bench-selection`): minimum-Bayes-risk
decoding with chrF over 16, 32 and 64 samples (ancestral and epsilon sampling, epsilon 0.02 as in
Freitag et al. 2023), and reranking the beam's 8 best by the de→en demo model's score of the
source (its weight chosen on val by `nmt rerank-tune`'s grid search). Every system translates
test_2016_flickr with the demo model and the recipe's decode settings otherwise; each gets BLEU,
chrF, seconds per sentence, and sacrebleu's paired bootstrap against beam search. The MBR
settings are the paper's, not tuned here; the reranking weight is the only choice made on val.
Writes experiments/decoding/results/selection.json (outputs in runs/selection/).

    python -m experiments.decoding.selection [--forward runs/demo/checkpoints/best.pt]
        [--reverse runs/demo_de_en/checkpoints/best.pt] [--lines N]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from nmt.data.corpus import read_lines
from nmt.decode.engines.engine import load_engine
from nmt.decode.text.casing import hypothesis_text
from nmt.decode.translate import decode_settings, translate_lines
from nmt.jobs.rerank_tuning import tune_rerank
from nmt.score import compare_systems
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
OUT = Path("runs/selection")
SAMPLES = (16, 32, 64)
EPSILON = 0.02
RERANK_CANDIDATES = 8


def systems(reverse: str, reverse_weight: float) -> dict[str, list[str]]:
    """Each system's --set overrides over the recipe's decode settings."""
    out = {"beam": [], f"beam{RERANK_CANDIDATES}": [f"decode.beam_size={RERANK_CANDIDATES}"]}
    for n in SAMPLES:
        out[f"mbr_chrf_sampling_{n}"] = [f"decode.mbr.candidates={n}", "decode.epsilon=0"]  # plain sampling
        out[f"mbr_chrf_epsilon_{n}"] = [f"decode.mbr.candidates={n}", f"decode.epsilon={EPSILON}"]
    out[f"rerank_reverse_{RERANK_CANDIDATES}"] = [
        f"decode.beam_size={RERANK_CANDIDATES}", f"decode.rerank.candidates={RERANK_CANDIDATES}",
        f"decode.rerank.reverse_model={reverse}", f"decode.rerank.reverse_weight={reverse_weight}"]
    return out


def trained(path: str) -> dict:
    """How long a checkpoint's model trained: updates, minutes and its best dev score."""
    from nmt.checkpoint import best_dev, open_checkpoint

    checkpoint = open_checkpoint(Path(path))
    progress = checkpoint.payload.get("progress", {})
    return {"updates": progress.get("step"), "minutes": round(progress.get("elapsed_seconds", 0) / 60, 1),
            "best_dev": best_dev(checkpoint.payload, checkpoint.recipe),
            "threads": checkpoint.recipe.train.threads or None}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--forward", default="runs/demo/checkpoints/best.pt", help="en→de checkpoint")
    parser.add_argument("--reverse", default="runs/demo_de_en/checkpoints/best.pt", help="de→en checkpoint")
    parser.add_argument("--recipe", default="recipes/multi30k_en_de.yaml", help="Decode settings to start from.")
    parser.add_argument("--lines", type=int, default=0, help="Only the first N lines of val and test (0: all).")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    for path in (args.forward, args.reverse):
        if not Path(path).is_file():
            raise SystemExit(f"{path}: not found (make demo and make demo-de-en first)")

    def split(name: str, lang: str) -> list[str]:
        lines = list(read_lines(Path(f"data/multi30k/{name}.{lang}.gz")))
        return lines[: args.lines] if args.lines else lines

    translator = load_engine([Path(args.forward)])
    # The reranking weight, on val: the grid search of `nmt rerank-tune`.
    tune_cfg = decode_settings(translator.recipe, Path(args.recipe), {}, [
        f"decode.beam_size={RERANK_CANDIDATES}", f"decode.rerank.candidates={RERANK_CANDIDATES}",
        f"decode.rerank.reverse_model={args.reverse}"])
    start = time.perf_counter()
    tuning = tune_rerank(translator, split("val", "en"), split("val", "de"), tune_cfg)
    tuning_seconds = time.perf_counter() - start
    weight = tuning.best["reverse_weight"]
    print(f"val: reverse weight {weight}: BLEU {tuning.best['bleu']} (beam{RERANK_CANDIDATES} {tuning.beam['bleu']})",
          flush=True)

    sources, references = split("test_2016_flickr", "en"), split("test_2016_flickr", "de")
    reference_path = OUT / "test.de"
    OUT.mkdir(parents=True, exist_ok=True)
    reference_path.write_text("\n".join(references) + "\n", encoding="utf-8")
    rows = {}
    for name, overrides in systems(args.reverse, weight).items():
        cfg = decode_settings(translator.recipe, Path(args.recipe), {}, overrides)
        start = time.perf_counter()
        results = translate_lines(translator, sources, cfg)
        seconds = time.perf_counter() - start
        (OUT / f"{name}.de").write_text("\n".join(hypothesis_text(translator.tgt_tokenizer, h[0]) for h in results)
                                        + "\n", encoding="utf-8")
        rows[name] = {"settings": overrides, "seconds_per_sentence": round(seconds / len(sources), 4)}
        print(name, rows[name], flush=True)
    paired = compare_systems([OUT / f"{name}.de" for name in rows], [reference_path], ["bleu", "chrf"])
    for name, row in zip(rows, paired):
        rows[name] |= {"bleu": row["BLEU"]["score"], "chrf": row["chrF2"]["score"],
                       "bleu_p_vs_beam": None if row["baseline"] else row["BLEU"]["p_value"],
                       "chrf_p_vs_beam": None if row["baseline"] else row["chrF2"]["p_value"],
                       "bleu_ci95": row["BLEU"]["ci95"], "length_ratio": row["length_ratio"]}
    report = {"forward": args.forward, "reverse": args.reverse,
              "models": {name: trained(path) for name, path in (("forward", args.forward), ("reverse", args.reverse))},
              "decode_from": args.recipe,
              "test": "data/multi30k/test_2016_flickr", "lines": len(sources), "threads": args.threads,
              "paired_test": "sacrebleu paired bootstrap, 1000 resamples, baseline: beam",
              "rerank_tuning_on_val": {"lines": tuning.lines, "metric": tuning.metric, "best": tuning.best,
                                       "beam": tuning.beam, "grid": tuning.grid,
                                       "seconds": round(tuning_seconds, 1)},
              "comet": "no COMET model was available on the host: no COMET figures",
              "systems": rows}
    write_json(RESULTS / "selection.json", report)
    for name, row in rows.items():
        print(f"{name:28s} BLEU {row['bleu']:6.2f} chrF {row['chrf']:6.2f} {row['seconds_per_sentence']:.3f} s/sent"
              f"  p(BLEU) {row['bleu_p_vs_beam']}", flush=True)


if __name__ == "__main__":
    main()
