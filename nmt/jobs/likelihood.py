"""Forced decoding: how likely a model finds given translations (`nmt likelihood`).

For each sentence pair, the natural-log probability of each target piece and then of EOS, given
the source and the pieces before it, computed as the search computes them (PAD and BOS taken
out before the softmax): the log_prob `nmt translate` reports for a greedy output is that
output's likelihood. Pairs go in length-sorted token batches; scores come out in input order, one
per pair, empty lines included (an empty target is scored as EOS alone). With `--nproc K`, K
processes score consecutive shares of each chunk (nmt.decode.sharded), batched within their
share: the same scores, up to the float rounding that other batches bring (about 1e-6).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from itertools import islice
from pathlib import Path

from nmt.data.corpora import pairs_opener
from nmt.data.corpus import Corpus
from nmt.decode.forced import PairScore, score_pairs
from nmt.decode.stream import write_lines
from nmt.errors import NmtError

CHUNK_PAIRS = 5000  # pairs read, sorted and scored together
OUTPUT_FORMATS = ("text", "jsonl")


def format_score(score: PairScore, output_format: str) -> str:
    if output_format == "jsonl":
        return json.dumps({"log_prob": round(score.log_prob, 4), "log_prob_per_token": round(score.log_prob_per_token, 4),
                           "tokens": score.tokens, "token_log_probs": [round(p, 4) for p in score.token_log_probs]},
                          ensure_ascii=False)
    return f"{score.log_prob:.4f}"


def score_stream(scorer, pairs: Iterable[tuple[str, str]], max_tokens: int, output_format: str = "text",
                 precision: str = "auto", warn: Callable[[str], None] = lambda _: None,
                 done: Callable[[int], None] = lambda _: None) -> Iterator[str]:
    """Pairs in, formatted scores out (same count and order), CHUNK_PAIRS pairs at a time;
    `done(n)` hears of the n pairs scored so far, after each chunk."""
    iterator, first_line = iter(pairs), 1
    while chunk := list(islice(iterator, CHUNK_PAIRS)):
        for score in score_pairs(scorer, chunk, max_tokens, precision, warn, first_line):
            yield format_score(score, output_format)
        first_line += len(chunk)
        done(first_line - 1)


def _score_share(max_tokens: int, output_format: str, precision: str, scorer, pairs: list[tuple[str, str]],
                 first_line: int, finished: Callable[[int], None]) -> tuple[list[str], list[str]]:
    """A worker's share of a chunk (nmt.decode.sharded): its formatted scores and its warnings."""
    warnings: list[str] = []
    lines = [format_score(score, output_format)
             for score in score_pairs(scorer, pairs, max_tokens, precision, warnings.append, first_line)]
    finished(len(pairs))
    return lines, warnings


def score_in_processes(processes: Callable, pairs: Iterable[tuple[str, str]], max_tokens: int,
                       output_format: str = "text", precision: str = "auto",
                       warn: Callable[[str], None] = lambda _: None,
                       done: Callable[[int], None] = lambda _: None) -> Iterator[str]:
    """`score_stream` over worker processes (`processes`: nmt.decode.sharded.processes); the
    scores in input order, warnings with the input's line numbers."""
    task = partial(_score_share, max_tokens, output_format, precision)
    for shares in processes(pairs, task, CHUNK_PAIRS, done, 1):
        for lines, warnings in shares:
            for warning in warnings:
                warn(warning)
            yield from lines


def scorer_and_pairs(spec, corpus: str | None = None, source: Path | None = None,
                     target: Path | None = None) -> tuple:
    """(the engine `spec` loads, the pairs to score): those `--corpus` names (a split as a recipe
    names one, read in the engine's languages) or those of `--source` and `--target`, one way or
    the other (else a one-line error before the model loads)."""
    open_pairs = pairs_opener(corpus, source, target, "score")
    if spec.src_lang == "auto":
        raise NmtError("--src-lang auto is nmt translate's: name the source language of the pairs to score")
    scorer = spec.load()
    data = scorer.recipe.data
    return scorer, open_pairs((spec.src_lang or data.src_lang, spec.tgt_lang or data.tgt_lang))


def likelihood_file(scorer, pairs: Corpus, output: str, max_tokens: int, output_format: str = "text",
                    precision: str = "auto", warn: Callable[[str], None] = lambda _: None,
                    done: Callable[[int], None] = lambda _: None, processes: Callable | None = None) -> None:
    """`nmt likelihood`: one line per pair of `pairs` (two files of as many lines, or a corpus as a
    recipe names one), to a file (which appears only when complete, never over one of the pairs'
    files) or "-", standard output; `processes`: worker processes to score in
    (nmt.decode.sharded.processes), None: this one."""
    if output_format not in OUTPUT_FORMATS:
        raise NmtError(f"--output-format {output_format}: choose text or jsonl")
    if processes is None:
        scores = score_stream(scorer, pairs.pairs(), max_tokens, output_format, precision, warn, done)
    else:
        scores = score_in_processes(processes, pairs.pairs(), max_tokens, output_format, precision, warn, done)
    write_lines(output, scores, inputs=[f["path"] for f in pairs.fingerprint().get("files", [])])
