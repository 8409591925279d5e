"""Punctuation the source vocabulary lacks, given to the model as the nearest mark it has: an em
dash as a hyphen, guillemets as straight quotes, a bullet as a hyphen, a prime as an apostrophe.
A vocabulary trained on one corpus lacks the marks its corpus never used (Multi30k's has no em
dash, no « »), and makes each an unknown piece: the demo model gave "Eine Frau in einem roten
Kleid, die Schaulustige tanzt." for "A woman — in a red dress — dances.", and "Eine Frau in einem
roten Kleid tanzt." with hyphens. One character for one, so the offsets of a line's items hold;
the text the model reads alone is changed (verbatim spans, taken out before, are copied as
written), and what the output writes is the model's.
"""

from __future__ import annotations

from collections.abc import Callable

# each mark, and the marks to try in its place, in order
NEAREST = {
    "—": "-", "–": "-", "―": "-", "‒": "-", "−": "-", "‐": "-", "‑": "-", "•": "-", "‣": "-", "⁃": "-",
    "«": "\"", "»": "\"", "„": "\"", "“": "\"", "”": "\"", "‟": "\"", "″": "\"",
    "‹": "'", "›": "'", "‚": "'", "‘": "'", "’": "'", "‛": "'", "′": "'", "`": "'", "´": "'",
    "×": "x",
}


def with_nearest_marks(text: str, reads: Callable[[str], bool]) -> str:
    """`text` with each mark of NEAREST that `reads` (the source vocabulary's test of a character)
    fails written as its nearest that it reads, where there is one."""
    if not any(c in NEAREST for c in text):
        return text  # (nearly every line)
    return "".join(NEAREST[c] if c in NEAREST and not reads(c) and reads(NEAREST[c]) else c for c in text)
