"""Signs that a corpus went through another toolkit's preprocessing: subword-nmt's BPE joins
("trans@@ lation": the WMT and IWSLT sets that fairseq's and OpenNMT's scripts prepare, such as
`train.tok.clean.bpe.32000.en`) and the Moses tokenizer's marks of split hyphens and numbers
("well @-@ known", "1 @,@ 000": `tokenizer.perl -a`). nmt segments text itself and scores outputs
as they are written, so a model trained on such text writes "@@" and "@-@" into its outputs, and
scores against such references are not comparable. `nmt prepare` counts the pairs with each sign
and warns."""

from __future__ import annotations

import re
from collections import Counter

SIGNS = {
    "bpe_joins": (re.compile(r"\S@@(?: |$)"), 'subword-nmt\'s "@@ " joins (text already segmented by BPE)',
                  "give nmt the text before BPE (sed -E 's/(@@ )|(@@ ?$)//g')"),
    "moses_marks": (re.compile(r" @[-,.]@ "), 'the Moses tokenizer\'s "@-@" marks (text tokenized by tokenizer.perl -a)',
                    "give nmt the text before tokenizing (or detokenize it: sacremoses detokenize)"),
}
WARN_SHARE = 0.01  # a split warns where at least this share of its pairs hold a sign


def count_signs(pairs: list[tuple[str, str]], counts: Counter[str]) -> None:
    """Add to `counts` the pairs that hold each sign (a pass over a chunk of a split as read)."""
    for source, target in pairs:
        if "@" in source or "@" in target:  # (most pairs: no pattern to try)
            counts.update(signs_of(source, target))


def signs_of(source: str, target: str) -> set[str]:
    """The names of SIGNS found in either side of a pair."""
    return {name for name, (pattern, _, _) in SIGNS.items() if pattern.search(source) or pattern.search(target)}


def warnings(counts: dict[str, int], read: int) -> list[str]:
    """One line per sign that at least WARN_SHARE of a split's `read` pairs hold: what it is, how
    many pairs, what to give nmt instead."""
    lines = []
    for name, n in counts.items():
        if n and n >= WARN_SHARE * read:
            _, what, instead = SIGNS[name]
            lines.append(f"warning: {n:,} pair{'s' * (n != 1)} hold{'s' * (n == 1)} {what}: nmt segments text "
                         f"itself and scores outputs as written, so {instead}")
    return lines
