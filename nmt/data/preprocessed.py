"""Signs that a corpus went through another toolkit's preprocessing: subword-nmt's BPE joins
("trans@@ lation": the WMT and IWSLT sets that fairseq's and OpenNMT's scripts prepare, such as
`train.tok.clean.bpe.32000.en`), the Moses tokenizer's marks of split hyphens and numbers
("well @-@ known", "1 @,@ 000": `tokenizer.perl -a`) and its spaces before a full stop or comma
("a dog runs ."). nmt segments text itself and scores outputs as they are written, so a model
trained on such text writes "@@", "@-@" and " ." into its outputs, and scores against such
references are not comparable. `nmt prepare` counts the pairs with each sign
and warns; so does `nmt score` of the files it scores."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class Sign:
    hints: tuple[str, ...]  # what a line holds where the pattern may match (a quick test first)
    pattern: re.Pattern
    what: str  # what it is, for a warning
    for_training: str  # what to give nmt instead
    for_scoring: str  # what to score instead
    share: float = 0.01  # a split (or a file scored) warns where at least this share of its pairs (lines) hold it


_UNDO_BPE = "sed -E 's/(@@ )|(@@ ?$)//g'"
_DETOKENIZED = ("give nmt the text before tokenizing (or detokenize it: sacremoses detokenize)",
                "score detokenized text, as sacreBLEU expects (sacremoses detokenize)")
SIGNS = {
    "bpe_joins": Sign(("@@",), re.compile(r"\S@@(?: |$)"), 'subword-nmt\'s "@@ " joins (text already segmented by BPE)',
                      f"give nmt the text before BPE ({_UNDO_BPE})", f"join the pieces first ({_UNDO_BPE})"),
    "moses_marks": Sign(("@",), re.compile(r" @[-,.]@ "),
                        'the Moses tokenizer\'s "@-@" marks (text tokenized by tokenizer.perl -a)', *_DETOKENIZED),
    # A space between a word and its full stop or comma: in a typo now and then, in a tokenized
    # corpus in most lines (a share that text as people write it does not reach)
    "tokenized_spacing": Sign((" .", " ,"), re.compile(r"[^\W\d_] [.,](?: |$)"),
                              'a space before their full stop or comma ("a dog runs ."; text tokenized as by Moses)',
                              *_DETOKENIZED, share=0.2),
}


def _may_hold_a_sign(text: str) -> bool:
    """Whether `text` holds a hint of any sign (the hints of SIGNS, written out: the quick test)."""
    return "@" in text or " ." in text or " ," in text


def count_signs(pairs: list[tuple[str, str]], counts: Counter[str]) -> None:
    """Add to `counts` the pairs that hold each sign (a pass over a chunk of a split as read)."""
    for source, target in pairs:
        if _may_hold_a_sign(source) or _may_hold_a_sign(target):  # (most pairs: no pattern to try)
            counts.update(signs_of(source, target))


def signs_of(source: str, target: str = "") -> set[str]:
    """The names of SIGNS found in either side of a pair (or in a line)."""
    return {name for name, sign in SIGNS.items() for side in (source, target)
            if any(hint in side for hint in sign.hints) and sign.pattern.search(side)}


def line_counts(lines: list[str]) -> Counter[str]:
    """How many of `lines` hold each sign."""
    counts: Counter[str] = Counter()
    count_signs([(line, "") for line in lines], counts)
    return counts


def warnings(counts: dict[str, int], read: int) -> list[str]:
    """One line per sign that at least its share of a split's `read` pairs hold: what it is, how
    many pairs, what to give nmt instead."""
    return [f"warning: {n:,} pair{'s' * (n != 1)} hold{'s' * (n == 1)} {SIGNS[name].what}: nmt segments text "
            f"itself and scores outputs as written, so {SIGNS[name].for_training}"
            for name, n in counts.items() if n and n >= SIGNS[name].share * read]


def scoring_warnings(path: str, lines: list[str]) -> list[str]:
    """A file to be scored whose lines hold a sign (at least its share of them): what and what to score instead."""
    return [f"warning: {path}: {n:,} of {len(lines):,} lines hold {SIGNS[name].what}, which BLEU and chrF count "
            f"as text: {SIGNS[name].for_scoring}"
            for name, n in line_counts(lines).items() if n >= SIGNS[name].share * len(lines)]
