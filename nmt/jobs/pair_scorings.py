"""How `nmt filter` scores a corpus's pairs: by translation models' cross-entropies, or by a
quality-estimation model (CometKiwi).

Translation models score a pair by forced decoding (`nmt likelihood`'s scores): H_f, the forward
model's cross-entropy of the target given the source, and H_r, the reverse model's of the source
given the target, in nats per token, the end-of-sentence token included (a target cut short shows
there). With a reverse model a pair's score is Junczys-Dowmunt (2018)'s dual conditional
cross-entropy, the best filter of WMT18's shared task on noisy parallel corpora,

    |H_f - H_r| + (H_f + H_r) / 2        (lower is better; the paper's adequacy is exp(-score))

low when both models find the pair likely and agree on it; without one, H_f alone.

A domain model (the forward model fine-tuned on in-domain or trusted data, same direction and
target vocabulary) adds H_d, its cross-entropy of the target given the source, and ranks by the
cross-entropy difference

    H_d - H_f                            (lower: likelier in the domain than in general)

Moore and Lewis (2010)'s difference of language models, as Axelrod et al. (2011) select
in-domain pairs by it, with conditional translation models in their place as Wang et al. (2018)
use them to select trusted data; a pair's H_f alone would favour short, common sentences, its
difference does not. With a reverse model as well, the dual score and the difference are added
(the product of the two features' exponentials, as Junczys-Dowmunt combines his).

With `--nproc K`, K worker processes each load the models and score consecutive shares of every
chunk (nmt.decode.sharded), batched within their share.

A CometKiwi model (unbabel-comet, extra `comet`) instead estimates each pair's quality from the
source and the target alone, higher better (Peter et al., 2023, filter corpora by it); its
estimate, negated, ranks.

Each chunk of pairs comes out as an array of COLUMNS per pair, in input order: NaN where a scoring
has no such number, and in every column for a pair never scored nor kept: one with an empty side,
or whose target copies its source (`unscored`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import islice
from pathlib import Path
from typing import NamedTuple

import numpy as np

from nmt.data.clean import is_copy
from nmt.data.languages import check_direction
from nmt.decode.forced import score_pairs
from nmt.decode.sharded import EngineSpec, processes, worker_device
from nmt.errors import NmtError

# H_f, H_r, H_d, CometKiwi's estimate, the ranking's (lower is better)
COLUMNS = ("forward", "reverse", "domain", "qe", "score")
FORWARD, REVERSE, DOMAIN, QE, SCORE = range(len(COLUMNS))
Pair = tuple[str, str]
QE_SCORING = "CometKiwi quality estimation"  # (Scoring.by)


@dataclass
class Scoring:
    """What a filtering scores its pairs by, and what its report and a stopped run's record say of it."""
    by: str  # "dual cross-entropy", "forward cross-entropy", "cross-entropy difference", ... (scoring_name)
    languages: tuple[str, str]  # the pairs' (source, target)
    models: dict[str, list[str]]  # the models' paths by role
    # chunks(pairs, size, first_line, warn, done): an array of COLUMNS per pair, `size` pairs at a time;
    # warnings name the input's lines from `first_line`, and done(n) hears of the pairs scored since line 1
    chunks: Callable[..., Iterator[np.ndarray]]
    settings: dict = field(default_factory=dict)  # what else the scores depend on: ensemble, precision

    @property
    def by_qe(self) -> bool:
        return self.by == QE_SCORING


def unscored(chunk: list[Pair], translated: bool = True) -> list[int]:
    """The pairs of a chunk never scored nor kept: those with an empty side and, where the
    languages differ (`translated`), those whose target copies the source (nmt.data.clean.is_copy,
    as `nmt prepare` drops them): a model trained on a corpus with such copies finds them likelier
    than translations, and would rank them first."""
    return [i for i, (src, tgt) in enumerate(chunk)
            if not (src.strip() and tgt.strip()) or (translated and is_copy(src, tgt))]


# -- translation models ------------------------------------------------------------------------

@dataclass(frozen=True)
class ScorerSpec:
    """The translation models that score the pairs: the forward engine (several checkpoints
    averaged, or with `ensemble` scoring together), a reverse model or None and a domain model or
    None; what each worker process of `--nproc` loads (nmt.decode.sharded)."""
    forward: EngineSpec
    reverse_model: Path | None = None
    domain_model: Path | None = None

    @classmethod
    def of(cls, checkpoints: list[Path], reverse_model: Path | None, device: str = "cpu", threads: int = 0,
           ensemble: bool = False, src_lang: str | None = None, tgt_lang: str | None = None,
           domain_model: Path | None = None) -> "ScorerSpec":
        return cls(EngineSpec(tuple(checkpoints), device, threads=threads, ensemble=ensemble, src_lang=src_lang,
                              tgt_lang=tgt_lang), reverse_model, domain_model)

    def model_paths(self) -> dict[str, list[str]]:
        """The models' paths by role, as the report names them."""
        paths = {"forward_model": [str(c) for c in self.forward.checkpoints],
                 "reverse_model": [str(self.reverse_model)] if self.reverse_model else []}
        return paths | ({"domain_model": [str(self.domain_model)]} if self.domain_model else {})

    def processes(self, nproc: int) -> Callable | None:
        """`nproc` worker processes that load these models (nmt.decode.sharded.processes), sharing
        --threads; None for one: this process."""
        return processes(nproc, self, self.forward.threads)

    def for_worker(self, rank: int, nproc: int, threads: int) -> "ScorerSpec":
        return replace(self, forward=self.forward.for_worker(rank, nproc, threads))

    def load(self) -> "Scorers":
        return load_scorers(self)


class Scorers(NamedTuple):
    """The loaded engines that score pairs, and the pairs' languages."""
    forward: object
    reverse: object | None
    domain: object | None
    languages: tuple[str, str]  # (source, target)


def scoring_name(reverse: bool, domain: bool) -> str:
    """What a scoring by translation models ranks by (its report's `scored_by`)."""
    return {(False, False): "forward cross-entropy", (True, False): "dual cross-entropy",
            (False, True): "cross-entropy difference",
            (True, True): "dual cross-entropy and cross-entropy difference"}[reverse, domain]


def load_scorers(spec: ScorerSpec) -> Scorers:
    """The engines, the reverse model read in the other direction and the domain model in the
    forward model's: one that does not translate its direction is an error, and so is a domain
    model whose target pieces are not the forward model's (cross-entropies per piece of two
    vocabularies do not compare)."""
    from nmt.decode.engines.engine import choose_direction, load_engine

    src_lang, tgt_lang = spec.forward.src_lang, spec.forward.tgt_lang
    if src_lang == "auto":
        raise NmtError("--src-lang auto is nmt translate's: name the source language of the pairs to filter")
    forward = spec.forward.load()
    languages = (src_lang or forward.recipe.data.src_lang, tgt_lang or forward.recipe.data.tgt_lang)
    reverse = domain = None
    if spec.reverse_model is not None:  # in its recipe's direction, then the other
        reverse = load_engine([spec.reverse_model], spec.forward.device, threads=spec.forward.threads)
        check_model_direction(reverse.recipe, "--reverse-model", spec.reverse_model, languages[1], languages[0])
        choose_direction(reverse, languages[1], languages[0])
    if spec.domain_model is not None:
        domain = load_engine([spec.domain_model], spec.forward.device, threads=spec.forward.threads)
        check_model_direction(domain.recipe, "--domain-model", spec.domain_model, *languages)
        choose_direction(domain, *languages)
        if domain.tgt_tokenizer.serialized_model_proto() != forward.tgt_tokenizer.serialized_model_proto():
            raise NmtError(f"--domain-model {spec.domain_model}: its target tokenizer is not -c's, so their "
                           "cross-entropies per piece do not compare; fine-tune it from -c (nmt train --init-from)")
    return Scorers(forward, reverse, domain, languages)


def check_model_direction(recipe, option: str, path: Path, src_lang: str, tgt_lang: str) -> None:
    """A one-line error where the model of `option` does not translate src_lang into tgt_lang."""
    data = recipe.data
    try:
        check_direction(data, src_lang, tgt_lang, zero_shot=False)
    except NmtError:
        directions = [f"{s}-{t}" for s, t in data.directions()]
        trained = ", ".join(directions[:6]) + (", ..." if len(directions) > 6 else "")
        which = "the reverse of the pairs' direction" if option == "--reverse-model" else "the pairs' direction"
        raise NmtError(f"{option} {path}: translates {trained}, not {src_lang}-{tgt_lang} ({which})") from None


def dual_score(forward: np.ndarray, reverse: np.ndarray) -> np.ndarray:
    """Junczys-Dowmunt (2018)'s dual conditional cross-entropy: disagreement plus mean."""
    return np.abs(forward - reverse) + (forward + reverse) / 2


def cross_entropies(scorer, pairs: list[Pair], max_tokens: int, precision: str, warn: Callable[[str], None],
                    first_line: int, sides: tuple[str, str] = ("source", "target")) -> np.ndarray:
    """Nats per token (EOS included) of each pair's target given its source."""
    return np.array([-score.log_prob_per_token for score in
                     score_pairs(scorer, pairs, max_tokens, precision, warn, first_line, sides)], dtype=np.float64)


def ranking_score(scores: np.ndarray, with_reverse: bool, with_domain: bool) -> np.ndarray:
    """The score that ranks pairs by translation models, from their rows of COLUMNS: H_f alone;
    the dual score with a reverse model's H_r; the difference H_d - H_f with a domain model's H_d;
    with both, their sum."""
    forward, reverse, domain = scores[:, FORWARD], scores[:, REVERSE], scores[:, DOMAIN]
    if not (with_reverse or with_domain):
        return forward.copy()
    return (dual_score(forward, reverse) if with_reverse else 0.0) + (domain - forward if with_domain else 0.0)


def score_pairs_in_chunks(scorers: Scorers, pairs: Iterator[Pair], size: int, max_tokens: int,
                          precision: str = "auto", first_line: int = 1, warn: Callable[[str], None] = lambda _: None,
                          done: Callable[[int], None] = lambda _: None, translated: bool = True) -> Iterator[np.ndarray]:
    """For each chunk of `size` pairs, their COLUMNS by the translation models (H_r and H_d NaN
    without a reverse or a domain model). `done(n)` hears of the n pairs scored so far (from line
    1: those of a stopped run's included), after each chunk."""
    while chunk := list(islice(pairs, size)):
        scores = np.full((len(chunk), len(COLUMNS)), np.nan)
        # every pair scored, so that a warning names its own line; those with an empty side then unscored
        scores[:, FORWARD] = cross_entropies(scorers.forward, chunk, max_tokens, precision, warn, first_line)
        if scorers.reverse is not None:
            swapped = [(tgt, src) for src, tgt in chunk]
            scores[:, REVERSE] = cross_entropies(scorers.reverse, swapped, max_tokens, precision, warn, first_line,
                                                 sides=("target", "source"))
        if scorers.domain is not None:  # (its warnings are the forward model's, of the same pieces)
            scores[:, DOMAIN] = cross_entropies(scorers.domain, chunk, max_tokens, precision, lambda _: None, first_line)
        scores[:, SCORE] = ranking_score(scores, scorers.reverse is not None, scorers.domain is not None)
        scores[unscored(chunk, translated)] = np.nan
        yield scores
        first_line += len(chunk)
        done(first_line - 1)


def _score_share(max_tokens: int, precision: str, translated: bool, scorers: Scorers, pairs: list[Pair],
                 first_line: int, finished: Callable[[int], None]) -> tuple[np.ndarray, list[str]]:
    """A worker's share of a chunk (nmt.decode.sharded): its pairs' scores and its warnings."""
    warnings: list[str] = []
    scores = np.concatenate(list(score_pairs_in_chunks(scorers, iter(pairs), max(len(pairs), 1), max_tokens,
                                                       precision, first_line, warnings.append, translated=translated)))
    finished(len(pairs))
    return scores, warnings


def score_in_processes(processes: Callable, task: Callable, pairs: Iterator[Pair], size: int, first_line: int = 1,
                       warn: Callable[[str], None] = lambda _: None,
                       done: Callable[[int], None] = lambda _: None) -> Iterator[np.ndarray]:
    """Chunks of `size` pairs scored in worker processes (`processes`: nmt.decode.sharded.processes
    of a spec whose models `task` scores a share with: `_score_share`, `_qe_share`): each share's
    scores in input order, warnings with the input's line numbers."""
    for shares in processes(pairs, task, size, lambda n: done(first_line - 1 + n), first_line):
        for scores, warnings in shares:
            for warning in warnings:
                warn(warning)
            yield scores


def translation_scoring(scorers: Scorers, max_tokens: int, precision: str = "auto",
                        models: dict[str, list[str]] | None = None, ensemble: bool = False,
                        processes: Callable | None = None) -> Scoring:
    """Scoring by loaded translation models, in this process or in `processes`
    (ScorerSpec.processes, whose workers load the same); `models`: their paths by role."""
    languages = scorers.languages
    translated = languages[0] != languages[1]
    def chunks(pairs: Iterator[Pair], size: int, first_line: int, warn: Callable[[str], None],
               done: Callable[[int], None]) -> Iterator[np.ndarray]:
        if processes is None:
            return score_pairs_in_chunks(scorers, pairs, size, max_tokens, precision, first_line, warn, done,
                                         translated)
        return score_in_processes(processes, partial(_score_share, max_tokens, precision, translated), pairs, size,
                                  first_line, warn, done)

    name = scoring_name(scorers.reverse is not None, scorers.domain is not None)
    return Scoring(name, languages, models or {}, chunks, {"ensemble": ensemble, "precision": precision})


# -- a quality-estimation model ----------------------------------------------------------------

def qe_chunks(scorer, pairs: Iterator[Pair], size: int, first_line: int = 1,
              warn: Callable[[str], None] = lambda _: None,
              done: Callable[[int], None] = lambda _: None, translated: bool = True) -> Iterator[np.ndarray]:
    """For each chunk of `size` pairs, their COLUMNS by a CometKiwi model (`scorer`: an
    nmt.metrics.comet.CometScorer): its estimate, and negated, the score."""
    while chunk := list(islice(pairs, size)):
        scores = np.full((len(chunk), len(COLUMNS)), np.nan)
        left_out = set(unscored(chunk, translated))
        rows = [i for i in range(len(chunk)) if i not in left_out]
        if rows:
            estimates = scorer.score([chunk[i][0] for i in rows], [chunk[i][1] for i in rows]).segments
            scores[rows, QE] = estimates
            scores[rows, SCORE] = -np.array(estimates)
        yield scores
        first_line += len(chunk)
        done(first_line - 1)


def _qe_share(translated: bool, scorer, pairs: list[Pair], first_line: int,
              finished: Callable[[int], None]) -> tuple[np.ndarray, list]:
    """A worker's share of a chunk (nmt.decode.sharded): its pairs' scores by the CometKiwi model."""
    [scores] = qe_chunks(scorer, iter(pairs), max(len(pairs), 1), first_line, translated=translated)
    finished(len(pairs))
    return scores, []


@dataclass(frozen=True)
class QeSpec:
    """The CometKiwi model each worker process of `--nproc` loads (nmt.decode.sharded)."""
    model: Path
    device: str = "cpu"
    threads: int = 0  # 0: torch's default

    def for_worker(self, rank: int, nproc: int, threads: int) -> "QeSpec":
        """Worker `rank`'s: `threads` // nproc threads (at least 1); on CUDA, the rank's device."""
        return replace(self, device=worker_device(self.device, rank), threads=max(1, threads // nproc))

    def load(self):
        import torch

        from nmt.metrics.comet import CometScorer

        if self.threads:
            torch.set_num_threads(self.threads)
        return CometScorer(self.model, "cometkiwi", self.device)


def qe_scoring(model: Path, languages: tuple[str | None, str | None], device: str = "cpu", threads: int = 0,
               nproc: int = 1) -> Scoring:
    """Scoring by the CometKiwi model in directory `model`, in this process or in `nproc` worker
    processes sharing `threads`; the languages must be named (no translation model says them)."""
    from nmt.metrics.comet import REFERENCE_FREE, model_files

    if None in languages:
        raise NmtError("--qe-model: name the pairs' languages with --src-lang and --tgt-lang")
    kind = model_files(model)[1]["class_identifier"]
    if kind not in REFERENCE_FREE:
        raise NmtError(f"--qe-model {model}: a COMET model of type {kind}, which needs references; filtering takes "
                       "a quality-estimation model (CometKiwi)")
    spec = QeSpec(Path(model), device, threads)
    workers = processes(nproc, spec, threads)
    scorer = spec.load()  # here too: a model that cannot load is one line before any process starts
    translated = languages[0] != languages[1]
    if workers is None:
        chunks = partial(qe_chunks, scorer, translated=translated)
    else:
        chunks = partial(score_in_processes, workers, partial(_qe_share, translated))
    return Scoring(QE_SCORING, languages, {"qe_model": [str(model)]}, chunks)


def load_scoring(checkpoints: list[Path] | None, reverse_model: Path | None = None, qe_model: Path | None = None,
                 device: str = "cpu", threads: int = 0, ensemble: bool = False, src_lang: str | None = None,
                 tgt_lang: str | None = None, nproc: int = 1, decode_from: Path | None = None,
                 settings: list[str] = (), max_tokens: int | None = None, domain_model: Path | None = None) -> Scoring:
    """The scoring `nmt filter`'s options ask for, its models loaded: translation models (-c, with
    --reverse-model for dual cross-entropy and --domain-model for the cross-entropy difference;
    their decode settings as `nmt likelihood` resolves them) or a CometKiwi model (--qe-model),
    one or the other."""
    from nmt.decode.translate import decode_settings

    if qe_model is not None:
        for_translation_models = [name for name, given in (
            ("-c", bool(checkpoints)), ("--reverse-model", reverse_model is not None),
            ("--domain-model", domain_model is not None), ("--ensemble", ensemble),
            ("--max-tokens", max_tokens is not None), ("--decode-from", decode_from is not None),
            ("--set", bool(settings))) if given]
        if for_translation_models:
            raise NmtError(f"--qe-model ranks by a CometKiwi model alone: {', '.join(for_translation_models)} "
                           "are for translation models")
        return qe_scoring(qe_model, (src_lang, tgt_lang), device, threads, nproc)
    if not checkpoints:
        raise NmtError("name the models to score by: -c (and --reverse-model), or --qe-model")
    spec = ScorerSpec.of(checkpoints, reverse_model, device, threads, ensemble, src_lang, tgt_lang, domain_model)
    workers = spec.processes(nproc)  # (--nproc checked before the models load)
    scorers = load_scorers(spec)
    cfg = decode_settings(scorers.forward.recipe, decode_from, {"max_tokens": max_tokens}, list(settings))
    return translation_scoring(scorers, cfg.max_tokens, cfg.precision, spec.model_paths(), ensemble, workers)
