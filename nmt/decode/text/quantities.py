"""Quantities ("3 people", "50 km") kept in their sentence and written as digits in its
translation (`decode.quantities_in_place`, nmt.decode.translate).

Taken out like other verbatim spans, a quantity leaves "people" for the model to translate alone,
often in the singular ("6 Ein Mountainbiker" for "6 people ride mountain bikes"). Left in the
sentence, the model often writes it its own way, as a word ("drei Hunde"). So it stays in the
sentence, and where the output does not have it standing alone, the one output word aligned to
it (nmt.decode.text.alignment) is replaced by its digits: "mit drei Hunden" becomes "mit 3 Hunden".
Where its digits are in the output but not on their own ("33", "3er"), where no word, or more
than one, is aligned to it, or where that word holds other digits, nothing is guessed: the
caller translates the line with its quantities taken out.
"""

from __future__ import annotations

from nmt.data.words import word_spans
from nmt.decode.text.markup import aligned, output_word_spans
from nmt.decode.text.verbatim import quantity_spans, stands_alone


def with_quantities(source: str, output: str, alignment: str, keep, joins: tuple[int, ...] = ()
                    ) -> tuple[str, tuple[int, ...]] | None:
    """`output` (and its `joins`, moved) with each quantity of `source` that `keep` kept in it
    standing alone, the output word aligned to it (`alignment`, Pharaoh, over the words of both)
    replaced by its digits where needed; None where one cannot be placed so."""
    source_words, spans = word_spans(source), output_word_spans(output, joins)
    links = aligned(alignment, len(spans)) if spans else {}
    replacements = {}
    for start, end in quantity_spans(source, keep):
        number = source[start:end]
        if stands_alone(number, output):
            continue
        if number in output:  # inside a longer number or joined to a word ("33", "3er"): not its own
            return None
        word = next((i for i, (a, b) in enumerate(source_words) if a <= start and end <= b), None)
        targets = set(links.get(word, []))
        if len(targets) != 1:
            return None
        [target] = targets
        a, b = spans[target]
        if any(c.isdigit() for c in output[a:b]) or replacements.get(target, number) != number:
            return None
        replacements[target] = number
    for target in sorted(replacements, reverse=True):  # from the end, so earlier offsets hold
        a, b = spans[target]
        number = replacements[target]
        output = output[:a] + number + output[b:]
        joins = tuple(j + len(number) - (b - a) if j >= b else j for j in joins)
    return output, joins
