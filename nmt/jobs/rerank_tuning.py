"""`nmt rerank-tune`: the weights of decode.rerank chosen on a dev set by grid search.

The beam's N best of each dev line are scored once by every model (search, reverse model,
CometKiwi: nmt.decode.rerank); then every combination of weights in the grid picks each line's
candidate, and the combination whose picks score best against the references (corpus BLEU or
chrF, sacrebleu's) wins; ties go to the smaller weights, so weight 0 (the beam's own choice) wins
unless another does better. Weights of 0 are always in the grid: the result says what the beam
alone scores.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from nmt.config import DecodeConfig, RerankConfig
from nmt.decode.rerank import Candidate, features, rerank_order
from nmt.decode.text.casing import hypothesis_text
from nmt.decode.translate import translate_lines
from nmt.errors import NmtError
from nmt.metrics.chrf import WORD_ORDER

DEFAULT_GRID = (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0)


@dataclass
class Tuning:
    best: dict  # reverse_weight, qe_weight and the metric's score
    beam: dict  # the same with both weights 0: the beam's own choice
    grid: list[dict]  # every combination tried, in order
    candidates: int
    lines: int
    metric: str


def corpus_score(metric: str, hypotheses: list[str], references: list[str], tgt_lang: str | None = None) -> float:
    """BLEU (tokenized for `tgt_lang`: nmt.metrics.bleu.target_tokenizer), chrF or chrF++."""
    from sacrebleu.metrics import CHRF

    from nmt.data.languages import two_letter
    from nmt.metrics.bleu import make_bleu, target_tokenizer

    if metric == "bleu":
        scorer = make_bleu(target_tokenizer(two_letter(tgt_lang) if tgt_lang else None))
    else:
        scorer = CHRF(word_order=WORD_ORDER[metric])
    return scorer.corpus_score(hypotheses, [references]).score


def pick(lines: list[list[Candidate]], cfg: RerankConfig) -> list[str]:
    """Each line's best candidate under cfg's weights, as decoding picks it (nmt.decode.rerank)."""
    return [candidates[rerank_order(candidates, cfg)[0][0]].text if candidates else "" for candidates in lines]


def tune_rerank(translator, sources: list[str], references: list[str], cfg: DecodeConfig, metric: str = "bleu",
                grid: tuple[float, ...] = DEFAULT_GRID) -> Tuning:
    """Search the grid of decode.rerank's weights (those of the models `cfg.rerank` names) on
    `sources` and `references`; `cfg.rerank.candidates` is N."""
    n = cfg.rerank.candidates
    if not n:
        raise NmtError("rerank-tune needs decode.rerank.candidates (N, the n-best list's length)")
    if metric != "bleu" and metric not in WORD_ORDER:
        raise NmtError(f"--metric {metric}: choose bleu, chrf or chrf++")
    if len(sources) != len(references):
        raise NmtError(f"{len(sources)} sources but {len(references)} references: they must align line by line")
    search_cfg = cfg.model_copy(update={"nbest": n, "rerank": cfg.rerank.model_copy(update={"candidates": 0})})
    nbest = translate_lines(translator, sources, search_cfg)
    texts = [[hypothesis_text(translator.tgt_tokenizer, h) for h in hyps] for hyps in nbest]
    data = translator.recipe.data
    languages = translator.controls.languages or (data.src_lang, data.tgt_lang)
    lines = features(cfg.rerank, languages, sources, texts, [[h.score for h in hyps] for hyps in nbest], cfg.max_tokens)
    reverse_grid = grid if cfg.rerank.reverse_model else (0.0,)
    qe_grid = grid if cfg.rerank.qe_model else (0.0,)
    tried = []
    for reverse_weight, qe_weight in itertools.product(sorted(set(reverse_grid) | {0.0}), sorted(set(qe_grid) | {0.0})):
        weights = RerankConfig(reverse_weight=reverse_weight, qe_weight=qe_weight)
        score = corpus_score(metric, pick(lines, weights), references, languages[1])
        tried.append({"reverse_weight": reverse_weight, "qe_weight": qe_weight, metric: round(score, 4)})
    best = max(tried, key=lambda row: (row[metric], -(row["reverse_weight"] + row["qe_weight"])))
    beam = next(row for row in tried if row["reverse_weight"] == row["qe_weight"] == 0.0)
    return Tuning(best, beam, tried, n, len(sources), metric)


def tune_files(checkpoints: list[Path], source: Path, reference: Path, candidates: int, reverse_model: Path | None,
               qe_model: Path | None, metric: str, grid: tuple[float, ...], output: Path | None, device: str = "cpu",
               threads: int = 0, decode_from: Path | None = None, overrides: list[str] = ()) -> tuple[Tuning, str]:
    """`nmt rerank-tune`: the search on two files, written as JSON to `output` (if given); returns
    the search and the --set flags of its best weights."""
    from nmt.data.corpus import read_lines
    from nmt.decode.engines.engine import load_engine
    from nmt.decode.translate import decode_settings

    if not reverse_model and not qe_model:
        raise NmtError("rerank-tune needs --reverse-model or --qe-model")
    translator = load_engine(checkpoints, device, threads=threads)
    settings = [f"decode.rerank.candidates={candidates}",
                f"decode.beam_size={max(candidates, translator.recipe.decode.beam_size)}",
                *(f"decode.rerank.{key}={value}" for key, value in (("reverse_model", reverse_model),
                                                                    ("qe_model", qe_model)) if value),
                *overrides]
    cfg = decode_settings(translator.recipe, decode_from, {}, settings)
    tuning = tune_rerank(translator, list(read_lines(source)), list(read_lines(reference)), cfg, metric, grid)
    if output:
        output.write_text(json.dumps(asdict(tuning), indent=1) + "\n", encoding="utf-8")
    flags = [f"--set decode.rerank.candidates={candidates}"]
    for key, path in (("reverse", reverse_model), ("qe", qe_model)):
        if path:
            flags += [f"--set decode.rerank.{key}_model={path}", f"--set decode.rerank.{key}_weight={tuning.best[key + '_weight']}"]
    return tuning, " ".join(flags)
