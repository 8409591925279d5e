"""Filtering a parallel corpus by how likely models find its pairs (`nmt filter`): dual
conditional cross-entropy of a forward and a reverse translation model (Junczys-Dowmunt, 2018),
the forward model's cross-entropy alone, the cross-entropy difference of a domain model and the
forward model (data selection), or a CometKiwi model's quality estimate (how each is scored:
nmt.jobs.pair_scorings).

The pairs dropped: the `drop_worst` share of the scored pairs with the worst scores (ties broken
by line order), and any scored above `max_score` (cross-entropies) or estimated below `min_qe`
(CometKiwi); with `keep_best` N, all but the N best of those left (data selection: the N pairs
most like a domain). A pair with an empty side, or whose target copies its source (in a corpus of two
languages), is never scored and never kept. The corpus is read twice (scored a chunk at a time,
then the kept pairs written), so only the scores are held: len(COLUMNS) numbers a pair.

`nmt filter -c en-de.pt --reverse-model de-en.pt --source crawl.en --target crawl.de -o clean`
(or `--corpus crawl.tsv`: any split a recipe takes, a path stem, TSV, CSV, TMX or hf:) writes
`clean.en`, `clean.de` and `clean.json` (the models, the settings, the counts, the scores'
percentiles), each appearing only when complete; `--scores FILE` writes each input pair's scores
as a JSON line. The scores are kept as they come in a hidden file beside the output
(`.clean.scores.partial`), so that a run stopped part way (Ctrl-C, a preempted job) goes on where
it stopped when run again with the same models, languages and settings (nmt.decode.resumable: the
pairs scored are fingerprinted, both sides).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from itertools import islice
from pathlib import Path

import numpy as np

from nmt.data.clean import is_copy
from nmt.data.corpus import Corpus, read_lines, side_file, written_stem
from nmt.decode.resumable import Work, model_files, write_resumably
from nmt.decode.stream import refuse_to_overwrite, write_lines
from nmt.errors import NmtError
from nmt.files import hidden_beside, replaced_whole
from nmt.jobs.pair_scorings import COLUMNS, DOMAIN, FORWARD, QE, REVERSE, SCORE, Scoring, dual_score

CHUNK_PAIRS = 5000  # pairs read, sorted and scored together
SCORING = Work("filtering", "score", "scored", "scoring pairs into it", "nmt filter", "pairs")  # (a stopped run's messages)


@dataclass
class Filtering:
    source_file: str
    target_file: str
    report_file: str
    read: int  # pairs
    written: int  # pairs kept
    empty: int  # left out: a side empty
    copies: int  # left out: the target copies the source
    dropped: int  # left out by their scores
    scored_by: str  # "dual cross-entropy", "cross-entropy difference", "CometKiwi quality estimation", ...
    max_kept_score: float | None  # cross-entropies: the highest score kept (None: none kept, or by QE)
    min_kept_qe: float | None  # CometKiwi: the lowest estimate kept (None: none kept, or by cross-entropies)
    minutes: float

    def describe(self) -> list[str]:
        worst = ""
        if self.dropped and self.max_kept_score is not None:
            worst = f" (scores above {self.max_kept_score:.3f})"
        elif self.dropped and self.min_kept_qe is not None:
            worst = f" (estimates below {self.min_kept_qe:.3f})"
        return [f"wrote {self.written:,} of {self.read:,} pairs: {self.source_file} and {self.target_file} "
                f"({self.empty:,} with an empty side and {self.copies:,} copying their source left out; "
                f"{self.dropped:,} dropped by {self.scored_by}{worst}); "
                f"{self.report_file}"]


def score_corpus(scoring: Scoring, corpus: Corpus, out_stem: str, made: dict,
                 warn: Callable[[str], None] = lambda _: None, done: Callable[[int], None] = lambda _: None) -> np.ndarray:
    """Every pair's COLUMNS, written as they come to a hidden file beside the corpus, which a run
    stopped part way goes on from (made as `made` says: the models and settings)."""
    store = hidden_beside(Path(out_stem), "scores")

    def scored(lines: Iterator[str], before: int) -> Iterator[str]:
        pairs = (tuple(json.loads(line)) for line in lines)
        for chunk in scoring.chunks(pairs, CHUNK_PAIRS, before + 1, warn, done):
            yield from (json.dumps([None if np.isnan(x) else float(x) for x in row]) for row in chunk)

    # each pair one line (both sides, so that the fingerprint of the pairs scored covers both files)
    pair_lines = (json.dumps(pair, ensure_ascii=False) for pair in corpus.pairs())
    write_resumably(store, Path(str(corpus)), made, pair_lines, scored, dict, CHUNK_PAIRS, done, SCORING)
    try:
        rows, blocks = (json.loads(line) for line in read_lines(store)), []
        while block := list(islice(rows, CHUNK_PAIRS)):  # (None: NaN)
            blocks.append(np.array(block, dtype=np.float64).reshape(-1, len(COLUMNS)))
        return np.concatenate(blocks)
    finally:
        store.unlink()


def kept_pairs(score: np.ndarray, drop_worst: float = 0.0, max_score: float | None = None,
               keep_best: int | None = None) -> np.ndarray:
    """Which pairs are kept (a boolean per pair), by their scores (lower is better; NaN: never kept)."""
    scored = ~np.isnan(score)
    kept = scored.copy()
    if max_score is not None:
        kept &= np.where(scored, score, np.inf) <= max_score
    worst = math.floor(drop_worst * int(scored.sum()))
    if worst:
        kept[worst_first(score, np.flatnonzero(scored))[:worst]] = False
    if keep_best is not None and kept.sum() > keep_best:
        candidates = worst_first(score, np.flatnonzero(kept))
        kept[candidates[:len(candidates) - keep_best]] = False
    return kept


def worst_first(score: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """`candidates` (indices) from the highest score to the lowest, ties in line order."""
    return candidates[np.lexsort((candidates, -score[candidates]))]


PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)


def score_percentiles(score: np.ndarray) -> dict[str, float]:
    """The scored pairs' score at each of PERCENTILES ({"p10": X, ...}: a tenth of the pairs score
    above p90), for choosing a --max-score (or --min-qe) to use on this corpus or another; {}
    where none was scored."""
    scored = score[~np.isnan(score)]
    if not scored.size:
        return {}
    return {f"p{p}": round(float(x), 4) for p, x in zip(PERCENTILES, np.percentile(scored, PERCENTILES))}


def pair_numbers(row: np.ndarray) -> dict[str, float]:
    """A scored pair's numbers for `--scores`: the estimate (CometKiwi), or the cross-entropies
    its models gave (H_f; H_r and the dual score; H_d and the difference), and the score that
    ranked it where it sums two of them."""
    if not np.isnan(row[QE]):
        return {"qe": row[QE]}
    numbers = {"forward": row[FORWARD]}
    if not np.isnan(row[REVERSE]):
        numbers |= {"reverse": row[REVERSE], "dual": dual_score(row[FORWARD], row[REVERSE])}
    if not np.isnan(row[DOMAIN]):
        numbers |= {"domain": row[DOMAIN], "difference": row[DOMAIN] - row[FORWARD]}
    if "dual" in numbers and "difference" in numbers:
        numbers["score"] = row[SCORE]
    return numbers


def score_lines(scores: np.ndarray, kept: np.ndarray, copied: np.ndarray) -> Iterator[str]:
    """`--scores`'s lines: each pair's numbers (pair_numbers) and whether it was kept; `copied`:
    the pairs left out as copies of their source."""
    for row, keep, copy in zip(scores, kept, copied):
        if np.isnan(row[SCORE]):
            yield json.dumps({"copy" if copy else "empty": True, "kept": False})
        else:
            numbers = {name: round(float(x), 4) for name, x in pair_numbers(row).items()}
            yield json.dumps(numbers | {"kept": bool(keep)})


def check_thresholds(by_qe: bool, drop_worst: float, max_score: float | None, min_qe: float | None,
                     keep_best: int | None = None) -> None:
    """A one-line error for a share or threshold that the scoring (by a CometKiwi model, or not) cannot take."""
    if not 0.0 <= drop_worst < 1.0:
        raise NmtError(f"--drop-worst {drop_worst:g}: a share of the pairs, at least 0 and below 1")
    if keep_best is not None and keep_best < 1:
        raise NmtError(f"--keep-best {keep_best}: a number of pairs, at least 1")
    if by_qe and max_score is not None:
        raise NmtError("--max-score is for cross-entropies (lower is better); with --qe-model use --min-qe")
    if not by_qe and min_qe is not None:
        raise NmtError("--min-qe is for a CometKiwi model's estimates (--qe-model); cross-entropies take --max-score")


def filter_corpus(scoring: Scoring, corpus: Corpus, out_stem: str, drop_worst: float = 0.0,
                  max_score: float | None = None, min_qe: float | None = None, scores_file: str | None = None,
                  warn: Callable[[str], None] = lambda _: None, done: Callable[[int], None] = lambda _: None,
                  keep_best: int | None = None) -> Filtering:
    """Write `{out_stem}.{src}`, `{out_stem}.{tgt}` and `{out_stem}.json` (see the module's
    docstring), the pairs scored as `scoring` scores them (nmt.jobs.pair_scorings): its models,
    named in the report, and their files' sizes and times, which a stopped run's record holds."""
    check_thresholds(scoring.by_qe, drop_worst, max_score, min_qe, keep_best)
    languages = scoring.languages
    src_file, tgt_file = side_file(out_stem, languages[0]), side_file(out_stem, languages[1])  # (compressed: stem.gz)
    out_stem = written_stem(out_stem)[0]
    report_file = f"{out_stem}.json"
    for written in (src_file, tgt_file, report_file, *([scores_file] if scores_file else [])):
        refuse_to_overwrite(written, [f["path"] for f in corpus.fingerprint().get("files", [])])  # before the models' work
    started = time.perf_counter()
    made = {name: model_files(paths) for name, paths in scoring.models.items()} | scoring.settings | {
        "languages": list(languages), "scores": list(COLUMNS), "unscored": ["empty side", "target copies source"]}
    scores = score_corpus(scoring, corpus, out_stem, made, warn, done)
    kept = kept_pairs(scores[:, SCORE], drop_worst, -min_qe if min_qe is not None else max_score, keep_best)
    unscored = np.isnan(scores[:, SCORE])
    copied = np.zeros(len(scores), dtype=bool)  # which of the unscored pairs are copies, not empty
    translated = languages[0] != languages[1]
    with replaced_whole(src_file) as sources, replaced_whole(tgt_file) as targets:  # both sides in one read
        for line, ((src, tgt), keep) in enumerate(zip(corpus.pairs(), kept)):
            if keep:
                sources.write(src + "\n")
                targets.write(tgt + "\n")
            elif unscored[line] and translated and is_copy(src, tgt):
                copied[line] = True
    if scores_file:
        write_lines(scores_file, score_lines(scores, kept, copied))
    copies = int(copied.sum())
    empty = int(unscored.sum()) - copies
    worst_kept = float(scores[kept, SCORE].max()) if kept.any() else None
    result = Filtering(src_file, tgt_file, report_file, len(scores), int(kept.sum()), empty, copies,
                       len(scores) - empty - copies - int(kept.sum()), scoring.by,
                       round(worst_kept, 4) if worst_kept is not None and not scoring.by_qe else None,
                       round(-worst_kept, 4) if worst_kept is not None and scoring.by_qe else None,
                       round((time.perf_counter() - started) / 60, 2))
    ranked = scores[:, QE] if scoring.by_qe else scores[:, SCORE]
    report = {**scoring.models, **scoring.settings, "corpus": str(corpus), "drop_worst": drop_worst,
              "keep_best": keep_best, "max_score": max_score, "min_qe": min_qe, "scores_file": scores_file,
              **asdict(result), "score_percentiles": score_percentiles(ranked)}
    write_lines(report_file, [json.dumps(report, indent=1)])
    return result
