"""Lines already in the target language, copied as written (`decode.keep_target_language`).

A model has only learned to read its source language; given a sentence in its target language (a
German line among the English ones of a document, for an English-German model), it writes a
made-up one ("Eine Gruppe von Menschen steht vor einem Iglu." gave "Ein Jugendlicher, der einen
Iglu."). Such a sentence is found by py3langid (Lui and Baldwin's langid.py, nmt.data.language_filter;
the extra nmt[langid], without which nothing is copied and a warning says so once) between the two languages of the line's direction only: the target's share of their two
probabilities at least THRESHOLD, in a sentence of at least MIN_WORDS words (one word says too
little: "Gift", "Kindergarten"). It is copied as it is, never given to the model. Nothing is
copied where the identifier knows only one of the two languages, or both are one language.
"""

from __future__ import annotations

from collections.abc import Callable

from nmt.data.language_filter import identifier, identifier_label
from nmt.errors import NmtError

THRESHOLD = 0.99  # no English line of Multi30k's 29,000 training lines reaches 0.9 as German
MIN_WORDS = 2


_missing_said = False  # that py3langid is missing, said once per process


def in_target_language(texts: list[str], directions: list[tuple[str | None, str | None]],
                       warn: Callable[[str], None] = lambda _: None) -> list[bool]:
    """For each text, whether it is in its direction's (source, target) target language. Without
    py3langid (an install that lacks it), none is, and `warn` hears so once."""
    global _missing_said
    if not texts:
        return []
    try:
        ident = identifier("decode.keep_target_language", probabilities=True)
    except NmtError as e:
        if not _missing_said:
            _missing_said = True
            warn(f"{e}; every sentence is translated, none copied")
        return [False] * len(texts)
    found = []
    for text, (source, target) in zip(texts, directions):
        labels = [identifier_label(ident, code) if code else None for code in (source, target)]
        if None in labels or labels[0] == labels[1] or len(text.split()) < MIN_WORDS:
            found.append(False)
            continue
        ranked = dict(ident.rank(text))
        src, tgt = ranked.get(labels[0], 0.0), ranked.get(labels[1], 0.0)
        found.append(src + tgt > 0 and tgt / (src + tgt) >= THRESHOLD)
    return found
