"""Which target word of a pair translates which source word, without a model: the Dice
coefficient of two words, 2·c(s, t) / (c(s) + c(t)), where c counts the pairs a word (or both
words) occurs in; within a pair, words are linked one to one by competitive linking (Melamed,
2000). `data.augment.tags` puts a tag around source words and the target words linked to them;
`data.augment.verbatim` inserts an item beside them.

Counted over a corpus's first `limit` pairs (a dictionary of the frequent words is what tagging
needs; the counts stay a few hundred MB at most), words compared lowercased without the
punctuation at their edges. Co-occurrences are kept as 64-bit keys (source id << 32 | target
id) in numpy arrays, counted once at the end.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import numpy as np

from nmt.data.words import by_rules_alone

_EDGES = re.compile(r"^\W+|\W+$")
MIN_DICE = 0.1  # weaker than this, a best match is mostly chance


def word_key(word: str) -> str:
    """A word as the dictionary compares it: lowercased, without the punctuation at its edges."""
    return _EDGES.sub("", word.lower())


def word_keys(text: str) -> list[str]:
    """A text's words as the dictionary compares them (word_key), the empty ones left out: those
    nmt finds without a dictionary (each Chinese or Japanese character a word, nmt.data.words)."""
    return [key for key in map(word_key, by_rules_alone(text)) if key]


class WordPairs:
    """`keys` turns one side of a pair into what is counted: by default its words (word_keys), which
    `dice` and `links` look up; the shortlist of nmt.jobs.shortlist_build passes pairs of piece
    lists, counts the pieces as they are and reads `all_dice`."""

    def __init__(self, pairs: Iterable[tuple], limit: int | None = 100_000, chunk: int = 10_000,
                 keys: Callable[[object], Iterable[str]] = word_keys):
        self.keys = keys
        self.source_ids: dict[str, int] = {}
        self.target_ids: dict[str, int] = {}
        keys, sources, targets = [], [], []
        for n, (source, target) in enumerate(pairs):
            if n == limit:
                break
            sources.append(sorted(self._ids(source, self.source_ids)))
            targets.append(sorted(self._ids(target, self.target_ids)))
            if len(sources) % chunk == 0:
                keys.append(_cooccurrences(sources[-chunk:], targets[-chunk:]))
        if len(sources) % chunk:
            keys.append(_cooccurrences(sources[-(len(sources) % chunk):], targets[-(len(targets) % chunk):]))
        self.pair_keys, self.pair_counts = np.unique(np.concatenate(keys or [np.zeros(0, np.int64)]),
                                                     return_counts=True)
        self.source_count = np.bincount(_flat(sources), minlength=len(self.source_ids))
        self.target_count = np.bincount(_flat(targets), minlength=len(self.target_ids))

    def _ids(self, side, ids: dict[str, int]) -> set[int]:
        return {ids.setdefault(key, len(ids)) for key in self.keys(side)}

    def all_dice(self) -> tuple[list[str], list[str], np.ndarray, np.ndarray, np.ndarray]:
        """Every co-occurring pair: (source keys, target keys, source ids, target ids, Dice), the
        keys indexed by id."""
        s, t = self.pair_keys >> 32, self.pair_keys & 0xFFFFFFFF
        dice = 2 * self.pair_counts / (self.source_count[s] + self.target_count[t])
        return list(self.source_ids), list(self.target_ids), s, t, dice

    def dice(self, source_word: str, target_word: str) -> float:
        return float(self._dice([source_word], [target_word])[0, 0])

    def _dice(self, source_words: list[str], target_words: list[str]) -> np.ndarray:
        """The Dice coefficient of every source word with every target word (0 for unseen words)."""
        if not self.source_ids or not self.target_ids:
            return np.zeros((len(source_words), len(target_words)))
        s = np.array([self.source_ids.get(word_key(w), -1) for w in source_words], dtype=np.int64)
        t = np.array([self.target_ids.get(word_key(w), -1) for w in target_words], dtype=np.int64)
        keys = (np.maximum(s, 0)[:, None] << 32) | np.maximum(t, 0)[None, :]
        at = np.minimum(np.searchsorted(self.pair_keys, keys), max(len(self.pair_keys) - 1, 0))
        both = np.where(self.pair_keys[at] == keys, self.pair_counts[at], 0)
        both = np.where((s >= 0)[:, None] & (t >= 0)[None, :], both, 0)
        alone = self.source_count[np.maximum(s, 0)][:, None] + self.target_count[np.maximum(t, 0)][None, :]
        return 2 * both / np.maximum(alone, 1)

    def links(self, source_words: list[str], target_words: list[str]) -> dict[int, int]:
        """Source word index -> target word index, one to one, by competitive linking: the pair of
        words with the highest Dice (at least MIN_DICE) first, ties (a word twice in a sentence)
        to the pair nearest the diagonal, then the best of the words left, and so on."""
        if not source_words or not target_words:
            return {}
        dice = self._dice(source_words, target_words)
        rows, columns = len(source_words), len(target_words)
        candidates = sorted((-dice[i, j], abs(i / rows - j / columns), i, j) for i, j in zip(*np.nonzero(dice >= MIN_DICE)))
        links: dict[int, int] = {}
        taken: set[int] = set()
        for _, _, i, j in candidates:
            if i not in links and j not in taken:
                links[int(i)] = int(j)
                taken.add(j)
        return links


def _flat(lists: list[list[int]]) -> np.ndarray:
    return np.fromiter((x for ids in lists for x in ids), dtype=np.int64)


def _cooccurrences(sources: list[list[int]], targets: list[list[int]]) -> np.ndarray:
    """Every (source word, target word) of each pair, as keys source << 32 | target."""
    source_len = np.array([len(ids) for ids in sources], dtype=np.int64)
    target_len = np.array([len(ids) for ids in targets], dtype=np.int64)
    per_pair = source_len * target_len
    pair = np.repeat(np.arange(len(sources)), per_pair)
    within = np.arange(per_pair.sum()) - np.repeat(np.cumsum(per_pair) - per_pair, per_pair)
    source_at = (np.cumsum(source_len) - source_len)[pair] + within // np.maximum(target_len[pair], 1)
    target_at = (np.cumsum(target_len) - target_len)[pair] + within % np.maximum(target_len[pair], 1)
    return (_flat(sources)[source_at] << 32) | _flat(targets)[target_at]
