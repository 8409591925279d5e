"""A sentence keeps the mark it ends in: a question or exclamation mark, an ellipsis, a colon or
a comma. A model trained on text that ends in full stops (Multi30k's captions, most of a news
corpus) writes one after an exclamation it has rarely seen ("Wow! A dog jumps over a fence!"
gave "Wette. Ein Hund springt über einen Zaun."), after a question it garbles, and after a line
that trails off ("…"), introduces a list (":") or was cut by a line break (","). Where the
output of such a sentence ends in a full stop, the stop becomes the source's mark, in the target
language's form; where it ends in a letter or a digit, the mark is added; any other ending (its
own marks, an ellipsis, a closing quote) is the model's and stays (`decode.end_marks`). Spanish
opens a question or exclamation with "¿" or "¡" too, where the output has none, and French
writes a space before "?", "!" and ":".
"""

from __future__ import annotations

import re

from nmt.data.languages import two_letter

_QUESTION, _EXCLAMATION = "?？؟", "!！"
_GREEK_QUESTION = ";\u037e"  # Greek writes a question mark as a semicolon
_COLONS, _COMMAS = ":：", ",，、،"
_ELLIPSES = ("...", "…")
_FULL_STOPS = ".。．।۔"  # Latin, Chinese and Japanese, full-width, Devanagari (danda), Urdu
_ARABIC_SCRIPT = frozenset({"ar", "fa", "ur", "ps", "sd", "ug", "ku"})
_TAGS_AT_END = r"(?:\s*</?\w+/?>)*\s*$"
_ENDS_IN_MARK = re.compile(r"[.!?…。！？:;][)\]\"'»”’]*" + _TAGS_AT_END)  # "Done.", "(Done.)", not "Settings (beta)"
_ADDED_STOP = re.compile(r"(?<![.…])[.。](?=" + _TAGS_AT_END + ")")
_LONGEST_RUN = 3  # "?!", "!!!": a longer run of marks is emphasis to keep as typed, not to rewrite
# The target's forms of "?", "!", ":" and "," where they are not those (an ellipsis stays as typed).
_FORMS = {"zh": {"?": "？", "!": "！", ":": "：", ",": "，"}, "ja": {"?": "？", "!": "！", ":": "：", ",": "、"},
          "el": {"?": ";"}, **{code: {"?": "؟", ",": "،"} for code in _ARABIC_SCRIPT}}


def end_marks(sentence: str, lang: str | None = None) -> str:
    """The mark `sentence` ends in, written plainly: a run of question and exclamation marks ("?",
    "!", "?!"; in a Greek sentence, `lang`, a final semicolon is a question mark), an ellipsis as
    typed ("..." or "…"), ":" or ","; "" for none (a full stop, a longer run, anything else)."""
    text = sentence.rstrip()
    if text.endswith(_ELLIPSES):
        return "" if text.endswith("....") else "…" if text.endswith("…") else "..."
    if text[-1:] and text[-1] in _COLONS:
        return ":"
    if text[-1:] and text[-1] in _COMMAS:
        return ","
    run = ""
    for char in reversed(text):
        if char in _QUESTION or (lang is not None and two_letter(lang) == "el" and char in _GREEK_QUESTION):
            run = "?" + run
        elif char in _EXCLAMATION:
            run = "!" + run
        else:
            break
    return run if len(run) <= _LONGEST_RUN else ""


def in_target_form(marks: str, lang: str | None) -> str:
    """`marks` (an `end_marks` result) as the target language writes them."""
    forms = _FORMS.get(two_letter(lang) if lang else "", {})
    return "".join(forms.get(mark, mark) for mark in marks) if marks not in _ELLIPSES else marks


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
    spaced = code == "fr" and marks[0] in "?!:"
    output = output.rstrip() + (" " if spaced else "") + in_target_form(marks, lang)
    if code == "es" and set(marks) <= set("?!") and not any(c in output for c in "¿¡"):
        output = ("¿" if "?" in marks else "¡") + output
    return output


def without_stop_its_source_lacks(source: str, translation: str) -> str:
    """`translation` without the full stop a model ended it with where `source` ends in no mark: a
    title, a heading, a button's label ("Save file": "Datei speichern", not "Datei speichern.")."""
    return translation if _ENDS_IN_MARK.search(source) else _ADDED_STOP.sub("", translation, count=1)
