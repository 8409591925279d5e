"""Terminology constraints on Multi30k (`make bench-terminology`).

Translates test_2016_flickr with the demo model (or -c CKPT) and the recipe's decode settings,
then again with 1-2 constraints per sentence taken from its reference: the reference's words of
at least 4 letters (punctuation stripped) that the unconstrained output misses, the longest
first (content words rather than articles), as in the terminology experiments of Post & Vilar
(2018) and Hu et al. (2019), where constraints come from the reference. Reports how many
constraints the outputs contain (in pieces and in the detokenized text), BLEU without and with
them, and decoding time. Writes experiments/decoding/results/terminology.json.

    python -m experiments.decoding.terminology [-c runs/demo/checkpoints/best.pt] [--recipe recipes/multi30k_en_de.yaml]
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import sacrebleu

from experiments.shared.demo_model import demo_parser, demo_test_set
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import translate_lines
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"


def words(text: str) -> list[str]:
    return [w for w in (re.sub(r"^\W+|\W+$", "", token) for token in text.split()) if w]


def pick_constraints(hypothesis: str, reference: str, most: int) -> list[str]:
    """The reference's words of 4+ letters the hypothesis lacks, longest first (first seen on ties)."""
    have = set(words(hypothesis))
    missing = []
    for word in words(reference):
        if len(word) >= 4 and word not in have and word not in missing:
            missing.append(word)
    return sorted(missing, key=lambda w: -len(w))[:most]


def contains_pieces(tokens: list[int], phrase: list[int]) -> bool:
    return any(tokens[i:i + len(phrase)] == phrase for i in range(len(tokens) - len(phrase) + 1))


def main() -> None:
    parser = demo_parser()
    parser.add_argument("--most", type=int, default=2, help="Constraints per sentence at most.")
    args = parser.parse_args()
    ckpt, sources, references = demo_test_set(args)
    translator = load_engine([ckpt])
    cfg = load_recipe(Path(args.recipe)).decode
    detok = translator.tgt_tokenizer.decode

    start = time.perf_counter()
    plain = [detok(h[0].tokens) for h in translate_lines(translator, sources, cfg)]
    plain_seconds = time.perf_counter() - start
    constraints = [pick_constraints(h, r, args.most) for h, r in zip(plain, references)]
    warnings: list[str] = []
    start = time.perf_counter()
    hyps = [h[0] for h in translate_lines(translator, sources, cfg, warn=warnings.append, constraints=constraints)]
    constrained_seconds = time.perf_counter() - start
    outputs = [detok(h.tokens) for h in hyps]

    phrases = [translator.tgt_tokenizer.encode(c) for c in constraints]
    total = sum(len(c) for c in constraints)
    in_pieces = sum(contains_pieces(h.tokens, p) for h, ps in zip(hyps, phrases) for p in ps)
    in_text = sum(word in words(out) for out, cs in zip(outputs, constraints) for word in cs)
    in_text_anywhere = sum(word in out for out, cs in zip(outputs, constraints) for word in cs)
    bleu_plain = sacrebleu.corpus_bleu(plain, [references])
    bleu_constrained = sacrebleu.corpus_bleu(outputs, [references])
    with_two = [i for i, c in enumerate(constraints) if len(c) == 2]
    report = {
        "checkpoint": str(ckpt), "test": args.test, "threads": args.threads, "decode": cfg.model_dump(),
        "sentences": len(sources), "sentences_with_constraints": sum(1 for c in constraints if c),
        "sentences_with_two": len(with_two), "constraints": total,
        "met_in_pieces": in_pieces, "met_in_text_as_words": in_text, "met_in_text_anywhere": in_text_anywhere,
        "warnings": len(warnings),
        "bleu_unconstrained": round(bleu_plain.score, 2), "bleu_constrained": round(bleu_constrained.score, 2),
        "length_ratio_unconstrained": round(bleu_plain.sys_len / bleu_plain.ref_len, 3),
        "length_ratio_constrained": round(bleu_constrained.sys_len / bleu_constrained.ref_len, 3),
        "seconds_unconstrained": round(plain_seconds, 2), "seconds_constrained": round(constrained_seconds, 2),
        "time_ratio": round(constrained_seconds / plain_seconds, 2),
        "examples": [{"source": sources[i], "constraints": constraints[i], "unconstrained": plain[i],
                      "constrained": outputs[i], "reference": references[i]} for i in with_two[:3]],
    }
    print({k: v for k, v in report.items() if k not in ("decode", "examples")}, flush=True)
    write_json(RESULTS / "terminology.json", report)


if __name__ == "__main__":
    main()
