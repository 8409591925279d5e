"""Quantities ("3 people", "50 km") kept in their sentence and written as digits in its
translation (`decode.quantities_in_place`, nmt.decode.translate).

Taken out like other verbatim spans, a quantity leaves "people" for the model to translate alone,
often in the singular ("6 Ein Mountainbiker" for "6 people ride mountain bikes"). Left in the
sentence, the model often writes it its own way, in words ("drei Hunde", "ein paar Leute"). So it
stays in the sentence, and where the output does not have it standing alone, the output words
aligned to it (nmt.decode.text.alignment) are replaced by its digits: "mit drei Hunden" becomes
"mit 3 Hunden". Those words are one word, or a run of neighbours ("Ein paar" Leute); where they
fall apart into several runs, the one beside the words of the source word after the quantity.
Where no word is aligned to it, no run or several qualify, a word of the run holds digits (the
model's own number, "53" for 55, or "3er"), or two quantities claim the same word, nothing is
guessed: the caller translates the line with its quantities taken out. (Replacing the model's
own numbers as well, and taking only single words, both measured worse on the demo model:
`make bench-quantities`.)
"""

from __future__ import annotations

from nmt.data.words import word_spans
from nmt.decode.text.markup import aligned, output_word_spans
from nmt.decode.text.substitution import run_span, substituted, word_run
from nmt.decode.text.verbatim import quantity_spans, stands_alone


def with_quantities(source: str, output: str, alignment: str, keep, joins: tuple[int, ...] = ()
                    ) -> tuple[str, tuple[int, ...], str] | None:
    """`output` (its `joins` moved, its `alignment` linked to its new words) with each quantity
    of `source` that `keep` kept in it standing alone, the output words aligned to it (`alignment`,
    Pharaoh, over the words of both) replaced by its digits where needed; None where one cannot be
    placed so."""
    source_words, spans = word_spans(source), output_word_spans(output, joins)
    links = aligned(alignment, len(spans)) if spans else {}
    replaced: list[tuple[int, int, str]] = []  # (start, end) in `output`, and the digits
    for start, end in quantity_spans(source, keep):
        number = source[start:end]
        if stands_alone(number, output):
            continue
        word = next((i for i, (a, b) in enumerate(source_words) if a <= start and end <= b), None)
        run = word_run(sorted(set(links.get(word, []))), set(links.get(word + 1, [])) if word is not None else set())
        if run is None:
            return None
        a, b = run_span(output, spans, run)
        if a >= b or any(c.isdigit() for x, y in spans[run[0]:run[-1] + 1] for c in output[x:y]):
            return None
        if any(a < y and x < b for x, y, _ in replaced) or any(a < j < b for j in joins):
            return None
        replaced.append((a, b, number))
    return substituted(output, joins, alignment, replaced)
