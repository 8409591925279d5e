"""Numbers copied into a translation (nmt.decode.text.verbatim) written with the target language's
decimal mark and thousands separator (`decode.number_marks`): "1,000 dollars" in English is "1.000
Dollar" in German, where "1,000" reads as one with three decimals, and "3.5 ft" is "3,5 ft"
(Multi30k's German references write 95.000 and 2,52 Dollar for 95,000 and $2.52).

A number is read by the source language's marks, and rewritten only where that reading is sure:
- with thousands separators, every group of three digits ("25,000", "1,234.5"; in German
  "25.000", "1.234,5"): separators are no part of a version, a date or a section number;
- with a decimal mark alone ("3.5"), only where a unit, a currency or a percent sign goes with it
  ("3.5 ft", "$4.99", "2.5%"), or a word of MEASURE_WORDS follows it ("3.5 million", "2.5
  percent", "1.5 feet"): "Python 3.5" and "section 2.1" stay as written.
Ranges ("2,000-3,000"), dates, times and a number in a language without an entry in MARKS stay as
written, and so does a number without separators ("2500"). The currency sign keeps its place.
"""

from __future__ import annotations

import re

from nmt.decode.text.verbatim import ENCLOSING

# A language's (two-letter code) decimal mark, its thousands separator, and the fewest digits a
# number has before the separator is written, less three (CLDR's minimumGroupingDigits: Spanish
# and Polish write 1000 but 10 000). French groups with a narrow no-break space, the languages
# that group with a space with a no-break one.
MARKS = {
    **dict.fromkeys(("en", "zh", "ja", "ko", "he", "th", "ms"), (".", ",", 1)),  # (not Hindi: it groups by lakhs)
    **dict.fromkeys(("de", "it", "nl", "pt", "tr", "id", "da", "el", "ro", "hr", "sl", "sr", "vi"), (",", ".", 1)),
    "es": (",", ".", 2),
    "fr": (",", "\u202f", 1),
    **dict.fromkeys(("cs", "sk", "ru", "uk", "sv", "fi", "nb", "hu", "bg", "et", "lt", "lv"), (",", "\u00a0", 1)),
    "pl": (",", "\u00a0", 2),
}
# Words that say a number before them is a measure, by source language (two-letter code): the words
# of units, amounts and currencies that verbatim spans leave out ("3.5 million", "2.5 percent").
MEASURE_WORDS = {
    "en": {"million", "millions", "billion", "billions", "trillion", "percent", "per", "times", "degrees", "feet",
           "foot", "inches", "inch", "yards", "miles", "meters", "metres", "kilometers", "kilometres",
           "centimeters", "centimetres", "millimeters", "pounds", "ounces", "tons", "tonnes", "grams", "kilograms",
           "kilos", "liters", "litres", "gallons", "dollars", "euros", "cents", "hours", "minutes", "seconds", "days",
           "weeks", "months", "years", "points", "goals", "stars", "acres", "hectares"},
    "de": {"millionen", "million", "milliarden", "milliarde", "prozent", "mal", "grad", "meter", "kilometer",
           "zentimeter", "millimeter", "fuß", "zoll", "meilen", "pfund", "tonnen", "gramm", "kilogramm", "kilo", "liter",
           "euro", "dollar", "cent", "stunden", "minuten", "sekunden", "tage", "wochen", "monate", "jahre", "punkte",
           "hektar"},
    "fr": {"millions", "million", "milliards", "milliard", "pour", "fois", "degrés", "mètres", "kilomètres",
           "centimètres", "millimètres", "pieds", "pouces", "miles", "livres", "tonnes", "grammes", "kilogrammes",
           "kilos", "litres", "euros", "dollars", "centimes", "heures", "minutes", "secondes", "jours", "semaines",
           "mois", "ans", "années", "points", "hectares"},
}
_WORD = re.compile(r"\s*([^\W\d_]+)")
_SPAN = re.compile(r"(?P<before>[$€£¥₹]?[+-]?)(?P<number>\d[\d.,\u00a0\u202f ]*\d|\d)(?P<after>.*)", re.S)
_WITH_UNIT = re.compile(r"%|[$€£¥₹]| ?(?:[^\W\d_][\w/°]*|°[CF]?)")  # what may follow a number in its span


def _reading(number: str, decimal: str, group: str) -> tuple[str, str, bool] | None:
    """(integer digits, fraction digits, grouped) of `number` read by a language's marks, or None
    where it is no number so written."""
    groups = re.escape(group) + ("| " if group in "\u00a0\u202f" else "")  # (a plain space groups there too)
    grouped = re.fullmatch(rf"(\d{{1,3}}(?:(?:{groups})\d{{3}})+)(?:{re.escape(decimal)}(\d+))?", number)
    if grouped:
        return re.sub(r"\D", "", grouped.group(1)), grouped.group(2) or "", True
    plain = re.fullmatch(rf"(\d+)(?:{re.escape(decimal)}(\d+))?", number)
    return (plain.group(1), plain.group(2) or "", False) if plain else None


def written_for(span: str, source: str | None, target: str | None, word_after: str = "") -> str:
    """A verbatim span (nmt.decode.text.verbatim) as the `target` language writes its number, read
    by the `source` language's marks (two-letter codes); as it is where either has no entry, or
    where the reading is not sure (the module's docstring). `word_after`: the source's word after it."""
    if source not in MARKS or target not in MARKS or MARKS[source][:2] == MARKS[target][:2]:
        return span
    if len(span) > 2 and ENCLOSING.get(span[0]) == span[-1]:  # a number in quotes or brackets: '"1,000"', "(2.5%)"
        return span[0] + written_for(span[1:-1], source, target, word_after) + span[-1]
    match = _SPAN.fullmatch(span)
    if match is None or not (match["after"] == "" or _WITH_UNIT.fullmatch(match["after"])):
        return span
    reading = _reading(match["number"], *MARKS[source][:2])
    if reading is None:
        return span
    integer, fraction, grouped = reading
    measured = bool(match["after"] or match["before"].strip("+-")) or word_after.lower() in MEASURE_WORDS.get(source, ())
    if not grouped and not (fraction and measured):
        return span
    decimal, group, fewest = MARKS[target]
    if grouped and len(integer) >= 3 + fewest:
        head = len(integer) % 3 or 3
        integer = group.join([integer[:head], *(integer[i:i + 3] for i in range(head, len(integer), 3))])
    return f"{match['before']}{integer}{decimal + fraction if fraction else ''}{match['after']}"


def in_target_number_marks(items: list, text: str, source: str | None, target: str | None) -> None:
    """Each verbatim span among markup items (nmt.decode.text.markup.Item: a point of no name, at
    its place in the line's `text`) and inside them written by `written_for`."""
    for item in items:
        if item.point and not item.name:
            after = _WORD.match(text, item.start)
            item.open = written_for(item.open, source, target, after.group(1) if after else "")
        in_target_number_marks(item.children, text, source, target)
