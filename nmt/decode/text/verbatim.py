"""Text a translation copies unchanged: numbers, dates, times ("5 pm"), prices, URLs, e-mail
addresses, emoji and emoticons (":)"), @mentions and #hashtags, and codes such as "C-3PO" or
"COVID-19" (letters with digits and a capital). A model rarely copies what it seldom saw in
training (it rewrites "42" or drops a URL), so such spans are taken out of the line before
translation and put back into the output beside the words aligned to their neighbours
(nmt.decode.text.markup does both; `decode.copy_verbatim`).

A number joined to a word by a hyphen ("3-year-old") is part of that word and is translated.

A quantity, a plain number before a word ("3 people", "50 km"), can instead stay in the sentence
(`decode.quantities_in_place`, nmt.decode.text.quantities).
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Chinese, Japanese and Korean letters and their punctuation and full-width forms: text written
# against a URL, an e-mail address, a handle, a number or a code without a space ("网址https://x.org，
# 谢谢", "关注@nmt吧", "我有3000元", "COVID-19疫情") is not part of it.
_CJK_LETTERS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_PUNCTUATION = "\u3000-\u303f\uff00-\uffef"
_URL = rf"(?:https?://|ftp://|www\.)[^\s<>\"'`{_CJK_PUNCTUATION}]+"  # (a path may hold Han: /wiki/中国)
_WORD_CHAR = rf"[^\W{_CJK_LETTERS}]"  # a word's character, other than a CJK letter
_EMAIL = rf"(?:{_WORD_CHAR}|[.+-])+@(?:{_WORD_CHAR}|-)+(?:\.(?:{_WORD_CHAR}|-)+)+"
_NUMBER = r"[$€£¥₹]?[+-]?\d+(?:[.,:/-]\d+)*(?:%|[$€£¥₹])?"
# A time of day with its half of the day, "5 pm", "10am", "7:15 AM", "5:30 p.m." (the span ends
# before a final stop that also ends the line, which stays the sentence's).
_TIME = r"(?:1[0-2]|0?\d)(?::[0-5]\d)?\s?(?:[aApP][mM]|[ap]\.m(?:\.(?!\s*$))?|[AP]\.M(?:\.(?!\s*$))?)"
_CODE = rf"(?=(?:{_WORD_CHAR}|-)*\d)(?=(?:{_WORD_CHAR}|-)*[A-Z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*"
_HANDLE = rf"[@#][^\W_{_CJK_LETTERS}][^\W{_CJK_LETTERS}]*(?![^\W{_CJK_LETTERS}]|-)"  # "#nmt很好": #nmt
# Pictographs, dingbats and symbols, with their modifiers (variation selector, skin tones) and
# zero-width-joiner sequences; a run of them is one span.
_PICTOGRAPH = "[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\u2300-\u23FF\u3030\u303D\u3297\u3299]"
_EMOJI = f"(?:{_PICTOGRAPH}[\uFE0F\U0001F3FB-\U0001F3FF]*(?:\u200D{_PICTOGRAPH}[\uFE0F]*)*)+"

# Emoticons typed in ASCII: ":)", ";-)", ":D", ":'(", "xD", "<3", "^_^", each standing between
# spaces (or before a sentence's punctuation), so that "10:30", "http://" and "8)" stay what they are.
_EMOTICON = r"(?:[:;=][-'^]?[)(\]\[DPpOo/\\|*3]|[xX]D|<\/?3|\^_?\^)"

_VERBATIM = re.compile(
    rf"(?P<url>{_URL})|(?P<email>(?<!{_WORD_CHAR})(?<![.+-]){_EMAIL})|(?P<emoji>{_EMOJI})"
    rf"|(?<!\S)(?P<emoticon>{_EMOTICON})(?=$|\s|[.,!?])"
    rf"|(?<!{_WORD_CHAR})(?<![-:])(?P<time>{_TIME})(?!{_WORD_CHAR})"
    rf"|(?<!{_WORD_CHAR})(?<!-)(?:(?P<code>{_CODE})|(?P<number>{_NUMBER}))(?!{_WORD_CHAR}|-)"
    rf"|(?<!{_WORD_CHAR})(?<!-)(?P<handle>{_HANDLE})")
_URL_TAIL = ".,;:!?'\")]}"
_PLAIN_NUMBER = re.compile(r"\d+")
_WORD_AFTER = re.compile(r"\s+[^\W\d_]")  # whitespace, then a letter (of any script)


def verbatim_spans(text: str, keep: Callable[[str], bool] | None = None) -> list[tuple[int, int]]:
    """The (start, end) character spans of `text` to copy unchanged, in order, not overlapping;
    a quantity that `keep` (where given) says stays in the text is not one."""
    spans = []
    for match in _VERBATIM.finditer(text):
        start, end = match.span()
        if keep is not None and _is_quantity(text, match) and keep(match.group()):
            continue
        if match.lastgroup == "url":  # a URL ends before the punctuation after it ("see x.org.")
            while end > start and text[end - 1] in _URL_TAIL and not _balanced(text[start:end]):
                end -= 1
        spans.append((start, end))
    return spans


def quantity_spans(text: str, keep: Callable[[str], bool] = lambda _: True) -> list[tuple[int, int]]:
    """The (start, end) of each quantity of `text`, a number written as plain digits before a word
    ("3 people"), that `keep` says stays in it."""
    return [match.span() for match in _VERBATIM.finditer(text) if _is_quantity(text, match) and keep(match.group())]


def stands_alone(number: str, text: str) -> bool:
    """Whether `text` has `number` on its own: not inside a longer number, nor joined to a word
    ("2019s"); Chinese, Japanese and Korean letters may touch it, as those languages write it."""
    return re.search(rf"(?<!{_WORD_CHAR}){re.escape(number)}(?!{_WORD_CHAR})", text) is not None


def _is_quantity(text: str, match: re.Match) -> bool:
    return (match.lastgroup == "number" and _PLAIN_NUMBER.fullmatch(match.group()) is not None
            and _WORD_AFTER.match(text, match.end()) is not None)


def _balanced(url: str) -> bool:
    """Whether a URL's closing bracket belongs to it (".../Foo_(bar)")."""
    last = url[-1]
    pairs = {")": "(", "]": "[", "}": "{"}
    return last in pairs and url.count(pairs[last]) >= url.count(last)
