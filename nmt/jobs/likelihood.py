"""Forced decoding: how likely a model finds given translations (`nmt likelihood`).

For each sentence pair, the natural-log probability of each target piece and then of EOS, given
the source and the pieces before it, computed as the search computes them (PAD and BOS taken
out before the softmax): the log_prob `nmt translate` reports for a greedy output is that
output's likelihood. Pairs go in length-sorted token batches; scores come out in input order, one
per pair, empty lines included (an empty target is scored as EOS alone).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import numpy as np

from nmt.data.batching import pack_by_tokens
from nmt.data.corpus import read_parallel
from nmt.special_tokens import EOS
from nmt.decode.stream import write_lines
from nmt.decode.translate import encode_within
from nmt.errors import NmtError

CHUNK_PAIRS = 5000  # pairs read, sorted and scored together
OUTPUT_FORMATS = ("text", "jsonl")


@dataclass
class PairScore:
    tokens: list[str]  # the target's pieces, then the EOS piece
    token_log_probs: list[float]  # one per token

    @property
    def log_prob(self) -> float:
        return sum(self.token_log_probs)

    @property
    def log_prob_per_token(self) -> float:
        return self.log_prob / len(self.token_log_probs)


def score_pairs(scorer, pairs: list[tuple[str, str]], max_tokens: int, precision: str = "auto",
                warn: Callable[[str], None] = lambda _: None, first_line: int = 1) -> list[PairScore]:
    """(source, target) text pairs -> their scores, in order. `scorer`: a loaded engine
    (nmt.decode.engines.engine.load_engine), whose score_batch does the forced decoding."""
    if not pairs:
        return []
    limit = scorer.max_positions - 1  # room for EOS (source) and BOS (target)
    # A multilingual model's language tokens: in front of the source, and forced first in the
    # target, where the forced token is given, not scored (as a translation's score leaves it out).
    prefix, forced = scorer.controls.source, scorer.controls.target
    src_ids = encode_within(scorer.src_tokenizer, [src for src, _ in pairs], limit - len(prefix), "source of ", warn,
                            first_line)
    src_ids = [[*prefix, *ids] if ids else ids for ids in src_ids]
    tgt_ids = encode_within(scorer.tgt_tokenizer, [tgt for _, tgt in pairs], limit - len(forced), "target of ", warn,
                            first_line)
    sizes = np.array([max(len(s), len(t) + len(forced)) + 1 for s, t in zip(src_ids, tgt_ids)])
    log_probs: list[list[float]] = [[] for _ in pairs]
    for batch in pack_by_tokens(np.argsort(sizes, kind="stable"), sizes, max_tokens):
        rows = batch.tolist()
        targets = [[*forced, *tgt_ids[i]] for i in rows]
        for i, scores in zip(rows, scorer.score_batch([src_ids[i] for i in rows], targets, precision)):
            log_probs[i] = scores[len(forced):]
    piece, end = scorer.tgt_tokenizer.id_to_piece, scorer.tgt_tokenizer.id_to_piece(EOS)
    return [PairScore([piece(t) for t in ids] + [end], scores) for ids, scores in zip(tgt_ids, log_probs)]


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
    `done(n)` hears of each chunk of n pairs scored."""
    iterator, first_line = iter(pairs), 1
    while chunk := list(islice(iterator, CHUNK_PAIRS)):
        for score in score_pairs(scorer, chunk, max_tokens, precision, warn, first_line):
            yield format_score(score, output_format)
        first_line += len(chunk)
        done(len(chunk))


def likelihood_file(scorer, source: Path, target: Path, output: str, max_tokens: int, output_format: str = "text",
                    precision: str = "auto", warn: Callable[[str], None] = lambda _: None,
                    done: Callable[[int], None] = lambda _: None) -> None:
    """`nmt likelihood`: one line per pair of lines of `source` and `target` (which must have as
    many lines), to a file (which appears only when complete) or "-", standard output."""
    if output_format not in OUTPUT_FORMATS:
        raise NmtError(f"--output-format {output_format}: choose text or jsonl")
    write_lines(output, score_stream(scorer, read_parallel(source, target), max_tokens, output_format, precision,
                                     warn, done))
