"""bf16 translation on a CPU with bf16 arithmetic (decode.precision bf16): its speed against fp32,
and what it changes in the output.

    python -m experiments.precision.cpu_bf16_decoding [--rounds 3] [--threads 2] [--checkpoints A,B]

Two parts, on `--threads` threads, fp32 and bf16 alternating in one process for `--rounds` rounds
(a shared host drifts: each figure is the best of its rounds):
- trained models translate Multi30k's test_2016_flickr (1,000 sentences) with their recipes' decode
  settings through nmt's text interface, as `nmt translate` does: seconds, BLEU and chrF
  (sacreBLEU), and the lines that come out otherwise. By default the demo's model (`make demo`)
  and the 256-wide fp32 model of `make bench-cpu-bf16` (seed 1);
- the same models scoring the first 8,000 pairs of Multi30k's training set by forced decoding, as
  `nmt likelihood` and `nmt filter` do: seconds, the largest and mean difference of the pairs'
  log-probabilities, and the Spearman correlation of their ranks (what filtering goes by);
- searches by models of random weights at two shapes, bench-small's (3+3 layers of 256, d_ff 1,024,
  8k vocabulary) and the base model's (6+6 layers of 512, d_ff 2,048, 32k vocabulary): 50
  sentences of 20 tokens, beam 4, every output exactly 20 tokens, so both precisions do the same work.
Results: experiments/precision/results/cpu_bf16_decoding.json, with the host's CPU features (a CPU
without bf16 arithmetic emulates bf16, far slower: the study says nothing there).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import sacrebleu
import torch

from experiments.shared.runs import ROOT
from nmt.config import ModelConfig
from nmt.data.corpus import read_lines
from nmt.decode.engines.engine import load_engine
from nmt.decode.engines.torch_engine import decode_autocast, for_inference
from nmt.decode.forced import score_pairs
from nmt.decode.search import beam_search
from nmt.decode.text.casing import hypothesis_text
from nmt.decode.translate import translate_lines
from nmt.host_memory import keep_freed_memory
from nmt.model.transformer import Transformer
from nmt.special_tokens import EOS
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
TEST = ROOT / "data" / "multi30k" / "test_2016_flickr"
CHECKPOINTS = {  # the default models, and what makes each
    "runs/demo/checkpoints/best.pt": "make demo",
    "runs/cpu_bf16/seed1/width256/fp32/checkpoints/best.pt": "make bench-cpu-bf16",
}
SHAPES = {
    "bench-small": dict(d_model=256, d_ff=1024, encoder_layers=3, decoder_layers=3, heads=4, vocabulary=8000),
    "base": dict(d_model=512, d_ff=2048, encoder_layers=6, decoder_layers=6, heads=8, vocabulary=32000),
}
PRECISIONS = ("fp32", "bf16")


def alternated_best(rounds: int, run: Callable[[str], object]) -> tuple[dict[str, float], dict[str, object]]:
    """run(precision) for fp32 and bf16 in turn, `rounds` times after one warm-up round of each:
    the best seconds of each, and each one's last result."""
    best, results = {}, {}
    for round_ in range(rounds + 1):
        for precision in PRECISIONS:
            start = time.perf_counter()
            results[precision] = run(precision)
            if round_:  # (the first round warms up: bf16 packs its weights then)
                best[precision] = min(best.get(precision, float("inf")), time.perf_counter() - start)
    return best, results


def trained_model(translator, checkpoint: Path, rounds: int) -> dict:
    sources = list(read_lines(Path(f"{TEST}.en.gz")))
    references = list(read_lines(Path(f"{TEST}.de.gz")))

    def translated(precision: str) -> list[str]:
        cfg = translator.recipe.decode.model_copy(update={"precision": precision})
        return [hypothesis_text(translator.tgt_tokenizer, n[0]) for n in translate_lines(translator, sources, cfg)]

    seconds, outputs = alternated_best(rounds, translated)
    scores = {precision: {"bleu": round(sacrebleu.corpus_bleu(outputs[precision], [references]).score, 2),
                          "chrf": round(sacrebleu.corpus_chrf(outputs[precision], [references]).score, 2)}
              for precision in PRECISIONS}
    return {"checkpoint": str(checkpoint.relative_to(ROOT) if checkpoint.is_relative_to(ROOT) else checkpoint),
            "width": translator.recipe.model.d_model, "beam_size": translator.recipe.decode.beam_size,
            "seconds": {p: round(s, 3) for p, s in seconds.items()},
            "bf16_time_vs_fp32": round(seconds["bf16"] / seconds["fp32"], 3), "test_scores": scores,
            "lines_otherwise": sum(a != b for a, b in zip(outputs["fp32"], outputs["bf16"])), "lines": len(sources)}


def scoring(scorer, checkpoint: Path, rounds: int, pairs: int = 8000) -> dict:
    train = ROOT / "data" / "multi30k" / "train"
    sources, targets = (list(itertools.islice(read_lines(Path(f"{train}.{side}.gz")), pairs)) for side in ("en", "de"))
    scored = list(zip(sources, targets))

    def score(precision: str) -> list[float]:
        return [s.log_prob for s in score_pairs(scorer, scored, scorer.recipe.decode.max_tokens, precision)]

    seconds, log_probs = alternated_best(rounds, score)
    differences = [abs(a - b) for a, b in zip(log_probs["fp32"], log_probs["bf16"])]
    return {"checkpoint": str(checkpoint.relative_to(ROOT) if checkpoint.is_relative_to(ROOT) else checkpoint),
            "pairs": len(scored), "seconds": {p: round(s, 3) for p, s in seconds.items()},
            "bf16_time_vs_fp32": round(seconds["bf16"] / seconds["fp32"], 3),
            "largest_difference": round(max(differences), 4), "mean_difference": round(statistics.mean(differences), 4),
            "mean_log_prob_fp32": round(statistics.mean(log_probs["fp32"]), 3),
            "rank_correlation": round(rank_correlation(log_probs["fp32"], log_probs["bf16"]), 7)}


def rank_correlation(a: list[float], b: list[float]) -> float:
    """Spearman's rho of two lists of scores (ties broken by position)."""
    def ranks(values):
        order = sorted(range(len(values)), key=values.__getitem__)
        return {i: r for r, i in enumerate(order)}

    rank_a, rank_b, n = ranks(a), ranks(b), len(a)
    return 1 - 6 * sum((rank_a[i] - rank_b[i]) ** 2 for i in range(n)) / (n * (n * n - 1))


def random_model_search(shape: str, rounds: int, sentences: int = 50, length: int = 20, beam: int = 4) -> dict:
    sizes = dict(SHAPES[shape])
    vocabulary = sizes.pop("vocabulary")
    torch.manual_seed(1)
    model = for_inference(Transformer(ModelConfig(**sizes), vocabulary, vocabulary), torch.device("cpu"))
    src = torch.randint(4, vocabulary, (sentences, length))
    src[:, -1] = EOS

    def search(precision: str) -> None:
        with torch.inference_mode(), decode_autocast(torch.device("cpu"), precision):
            beam_search(model, src, beam, 0.6, 0.0, length, min_len=length)

    seconds, _ = alternated_best(rounds, search)
    return {"shape": shape, **SHAPES[shape], "task": f"{sentences} sentences, beam {beam}, exactly {length} tokens each",
            "seconds": {p: round(s, 3) for p, s in seconds.items()},
            "bf16_time_vs_fp32": round(seconds["bf16"] / seconds["fp32"], 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--checkpoints", default=",".join(CHECKPOINTS))
    args = parser.parse_args()
    checkpoints = [ROOT / c for c in args.checkpoints.split(",")]
    for checkpoint in checkpoints:
        if not checkpoint.exists():
            raise SystemExit(f"{checkpoint}: no such checkpoint ({CHECKPOINTS.get(str(checkpoint.relative_to(ROOT)), 'train it first')})")
    keep_freed_memory()  # as load_engine sets it up for `nmt translate`
    torch.set_num_threads(args.threads)
    capabilities = torch.cpu.get_capabilities()
    result = {"rounds": args.rounds, "threads": args.threads,
              "cpu": {key: capabilities.get(key) for key in ("cpu_name", "avx512_bf16", "amx_bf16")},
              "trained": [], "scoring": [], "searches": []}
    for checkpoint in checkpoints:
        translator = load_engine([checkpoint], threads=args.threads)  # translates, then scores
        result["trained"].append(trained_model(translator, checkpoint, args.rounds))
        print(json.dumps(result["trained"][-1]), flush=True)
        result["scoring"].append(scoring(translator, checkpoint, args.rounds))
        print(json.dumps(result["scoring"][-1]), flush=True)
    for shape in SHAPES:
        result["searches"].append(random_model_search(shape, args.rounds))
        print(json.dumps(result["searches"][-1]), flush=True)
    write_json(RESULTS / "cpu_bf16_decoding.json", result)


if __name__ == "__main__":
    main()
