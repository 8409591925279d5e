"""Validation: loss and perplexity on the dev set (one per direction when the corpora hold several),
BLEU of greedy translations of it (and chrF or COMET, where train.valid_metric asks), and the rule
that picks best.pt."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import sacrebleu
import torch

from nmt.config import Recipe
from nmt.data.batching import collate, epoch_batches, pack_by_tokens
from nmt.data.corpora import recipe_corpus
from nmt.data.languages import two_letter
from nmt.data.shards import ParallelShards
from nmt.data.tokenizer import output_text
from nmt.decode.search import greedy_search
from nmt.metrics.bleu import make_bleu, target_tokenizer
from nmt.metrics.chrf import WORD_ORDER
from nmt.model.transformer import Transformer


@dataclass
class ValidSet:
    label: str  # the direction (en-de) with several, else ""
    pairs: ParallelShards
    references: list[str]  # the first valid_bleu_sentences target lines, for BLEU
    sources: list[str]  # their source lines (COMET reads them)
    bleu_tokenize: str | None = None  # BLEU's tokenizer for the target language (None: 13a)


def valid_sets(recipe: Recipe, shards: Path) -> list[ValidSet]:
    """The dev set, or one per direction (`valid.en-de`, ...) when the corpora hold several, each
    with the first valid_bleu_sentences references for BLEU."""
    data = recipe.data
    directions = data.directions() if data.multidirectional else [(data.src_lang, data.tgt_lang)]
    sets = []
    for src, tgt in directions:
        label = f"{src}-{tgt}" if data.multidirectional else ""
        pairs = ParallelShards(shards, f"valid.{label}" if label else "valid", data.forced_target_tokens)
        n_refs = min(recipe.train.valid_bleu_sentences, len(pairs))
        corpus = recipe_corpus(data, data.valid, src, tgt)
        sets.append(ValidSet(label, pairs, [line for _, line in zip(range(n_refs), corpus.side("tgt"))],
                             [line for _, line in zip(range(n_refs), corpus.side("src"))],
                             target_tokenizer(two_letter(tgt))))
    return sets


def validate(model: Transformer, sets: list[ValidSet], recipe: Recipe, tgt_tokenizer, device: torch.device) -> dict:
    """Dev nll, ppl (and BLEU); with several directions, each one's (nll_en-de, bleu_en-de, ...) and
    their means (nll, bleu), which pick best.pt."""
    model.eval()
    max_tokens, decode = recipe.train.max_tokens, recipe.decode
    results = []
    for valid in sets:
        one = dev_loss(model, valid.pairs, max_tokens, device)
        if recipe.train.valid_bleu_sentences > 0:
            hypotheses = dev_translations(model, valid.pairs, len(valid.references), tgt_tokenizer, max_tokens,
                                          device, decode.max_len_a, decode.max_len_b)
            one |= translation_scores(hypotheses, valid, recipe.train.valid_metric, recipe.train.valid_comet_model,
                                      str(device))
        results.append(one)
    model.train()
    if len(results) == 1:
        return results[0]
    mean = {key: sum(r[key] for r in results) / len(results) for key in results[0]}
    mean["ppl"] = math.exp(mean["nll"])  # of the mean nll, as each direction's is of its own
    return mean | {f"{key}_{valid.label}": r[key] for valid, r in zip(sets, results) for key in r}


def improved(progress, result: dict, metric: str) -> bool:
    """The best-checkpoint rule: does `result` beat the run's best `metric` (bleu, chrf, comet, or
    nll, which is compared negated)? Updates the run's best score, its step and the validations since."""
    score = -result["nll"] if metric == "nll" else result[metric]
    if progress.best_score is None or score > progress.best_score:
        progress.best_score, progress.best_step, progress.bad_validations = score, progress.step, 0
        return True
    progress.bad_validations += 1
    return False


@torch.no_grad()
def dev_loss(model: Transformer, data: ParallelShards, max_tokens: int, device: torch.device) -> dict:
    """Mean negative log-likelihood per target token (no label smoothing) and its perplexity."""
    total_nll, total_tokens = 0.0, 0
    for indices in epoch_batches(data, max_tokens, seed=0, epoch=0, shuffle=False):
        batch = collate(data, indices, start=model.start_token).to(device)
        total_nll += model(batch.src, batch.tgt_in, batch.out_positions, batch.out_targets, label_smoothing=0.0).item()
        total_tokens += batch.n_tgt_tokens
    nll = total_nll / max(total_tokens, 1)
    return {"nll": nll, "ppl": math.exp(min(nll, 100.0))}


def dev_translations(model: Transformer, data: ParallelShards, n: int, tgt_tokenizer, max_tokens: int,
                     device: torch.device, max_len_a: float, max_len_b: int) -> list[str]:
    """Greedy translations of the first n dev sentences."""
    lengths = data.src.lengths[:n] + 1
    hypotheses: list[str] = [""] * n
    for indices in pack_by_tokens(np.argsort(lengths, kind="stable"), lengths, max_tokens):
        src = collate(data, indices).src.to(device)
        forced = data.forced_target_tokens  # a decoder-side language token: given, then taken off
        prefixes = [data.tgt[i][:forced].tolist() for i in indices] if forced else None
        for i, hyp in zip(indices.tolist(), greedy_search(model, src, max_len_a, max_len_b, prefixes=prefixes)):
            hypotheses[i] = output_text(tgt_tokenizer, hyp.tokens[forced:])
    return hypotheses


def translation_scores(hypotheses: list[str], valid: ValidSet, metric: str, comet_model: str | None,
                       device: str = "cpu") -> dict:
    """Corpus BLEU of the dev translations (sacrebleu's defaults, with its tokenizer for the target
    language: nmt.metrics.bleu.target_tokenizer), and valid_metric's score where it is another:
    chrF, chrF++ or COMET's system score (its model loaded once per process)."""
    scores = {"bleu": make_bleu(valid.bleu_tokenize).corpus_score(hypotheses, [valid.references]).score}
    if metric in WORD_ORDER:  # chrf, or chrf++: word bigrams too
        scores[metric] = sacrebleu.corpus_chrf(hypotheses, [valid.references], word_order=WORD_ORDER[metric]).score
    if metric == "comet":
        scores["comet"] = _comet(comet_model, device).score(valid.sources, hypotheses, valid.references).system
    return scores


@lru_cache(maxsize=1)
def _comet(directory: str, device: str):
    from nmt.metrics.comet import CometScorer

    return CometScorer(directory, "comet", device)
