"""Filters for training pairs, each with a reason so the report can count what was dropped."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable

from nmt.config import DataConfig
from nmt.data.dedup import DuplicateLines

# C0/C1 control characters other than tab: a sign of binary junk or broken encodings.
_INVALID_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_NOT_LETTERS = re.compile(r"[\W\d_]+")  # what a copy may differ in: digits, punctuation, spaces


def letters(text: str) -> str:
    """A side's letters, lower-cased: what a source and its untranslated copy share."""
    return _NOT_LETTERS.sub("", text).casefold()


def is_copy(src: str, tgt: str) -> bool:
    """Whether the target is the source left untranslated (pairs without letters, such as
    numbers alone, are left to the other rules)."""
    source = letters(src)
    return bool(source) and source == letters(tgt)


def normalize(text: str, nfkc: bool) -> str:
    text = text.strip()
    return unicodedata.normalize("NFKC", text) if nfkc else text


def sentence_key(text: str) -> str:
    """What two sentences share when they are the same one, spaces aside (for valid's and test's
    sentences found among the training pairs)."""
    return " ".join(text.split())


class PairFilter:
    """Decides, pair by pair, whether a training pair is kept; counts the reasons it is not."""

    def __init__(self, cfg: DataConfig, duplicates: DuplicateLines | None = None, eval_sources: frozenset[str] = frozenset()):
        """`duplicates`: the lines that repeat an earlier pair (see nmt.data.dedup), if they are to go;
        `eval_sources`: valid's and test's source sentences (sentence_key), dropped from training
        with data.remove_eval_overlap."""
        self.cfg = cfg
        self.duplicates = duplicates
        self.eval_sources = eval_sources if cfg.remove_eval_overlap else frozenset()
        self.dropped: Counter[str] = Counter()
        self.record: Callable[[int, str, str, str], None] | None = None

    def text_reason(self, line: int, src: str, tgt: str, translated: bool = True) -> str | None:
        """Reasons visible before tokenization; `line` counts the corpus's pairs from 0;
        `translated`: whether the corpus's languages differ (where they do not, a copy may be right)."""
        if not src or not tgt:
            return "empty side"
        if _INVALID_CHARS.search(src) or _INVALID_CHARS.search(tgt):
            return "invalid characters"
        if self.duplicates is not None and line in self.duplicates:
            return "duplicate"
        if self.cfg.remove_copies and translated and is_copy(src, tgt):
            return "target copies source"
        if self.eval_sources and sentence_key(src) in self.eval_sources:
            return "source in valid or test"
        return None

    def length_reason(self, n_src: int, n_tgt: int) -> str | None:
        """Reasons visible after tokenization, in subword pieces."""
        if max(n_src, n_tgt) > self.cfg.max_tokens_per_sentence:
            return "too long"
        if max(n_src, n_tgt) > self.cfg.max_length_ratio * max(min(n_src, n_tgt), 1):
            return "length ratio"
        return None

    def drop(self, reason: str, line: int | None = None, pair: tuple[str, str] | None = None) -> None:
        """Count a pair dropped for `reason`; where `record` is set (nmt prepare --dropped), it hears
        of the pair too: record(line, reason, source, target), `line` counting the split's pairs from 0."""
        self.dropped[reason] += 1
        if self.record is not None and pair is not None:
            self.record(line, reason, *pair)
