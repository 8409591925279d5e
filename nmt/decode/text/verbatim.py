"""Text a translation copies unchanged: programs' placeholders ("%s", "{0}", "{{ name }}"), numbers (with their unit: "1.5 m", "100m", "30 °C"), dates,
times ("5 pm"), prices, URLs, e-mail addresses, emoji and emoticons (":)"), @mentions and
#hashtags, and codes such as "C-3PO" or "COVID-19" (letters with digits and a capital). A model rarely copies what it seldom saw in
training (it rewrites "42" or drops a URL), so such spans are taken out of the line before
translation and put back into the output beside the words aligned to their neighbours
(nmt.decode.text.markup does both; `decode.copy_verbatim`).

So is text written in letters the source vocabulary lacks (`unreadable_spans`): "寿司" or
"Добро пожаловать" in an English line, for a model trained on Latin script alone, reaches the
model as unknown pieces, which it drops or answers with invented words; a line of it whole came
back as a German sentence no one wrote. Copied, it stays as the user wrote it.

A number joined to a word by a hyphen ("3-year-old") is part of that word and is translated.

A quantity, a plain number before a word ("3 people", "50 km"), can instead stay in the sentence
(`decode.quantities_in_place`, nmt.decode.text.quantities).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from nmt.data.words import outside_spans, written_without_spaces

# Chinese, Japanese and Korean letters and their punctuation and full-width forms: text written
# against a URL, an e-mail address, a handle, a number or a code without a space ("网址https://x.org，
# 谢谢", "关注@nmt吧", "我有3000元", "COVID-19疫情") is not part of it.
_CJK_LETTERS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_PUNCTUATION = "\u3000-\u303f\uff00-\uffef"
_URL = rf"(?:https?://|ftp://|www\.)[^\s<>\"'`{_CJK_PUNCTUATION}]+"  # (a path may hold Han: /wiki/中国)
_WORD_CHAR = rf"[^\W{_CJK_LETTERS}]"  # a word's character, other than a CJK letter
_EMAIL = rf"(?:{_WORD_CHAR}|[.+-])+@(?:{_WORD_CHAR}|-)+(?:\.(?:{_WORD_CHAR}|-)+)+"
_NUMBER = r"[$€£¥₹]?[+-]?\d+(?:[.,:/-]\d+)*(?:%|[$€£¥₹])?"
# Units of measure written after a number, with a space or without ("1.5 m", "100m", "30°C"); not
# "s" ("the 1950s"), "in" or "t", which are words as often
_UNIT = ("(?:km/h|m/s|mph|kph|kWh|mAh|kcal|[kMG]?Hz|[kKMGT]B|[kM]?W|kV|km|cm|mm|µm|kg|mg|ml|mL|cl|dl|lbs|lb|oz|ft|yd"
         "|mi|min|hrs|hr|cal|°[CF]|°|m|g|l|L|V|h)")
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

# Placeholders of the formats programs' messages are written in: Python's and .NET's {0}, {name!r},
# {value:,.2f} and template engines' {{ name }} (with JavaScript's ${name}); printf's %s, %5.2f, %-10s,
# %1$s, Python's %(name)s and %r, Objective-C's %@ (and a String Catalog's %#@name@ and %arg), %% (a
# percent sign); Qt's %1, %L1 and %n; Ruby's %{name}, browser extensions' $NAME$, i18next's nested
# $t(key) and PHP's {$a} and {$a->name} (Moodle's strings; its arrow may be markup's -&gt;). A space
# is not taken as printf's flag, so that "50% discount" stays text, nor is a
# percent sign after a number ("79%{0}", in a script written without spaces).
PLACEHOLDER = re.compile(r"\$?\{\{\s*[\w.\[\]-]+\s*\}\}|\$?\{[\w.\[\]-]*(?:![rsa])?(?::[^{}\s]*)?\}|\{\$\w+(?:-(?:>|&gt;)\w+)*\}"
                         r"|%(?:\d+\$)?#@\w+@|%arg\b|(?<!\d)%\{\w+\}|\$[A-Za-z_]\w*\$|\$t\([^()\s]+(?:,\s*\{[^{}]*\})?\)"
                         r"|%(?:\(\w+\)|\d+\$)?[-+#0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|z|j|t)?[diouxXeEfFgGcrsaAp@]"
                         r"|%%|%L?\d{1,2}(?![\d$])|%L?n\b")

_VERBATIM = re.compile(
    rf"(?P<placeholder>{PLACEHOLDER.pattern})|(?P<url>{_URL})|(?P<email>(?<!{_WORD_CHAR})(?<![.+-]){_EMAIL})|(?P<emoji>{_EMOJI})"
    rf"|(?<!\S)(?P<emoticon>{_EMOTICON})(?=$|\s|[.,!?])"
    rf"|(?<!{_WORD_CHAR})(?<![-:])(?P<time>{_TIME})(?!{_WORD_CHAR})"
    rf"|(?<!{_WORD_CHAR})(?<!-)(?P<measure>{_NUMBER}{_UNIT})(?!{_WORD_CHAR}|[-/])"
    rf"|(?<!{_WORD_CHAR})(?<!-)(?:(?P<code>{_CODE})|(?P<number>{_NUMBER}))(?!{_WORD_CHAR}|-)"
    rf"|(?<!{_WORD_CHAR})(?<!-)(?P<handle>{_HANDLE})")
_URL_TAIL = ".,;:!?'\")]}"
_UNIT_AFTER = re.compile(rf" ?{_UNIT}(?!{_WORD_CHAR}|[-/])")
_LABEL_END = re.compile(r"([:：|>–—-]+)\s")  # after a span that begins a line, a label's mark
_RUN_GAP = re.compile(r"[\s,;:/&·–—-]*")  # what an unreadable run goes on over to the next
ENCLOSING = dict(zip("\"'“„‘«‹「『(（[<", "\"'”“’»›」』)）]>"))
_PLAIN_NUMBER = re.compile(r"\d+")
_WORD_AFTER = re.compile(r"\s+[^\W\d_]")  # whitespace, then a letter (of any script)


def verbatim_spans(text: str, keep: Callable[[str], bool] | None = None,
                   readable: Callable[[str], bool] | None = None,
                   names: Callable[[str], list[tuple[int, int]]] | None = None) -> list[tuple[int, int]]:
    """The (start, end) character spans of `text` to copy unchanged, in order, not overlapping;
    a quantity that `keep` (where given) says stays in the text is not one. Where `readable` (a
    character's test) is given, text in letters it fails is one too (`unreadable_spans`), but for
    such text inside the spans that `names` finds, which stays in its sentence where the model
    reads words around it."""
    spans = _pattern_spans(text, keep)
    if readable is not None:
        unread = unreadable_spans(text, readable)
        if unread and names is not None and any(c.isalpha() and readable(c) for c in outside_spans(text, unread)):
            found = names(text)
            unread = [(a, b) for a, b in unread if not any(x <= a and b <= y for x, y in found)]
        spans = _union(spans + unread)
    # quotes or brackets that hold just a span go with it ('"42"', "(15%)", '"Добро пожаловать"'):
    # the model would make words of them, empty
    spans = [(start - 1, end + 1) if 0 < start and end < len(text) and ENCLOSING.get(text[start - 1]) == text[end]
             else (start, end) for start, end in spans]
    if spans and not text[:spans[0][0]].strip() and (label := _LABEL_END.match(text, spans[0][1])):
        spans[0] = (spans[0][0], label.end(1))  # "@nmt: hello", "Иван: hello": the label's colon goes with it
    return spans


def unreadable_spans(text: str, readable: Callable[[str], bool]) -> list[tuple[int, int]]:
    """The (start, end) of each run of `text` written in letters that `readable` fails (those the
    source vocabulary lacks): from such a letter over the letters, digits and unreadable
    characters around it, and on to the next such run where nothing but spaces, commas, colons,
    dashes and the like lie between ("Добро пожаловать", "Мужчина, женщина"). Unreadable
    punctuation or symbols alone ("→") are left to the model."""
    if all(readable(char) for char in set(text) if char.isalpha()):
        return []  # (most lines: each distinct character looked at once)
    spans: list[list[int]] = []
    at = 0
    while at < len(text):
        if not (text[at].isalpha() and not readable(text[at])):
            at += 1
            continue
        start, end = at, at + 1
        while start > 0 and _joins(text[start - 1], readable):
            start -= 1
        while end < len(text) and _joins(text[end], readable):
            end += 1
        if spans and _RUN_GAP.fullmatch(text, spans[-1][1], start):
            spans[-1][1] = end
        else:
            spans.append([start, end])
        at = end
    return [(start, end) for start, end in spans]


def _joins(char: str, readable: Callable[[str], bool]) -> bool:
    """Whether `char` belongs to the unreadable run beside it: any character the vocabulary lacks
    but a space, a combining mark, or a letter or digit of its word ("naïve" whole), where words
    stand between spaces (in Chinese, Japanese or Thai, the letters beside a rare character are
    other words)."""
    return ((not char.isspace() and not readable(char)) or unicodedata.category(char).startswith("M")
            or (char.isalnum() and not written_without_spaces(char)))


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans sorted, those that overlap or touch made one."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end) for start, end in merged]


def _pattern_spans(text: str, keep: Callable[[str], bool] | None) -> list[tuple[int, int]]:
    spans = []
    for match in _VERBATIM.finditer(text):
        start, end = match.span()
        if keep is not None and _is_quantity(text, match) and keep(match.group()):
            continue
        if match.lastgroup == "url":  # a URL ends before the punctuation after it ("see x.org.")
            while end > start and text[end - 1] in _URL_TAIL and not _balanced(text[start:end]):
                end -= 1
        elif match.lastgroup == "number" and (unit := _UNIT_AFTER.match(text, end)):
            end = unit.end()  # a number taken out takes its unit along ("1.5 m", "30 °C")
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
