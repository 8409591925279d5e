"""Building a lexical shortlist (`nmt shortlist`) from a parallel corpus in the model's pieces.

Each source piece s gets the `best` target pieces t that go with it most strongly, and every
batch gets the `frequent` most frequent target pieces (function words, punctuation, the pieces
that follow no one source piece). "Go with" is one of:

- cooccurrence (the default, no aligner): the Dice coefficient of s and t over sentence pairs,
  2·c(s, t) / (c(s) + c(t)), c counting the pairs a piece (or both) occurs in. Dice, not
  c(s, t) / c(s): the latter ranks the frequent pieces first, which the `frequent` list has already;
- alignment links (e.g. eflomal's, as `experiments.students.shortlist` compares): p(t | s), the share of s's
  occurrences linked to t, as Marian's and Bergamot's shortlists are made.

Pieces occurring fewer than `min_count` times get no line of their own (their candidates would
be chance).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from nmt.data.word_pairs import WordPairs
from nmt.data.vocabulary_map import write_vocabulary_map
from nmt.errors import NmtError


def _ranked(scores: dict[str, dict[str, float]], best: int, always: set[str]) -> dict[str, list[str]]:
    """Per source piece, its `best` highest-scoring target pieces not always allowed anyway
    (ties by piece, for the same file every time)."""
    rules = {}
    for source in sorted(scores):
        ranked = sorted(((-score, target) for target, score in scores[source].items() if target not in always))
        if ranked[:best]:
            rules[source] = [target for _, target in ranked[:best]]
    return rules


def most_frequent(targets: Iterable[Sequence[str]], frequent: int) -> list[str]:
    counts = Counter(piece for pieces in targets for piece in pieces)
    return [piece for piece, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:frequent]]


def cooccurrence_shortlist(sources: Sequence[Sequence[str]], targets: Sequence[Sequence[str]], best: int = 50,
                           frequent: int = 100, min_count: int = 2) -> tuple[list[str], dict[str, list[str]]]:
    """(always allowed, per source piece its candidates) by the Dice coefficient of co-occurrence
    (counted by nmt.data.word_pairs over every pair, pieces as they are)."""
    always = most_frequent(targets, frequent)
    pairs = WordPairs(zip(sources, targets), limit=None, keys=lambda pieces: pieces)
    source_pieces, target_pieces, s, t, dice = pairs.all_dice()
    frequent_enough = pairs.source_count[s] >= min_count
    scores: dict[str, dict[str, float]] = {}
    for i, j, score in zip(s[frequent_enough].tolist(), t[frequent_enough].tolist(), dice[frequent_enough].tolist()):
        scores.setdefault(source_pieces[i], {})[target_pieces[j]] = score
    return always, _ranked(scores, best, set(always))


def aligned_shortlist(sources: Sequence[Sequence[str]], targets: Sequence[Sequence[str]],
                      links: Sequence[Iterable[tuple[int, int]]], best: int = 50, frequent: int = 100,
                      min_count: int = 2) -> tuple[list[str], dict[str, list[str]]]:
    """(always allowed, per source piece its candidates) by p(t | s) over alignment links
    (source position, target position) of each pair."""
    always = most_frequent(targets, frequent)
    occurrences = Counter(p for src in sources for p in src)
    linked: dict[str, Counter] = {}
    for src, tgt, pairs in zip(sources, targets, links):
        for i, j in pairs:
            linked.setdefault(src[i], Counter())[tgt[j]] += 1
    scores = {s: {t: n / occurrences[s] for t, n in counts.items()}
              for s, counts in linked.items() if occurrences[s] >= min_count}
    return always, _ranked(scores, best, set(always))


@dataclass
class ShortlistSummary:
    output: str
    pairs: int
    source_pieces: int  # with a line of their own
    always: int
    best: int

    def describe(self) -> list[str]:
        return [f"wrote {self.output}: {self.always} target pieces always allowed, up to {self.best} more for each of "
                f"{self.source_pieces:,} source pieces (from {self.pairs:,} pairs); translate with "
                f"--set decode.shortlist={self.output}"]


def build_shortlist(checkpoint: Path, source: Path, target: Path, output: Path, best: int = 50,
                    frequent: int = 100, min_count: int = 2) -> ShortlistSummary:
    """The shortlist of `checkpoint`'s tokenizers over the corpus `source` / `target` (one
    sentence per line, the same number of lines; .gz read as such), by co-occurrence, written to `output`."""
    from nmt.checkpoint import load_checkpoint, tokenizer_models
    from nmt.data.corpus import read_parallel
    from nmt.data.tokenizer import load_processor

    if best < 0 or frequent < 0 or best + frequent == 0:
        raise NmtError(f"--best {best} --frequent {frequent}: neither may be negative, and not both 0")
    protos = tokenizer_models(load_checkpoint(checkpoint, optimizer=False))
    pairs = list(read_parallel(Path(source), Path(target)))
    sides = [load_processor(model_proto=protos[side]).encode([pair[i] for pair in pairs], out_type=str)
             for i, side in enumerate(("src", "tgt"))]
    always, rules = cooccurrence_shortlist(*sides, best=best, frequent=frequent, min_count=min_count)
    write_vocabulary_map(output, always, rules)
    return ShortlistSummary(str(output), len(pairs), len(rules), len(always), best)
