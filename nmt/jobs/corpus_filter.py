"""Filtering a parallel corpus by how likely translation models find its pairs (`nmt filter`):
dual conditional cross-entropy (Junczys-Dowmunt, 2018, the best filter of WMT18's shared task
on noisy parallel corpora).

A forward model (source→target) and a reverse model (target→source) each score every pair by
forced decoding (`nmt likelihood`'s scores): H_f, the forward model's cross-entropy of the target
given the source, and H_r, the reverse model's of the source given the target, in nats per token,
the end-of-sentence token included (a target cut short shows there). A pair's score is

    |H_f - H_r| + (H_f + H_r) / 2        (lower is better; the paper's adequacy is exp(-score))

low when both models find the pair likely and agree on it: a misaligned pair or one whose target
says more or less than its source is unlikely one way or both, and a pair the two models judge
differently (one side fluent boilerplate, say) is suspect too. Without a reverse model, the score
is H_f alone (what `nmt distill --drop-worst` ranks the teacher's pairs by).

The pairs dropped: the `drop_worst` share of the scored pairs with the highest scores (ties broken
by line order), and any whose score is above `max_score`. A pair with an empty side is never
scored and never kept. The corpus is read twice (scored a chunk at a time, then the kept pairs
written), so only the scores are held: three numbers a pair.

`nmt filter -c en-de.pt --reverse-model de-en.pt --source crawl.en --target crawl.de -o clean`
(or `--corpus crawl.tsv`: any split a recipe takes, a path stem, TSV, CSV, TMX or hf:) writes
`clean.en`, `clean.de` and `clean.json` (the models, the settings, the counts, the scores' percentiles), each appearing
only when complete; `--scores FILE` writes each input pair's scores as a JSON line. The scores
are kept as they come in a hidden file beside the output (`.clean.scores.partial`), so that a run
stopped part way (Ctrl-C, a preempted job) goes on where it stopped when run again with the same
models, languages and precision (nmt.decode.resumable: the pairs scored are fingerprinted, both
sides). With `--nproc K`, K worker processes each load both models and score consecutive shares
of every chunk (nmt.decode.sharded), batched within their share.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from functools import partial
from itertools import islice
from pathlib import Path

import numpy as np

from nmt.data.corpora import open_corpus
from nmt.data.corpus import Corpus, TextPair, read_lines
from nmt.data.languages import check_direction
from nmt.decode.forced import score_pairs
from nmt.decode.resumable import Work, model_files, write_resumably
from nmt.decode.sharded import EngineSpec, processes
from nmt.decode.stream import refuse_to_overwrite, write_lines
from nmt.errors import NmtError
from nmt.files import hidden_beside, replaced_whole

CHUNK_PAIRS = 5000  # pairs read, sorted and scored together
FORWARD, REVERSE, DUAL = range(3)  # the columns of the scores
SCORING = Work("filtering", "score", "scored", "scoring pairs into it", "nmt filter", "pairs")  # (a stopped run's messages)


@dataclass
class Filtering:
    source_file: str
    target_file: str
    report_file: str
    read: int  # pairs
    written: int  # pairs kept
    empty: int  # left out: a side empty
    dropped: int  # left out by their scores
    max_kept_score: float | None  # the highest score kept (None: none kept)
    scored_by: str  # "dual cross-entropy" or "forward cross-entropy"
    minutes: float

    def describe(self) -> list[str]:
        worst = f" (scores above {self.max_kept_score:.3f})" if self.dropped and self.max_kept_score is not None else ""
        return [f"wrote {self.written:,} of {self.read:,} pairs: {self.source_file} and {self.target_file} "
                f"({self.empty:,} with an empty side left out; {self.dropped:,} dropped by {self.scored_by}{worst}); "
                f"{self.report_file}"]


@dataclass(frozen=True)
class ScorerSpec:
    """The models that score the pairs: the forward engine (several checkpoints averaged, or with
    `ensemble` scoring together) and a reverse model or None; what each worker process of
    `--nproc` loads (nmt.decode.sharded)."""
    forward: EngineSpec
    reverse_model: Path | None = None

    @classmethod
    def of(cls, checkpoints: list[Path], reverse_model: Path | None, device: str = "cpu", threads: int = 0,
           ensemble: bool = False, src_lang: str | None = None, tgt_lang: str | None = None) -> "ScorerSpec":
        return cls(EngineSpec(tuple(checkpoints), device, threads=threads, ensemble=ensemble, src_lang=src_lang,
                              tgt_lang=tgt_lang), reverse_model)

    def model_paths(self) -> dict[str, list[str]]:
        """The models' paths by role, as the report names them."""
        return {"forward_model": [str(c) for c in self.forward.checkpoints],
                "reverse_model": [str(self.reverse_model)] if self.reverse_model else []}

    def processes(self, nproc: int) -> Callable | None:
        """`nproc` worker processes that load these models (nmt.decode.sharded.processes), sharing
        --threads; None for one: this process."""
        return processes(nproc, self, self.forward.threads)

    def for_worker(self, rank: int, nproc: int, threads: int) -> "ScorerSpec":
        return replace(self, forward=self.forward.for_worker(rank, nproc, threads))

    def load(self) -> tuple:
        forward, reverse, _ = load_scorers(self)
        return forward, reverse


def load_scorers(spec: ScorerSpec) -> tuple:
    """(the forward engine, the reverse one or None, (source language, target language)): the
    reverse model read in the other direction, and one that does not translate it is an error."""
    from nmt.decode.engines.engine import choose_direction, load_engine

    src_lang, tgt_lang = spec.forward.src_lang, spec.forward.tgt_lang
    if src_lang == "auto":
        raise NmtError("--src-lang auto is nmt translate's: name the source language of the pairs to filter")
    forward = spec.forward.load()
    languages = (src_lang or forward.recipe.data.src_lang, tgt_lang or forward.recipe.data.tgt_lang)
    if spec.reverse_model is None:
        return forward, None, languages
    # in its recipe's direction, then the other
    reverse = load_engine([spec.reverse_model], spec.forward.device, threads=spec.forward.threads)
    check_reverse_direction(reverse.recipe, spec.reverse_model, *languages)
    choose_direction(reverse, languages[1], languages[0])
    return forward, reverse, languages


def corpus_opener(corpus: str | None, source: Path | None, target: Path | None) -> Callable[[tuple[str, str]], Corpus]:
    """What opens the pairs to filter once the models' languages are known: those `--corpus` names
    (a split as a recipe names one), or those of `--source` and `--target`. One way or the other,
    else a one-line error now, before any model loads."""
    if corpus is not None and (source is not None or target is not None):
        raise NmtError("give --corpus, or --source and --target, not both")
    if corpus is None and (source is None or target is None):
        raise NmtError("name the pairs to filter: --source and --target, or --corpus")
    if corpus is not None:
        return lambda languages: open_corpus(corpus, *languages)
    return lambda languages: TextPair.of_files(source, target)


def check_reverse_direction(reverse_recipe, path: Path, src_lang: str, tgt_lang: str) -> None:
    """A one-line error where the reverse model does not translate tgt_lang into src_lang."""
    data = reverse_recipe.data
    try:
        check_direction(data, tgt_lang, src_lang, zero_shot=False)
    except NmtError:
        directions = [f"{s}-{t}" for s, t in data.directions()]
        trained = ", ".join(directions[:6]) + (", ..." if len(directions) > 6 else "")
        raise NmtError(f"--reverse-model {path}: translates {trained}, not {tgt_lang}-{src_lang} "
                       "(the reverse of the pairs' direction)") from None


def dual_score(forward: np.ndarray, reverse: np.ndarray) -> np.ndarray:
    """Junczys-Dowmunt (2018)'s dual conditional cross-entropy: disagreement plus mean."""
    return np.abs(forward - reverse) + (forward + reverse) / 2


def cross_entropies(scorer, pairs: list[tuple[str, str]], max_tokens: int, precision: str,
                    warn: Callable[[str], None], first_line: int,
                    sides: tuple[str, str] = ("source", "target")) -> np.ndarray:
    """Nats per token (EOS included) of each pair's target given its source."""
    return np.array([-score.log_prob_per_token for score in
                     score_pairs(scorer, pairs, max_tokens, precision, warn, first_line, sides)], dtype=np.float64)


def score_pairs_in_chunks(forward, reverse, pairs: Iterator[tuple[str, str]], max_tokens: int, precision: str = "auto",
                          warn: Callable[[str], None] = lambda _: None, first_line: int = 1,
                          done: Callable[[int], None] = lambda _: None) -> Iterator[np.ndarray]:
    """For each chunk of pairs, an array of (H_f, H_r, score) per pair, in input order; NaN for a
    pair with an empty side, and H_r NaN without a reverse model. `done(n)` hears of the n pairs
    scored so far (from line 1: those of a stopped run's included), after each chunk."""
    while chunk := list(islice(pairs, CHUNK_PAIRS)):
        scores = np.full((len(chunk), 3), np.nan)
        # every pair scored, so that a warning names its own line; those with an empty side then unscored
        scores[:, FORWARD] = cross_entropies(forward, chunk, max_tokens, precision, warn, first_line)
        if reverse is not None:
            swapped = [(tgt, src) for src, tgt in chunk]
            scores[:, REVERSE] = cross_entropies(reverse, swapped, max_tokens, precision, warn, first_line,
                                                 sides=("target", "source"))
            scores[:, DUAL] = dual_score(scores[:, FORWARD], scores[:, REVERSE])
        else:
            scores[:, DUAL] = scores[:, FORWARD]
        scores[[i for i, (src, tgt) in enumerate(chunk) if not (src.strip() and tgt.strip())]] = np.nan
        yield scores
        first_line += len(chunk)
        done(first_line - 1)


def _score_share(max_tokens: int, precision: str, scorers: tuple, pairs: list[tuple[str, str]], first_line: int,
                 finished: Callable[[int], None]) -> tuple[np.ndarray, list[str]]:
    """A worker's share of a chunk (nmt.decode.sharded): its pairs' scores and its warnings."""
    warnings: list[str] = []
    forward, reverse = scorers
    scores = np.concatenate(list(score_pairs_in_chunks(forward, reverse, iter(pairs), max_tokens, precision,
                                                       warnings.append, first_line)))
    finished(len(pairs))
    return scores, warnings


def score_in_processes(processes: Callable, pairs: Iterator[tuple[str, str]], max_tokens: int,
                       precision: str = "auto", warn: Callable[[str], None] = lambda _: None, first_line: int = 1,
                       done: Callable[[int], None] = lambda _: None) -> Iterator[np.ndarray]:
    """`score_pairs_in_chunks` over worker processes (`processes`: nmt.decode.sharded.processes of
    a ScorerSpec): each share's scores in input order, warnings with the input's line numbers."""
    task = partial(_score_share, max_tokens, precision)
    for shares in processes(pairs, task, CHUNK_PAIRS, lambda n: done(first_line - 1 + n), first_line):
        for scores, warnings in shares:
            for warning in warnings:
                warn(warning)
            yield scores


def score_corpus(forward, reverse, corpus: Corpus, out_stem: str, made: dict, max_tokens: int,
                 precision: str = "auto", warn: Callable[[str], None] = lambda _: None,
                 done: Callable[[int], None] = lambda _: None, processes: Callable | None = None) -> np.ndarray:
    """Every pair's (H_f, H_r, score), written as they come to a hidden file beside the corpus,
    which a run stopped part way goes on from (made as `made` says: the models and settings);
    scored in `processes` where given (nmt.decode.sharded.processes), else in this one."""
    store = hidden_beside(Path(out_stem), "scores")

    def scored(lines: Iterator[str], before: int) -> Iterator[str]:
        pairs = (tuple(json.loads(line)) for line in lines)
        if processes is None:
            chunks = score_pairs_in_chunks(forward, reverse, pairs, max_tokens, precision, warn, before + 1, done)
        else:
            chunks = score_in_processes(processes, pairs, max_tokens, precision, warn, before + 1, done)
        for chunk in chunks:
            yield from (json.dumps([None if np.isnan(x) else float(x) for x in row]) for row in chunk)

    # each pair one line (both sides, so that the fingerprint of the pairs scored covers both files)
    pair_lines = (json.dumps(pair, ensure_ascii=False) for pair in corpus.pairs())
    write_resumably(store, Path(str(corpus)), made, pair_lines, scored, dict, CHUNK_PAIRS, done, SCORING)
    try:
        rows, blocks = (json.loads(line) for line in read_lines(store)), []
        while block := list(islice(rows, CHUNK_PAIRS)):  # (None: NaN)
            blocks.append(np.array(block, dtype=np.float64).reshape(-1, 3))
        return np.concatenate(blocks)
    finally:
        store.unlink()


def kept_pairs(score: np.ndarray, drop_worst: float = 0.0, max_score: float | None = None) -> np.ndarray:
    """Which pairs are kept (a boolean per pair), by their scores (NaN: never kept)."""
    scored = ~np.isnan(score)
    kept = scored.copy()
    if max_score is not None:
        kept &= np.where(scored, score, np.inf) <= max_score
    worst = math.floor(drop_worst * int(scored.sum()))
    if worst:
        candidates = np.flatnonzero(scored)
        order = candidates[np.lexsort((candidates, -score[candidates]))]  # highest score first, then line order
        kept[order[:worst]] = False
    return kept


PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)


def score_percentiles(score: np.ndarray) -> dict[str, float]:
    """The scored pairs' score at each of PERCENTILES ({"p10": X, ...}: a tenth of the pairs score
    above p90), for choosing a --max-score to use on this corpus or another; {} where none was scored."""
    scored = score[~np.isnan(score)]
    if not scored.size:
        return {}
    return {f"p{p}": round(float(x), 4) for p, x in zip(PERCENTILES, np.percentile(scored, PERCENTILES))}


def score_lines(scores: np.ndarray, kept: np.ndarray, dual: bool) -> Iterator[str]:
    """`--scores`'s lines: each pair's cross-entropies and score, and whether it was kept."""
    for row, keep in zip(scores, kept):
        if np.isnan(row[DUAL]):
            yield json.dumps({"empty": True, "kept": False})
        elif dual:
            yield json.dumps({"forward": round(float(row[FORWARD]), 4), "reverse": round(float(row[REVERSE]), 4),
                              "dual": round(float(row[DUAL]), 4), "kept": bool(keep)})
        else:
            yield json.dumps({"forward": round(float(row[FORWARD]), 4), "kept": bool(keep)})


def filter_corpus(forward, reverse, corpus: Corpus, out_stem: str, languages: tuple[str, str],
                  max_tokens: int, drop_worst: float = 0.0, max_score: float | None = None,
                  scores_file: str | None = None, precision: str = "auto", models: dict[str, list[str]] | None = None,
                  ensemble: bool = False, warn: Callable[[str], None] = lambda _: None,
                  done: Callable[[int], None] = lambda _: None, processes: Callable | None = None) -> Filtering:
    """Write `{out_stem}.{src}`, `{out_stem}.{tgt}` and `{out_stem}.json` (see the module's
    docstring); `reverse` None scores by the forward model alone; `models`: the paths of the models
    by role, which the report names and a stopped run's record describes (their files' sizes and
    times); `ensemble`: whether the forward checkpoints score together (else averaged);
    `processes`: worker processes that score the pairs (nmt.decode.sharded.processes of the
    models' ScorerSpec), None: this one."""
    if not 0.0 <= drop_worst < 1.0:
        raise NmtError(f"--drop-worst {drop_worst:g}: a share of the pairs, at least 0 and below 1")
    src_file, tgt_file, report_file = (f"{out_stem}.{languages[0]}", f"{out_stem}.{languages[1]}", f"{out_stem}.json")
    for written in (src_file, tgt_file, report_file, *([scores_file] if scores_file else [])):
        refuse_to_overwrite(written, [f["path"] for f in corpus.fingerprint().get("files", [])])  # before the models' work
    started = time.perf_counter()
    models = models or {}
    made = {name: model_files(paths) for name, paths in models.items()} | {
        "ensemble": ensemble, "languages": list(languages), "precision": precision}
    scores = score_corpus(forward, reverse, corpus, out_stem, made, max_tokens, precision, warn, done, processes)
    kept = kept_pairs(scores[:, DUAL], drop_worst, max_score)
    with replaced_whole(src_file) as sources, replaced_whole(tgt_file) as targets:  # both sides in one read
        for (src, tgt), keep in zip(corpus.pairs(), kept):
            if keep:
                sources.write(src + "\n")
                targets.write(tgt + "\n")
    if scores_file:
        write_lines(scores_file, score_lines(scores, kept, reverse is not None))
    empty = int(np.isnan(scores[:, DUAL]).sum())
    result = Filtering(src_file, tgt_file, report_file, len(scores), int(kept.sum()), empty,
                       len(scores) - empty - int(kept.sum()),
                       round(float(scores[kept, DUAL].max()), 4) if kept.any() else None,
                       "dual cross-entropy" if reverse is not None else "forward cross-entropy",
                       round((time.perf_counter() - started) / 60, 2))
    report = {**models, "ensemble": ensemble, "corpus": str(corpus), "drop_worst": drop_worst,
              "max_score": max_score, "scores_file": scores_file, **asdict(result),
              "score_percentiles": score_percentiles(scores[:, DUAL])}
    write_lines(report_file, [json.dumps(report, indent=1)])
    return result
