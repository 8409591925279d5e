"""Sentences typed as in a chat: starting in lower case, or without a full stop ("a dog runs in the
park"). A model trained on written sentences (Multi30k's captions all start with a capital and most
end with a full stop) translates them worse: on the test set, such lines scored 2.4 BLEU under the
same lines as written (make bench-fragments). So a sentence is given to the model with its first
letter capitalized, where its first word is in lower case, and with a full stop, where it ends in
a letter of a script with capitals or a digit; the full stop comes off the output again
(`decode.complete_sentences`, off by default and on in recipes/multi30k_en_de.yaml, where it was
measured). With decode.end_marks, a sentence ending in "!", an ellipsis, a colon or a comma is
given to the model with a full stop in that mark's place, and the output gets the mark back
(nmt.decode.text.end_marks). A sentence copied rather than translated comes back as typed. The
output's first letter stays as the model writes it: in German, a noun's capital is not style.
"""

from __future__ import annotations

import re

from nmt.decode.text.end_marks import end_marks

_FIRST_WORD = re.compile(r"[^\W\d_]+")


def completed(sentence: str, begins: bool = True, ends: bool = True, marks_restored: bool = False) -> tuple[str, bool]:
    """`sentence` as a written one begins (where it `begins` one: not the second part of a sentence
    cut in parts) and ends (where it `ends` one), and whether a full stop was added. Where the
    output gets the source's end mark back (`marks_restored`: decode.end_marks), a sentence
    ending in an exclamation mark, an ellipsis, a colon or a comma is given to the model ending
    in a full stop, which the model knows better (make bench-end-marks); a question stays one."""
    first = _FIRST_WORD.match(sentence)
    if begins and first and first.group().islower():
        sentence = sentence[0].upper() + sentence[1:]
    if ends and marks_restored and (marks := end_marks(sentence)) and "?" not in marks:
        plain = sentence.rstrip()[:-len(marks)]
        return (plain + ".", False) if _stop_follows(plain) else (sentence, False)
    added = ends and _stop_follows(sentence)
    return (sentence + "." if added else sentence), added


def _stop_follows(sentence: str) -> bool:
    """Whether `sentence` ends where a full stop can follow: a letter of a script with capitals, or
    a digit (Chinese or Thai end otherwise)."""
    last = sentence[-1:]
    return bool(last) and (last.isdigit() or last.lower() != last.upper())


def without_added_stop(output: str) -> str:
    """An output's text without the full stop its source was given (a "..." stays)."""
    return output[:-1] if output.endswith(".") and not output.endswith("..") else output
