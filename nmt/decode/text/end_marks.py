"""A sentence that ends in a question or exclamation mark keeps it in its translation. A model
trained on text that ends in full stops (Multi30k's captions, most of a news corpus) writes one
after an exclamation it has rarely seen ("Wow! A dog jumps over a fence!" gave "Wette. Ein Hund
springt über einen Zaun."), and after a question it garbles. Where the output of such a
sentence ends in a full stop, the stop becomes the source's marks, in the target language's
form; where it ends in a letter or a digit, they are added; any other ending (its own marks, an
ellipsis, a closing quote) is the model's and stays (`decode.end_marks`). Spanish opens the
sentence with "¿" or "¡" too, where the output has none, and French writes a space before them.
"""

from __future__ import annotations

from nmt.data.languages import two_letter

_QUESTION, _EXCLAMATION = "?？؟", "!！"
_GREEK_QUESTION = ";\u037e"  # Greek writes a question mark as a semicolon
_FULL_STOPS = ".。．।۔"  # Latin, Chinese and Japanese, full-width, Devanagari (danda), Urdu
_ARABIC_SCRIPT = frozenset({"ar", "fa", "ur", "ps", "sd", "ug", "ku"})
_FULL_WIDTH = frozenset({"zh", "ja"})
_LONGEST_RUN = 3  # "?!", "!!!": a longer run of marks is emphasis to keep as typed, not to rewrite


def end_marks(sentence: str, lang: str | None = None) -> str:
    """The question and exclamation marks `sentence` ends in ("?", "!", "?!"; "" for none), each
    written "?" or "!"; in a Greek sentence (`lang`), a final semicolon is a question mark."""
    run = ""
    for char in reversed(sentence.rstrip()):
        if char in _QUESTION or (lang is not None and two_letter(lang) == "el" and char in _GREEK_QUESTION):
            run = "?" + run
        elif char in _EXCLAMATION:
            run = "!" + run
        else:
            break
    return run if len(run) <= _LONGEST_RUN else ""


def in_target_form(marks: str, lang: str | None) -> str:
    """`marks` ("?", "!", "?!") as the target language writes them."""
    code = two_letter(lang) if lang else None
    question, exclamation = "?", "!"
    if code in _FULL_WIDTH:
        question, exclamation = "？", "！"
    elif code == "el":
        question = ";"
    elif code in _ARABIC_SCRIPT:
        question = "؟"
    return marks.replace("?", question).replace("!", exclamation)


def with_end_marks(output: str, marks: str, lang: str | None) -> str:
    """`output` ending in `marks` (the source sentence's, `end_marks`) where it ends in a full
    stop (not an ellipsis) or a letter or a digit; else as it is."""
    if not marks or not output:
        return output
    last = output[-1]
    if last in _FULL_STOPS and not output.endswith(("..", "．．", "。。")):
        output = output[:-1]
    elif not last.isalnum():
        return output
    code = two_letter(lang or "")
    output = output.rstrip() + (" " if code == "fr" else "") + in_target_form(marks, lang)
    if code == "es" and not any(c in output for c in "¿¡"):
        output = ("¿" if "?" in marks else "¡") + output
    return output
