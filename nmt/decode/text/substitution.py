"""Output words replaced by source text that the translation must have as written: a quantity's
digits (nmt.decode.text.quantities) or a name (nmt.decode.text.names). Both find the output words
aligned to the source words (`word_run`), replace them (`substituted`), and keep the word alignment
true of the new output, so that tags and verbatim spans placed after it land beside the right words.
"""

from __future__ import annotations

import unicodedata

from nmt.data.words import word_spans
from nmt.decode.text.markup import aligned, output_word_spans


def word_run(targets: list[int], beside: set[int]) -> list[int] | None:
    """The output words to replace: `targets` where they are one run of neighbours, else the one
    run next to a word of `beside` (those aligned to the source word after); None where there is
    no such run, or several."""
    runs: list[list[int]] = []
    for t in targets:
        if runs and t == runs[-1][-1] + 1:
            runs[-1].append(t)
        else:
            runs.append([t])
    if len(runs) == 1:
        return runs[0]
    near = [run for run in runs if run[-1] + 1 in beside or run[0] - 1 in beside]
    return near[0] if len(near) == 1 else None


def run_span(output: str, spans: list[tuple[int, int]], run: list[int]) -> tuple[int, int]:
    """The characters of a run of output words, without punctuation at its edges (which stays)."""
    (a, _), (_, b) = spans[run[0]], spans[run[-1]]
    return a + _edge(output[a:b]), b - _edge(output[a:b][::-1])


def substituted(output: str, joins: tuple[int, ...], alignment: str | None,
                replacements: list[tuple[int, int, str]]) -> tuple[str, tuple[int, ...], str | None]:
    """`output` with each (start, end, text) of `replacements` (not overlapping) written in,
    `joins` moved with the text after, and `alignment` (Pharaoh, None: none) linked to the new
    words: a source word linked to a replaced word is linked to every word of its replacement."""
    if not replacements:
        return output, joins, alignment
    old_spans = output_word_spans(output, joins)
    links = aligned(alignment, len(old_spans)) if alignment and old_spans else {}
    replacements = sorted(replacements)
    shift = []  # (old end, what the text after it moved by), in order
    moved = 0
    for a, b, text in replacements:
        moved += len(text) - (b - a)
        shift.append((b, moved))

    def new_offset(offset: int) -> int:
        return offset + next((m for end, m in reversed(shift) if offset >= end), 0)

    for a, b, text in reversed(replacements):  # from the end, so earlier offsets hold
        output = output[:a] + text + output[b:]
    joins = tuple(new_offset(j) for j in joins)
    if alignment is None:
        return output, joins, None

    new_spans = output_word_spans(output, joins)
    new_ranges = [(new_offset(a), new_offset(a) + len(text)) for a, _, text in replacements]
    old_ranges = [(a, b) for a, b, _ in replacements]
    now: dict[int, list[int]] = {}
    for k, (x, y) in enumerate(old_spans):
        hit = next((r for r, (a, b) in enumerate(old_ranges) if x < b and a < y), None)
        if hit is None:
            start = new_offset(x)
            now[k] = [n for n, (p, q) in enumerate(new_spans) if p <= start < q][:1]
        else:
            a, b = new_ranges[hit]
            now[k] = [n for n, (p, q) in enumerate(new_spans) if p < b and a < q]
    pairs = sorted({(n, s) for s, targets in links.items() for t in targets for n in now.get(t, [])})
    return output, joins, " ".join(f"{s}-{n}" for n, s in pairs)  # in the order of the output's words


def source_word_indices(source: str, start: int, end: int) -> list[int]:
    """The words of `source` (as its alignment counts them) that the characters start:end touch."""
    return [i for i, (a, b) in enumerate(word_spans(source)) if a < end and start < b]


def _edge(word: str) -> int:
    """How many punctuation characters `word` starts with."""
    return next((i for i, c in enumerate(word) if not unicodedata.category(c).startswith("P")), len(word))
