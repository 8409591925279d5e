"""The plural categories a language's messages need (Unicode CLDR's cardinal rules), for resource
files that give each category its own string: Android's `<plurals>`, Apple's String Catalogs,
i18next's `key_one`/`key_other`. A translation into Russian needs `few` and `many` where the
English source had only `one` and `other`; into Japanese, `other` alone.

Only the categories that whole numbers reach are listed, with `other`, which every language has
(Russian's `other` is for fractions, French's `many` for millions written "1 M" only). Where a
language is not listed, the source's categories are kept. Beside them, gettext's Plural-Forms of
languages, for catalogs and for Qt's numerus forms, which count as gettext does.
"""

from __future__ import annotations

import re

from nmt.data.languages import language_tag, two_letter

ORDER = ("zero", "one", "two", "few", "many", "other")  # as CLDR and the resource files list them

_OTHER = ("other",)
_ONE = ("one", "other")
_FEW = ("one", "few", "other")
_FEW_MANY = ("one", "few", "many", "other")
_CATEGORIES = {
    **dict.fromkeys(("ja", "zh", "ko", "vi", "th", "lo", "km", "my", "id", "ms", "jv", "yo", "ig", "bo", "dz"), _OTHER),
    **dict.fromkeys(("en", "de", "nl", "sv", "da", "nb", "nn", "no", "fi", "et", "el", "it", "es", "pt", "bg", "hu",
                     "ca", "eu", "gl", "tr", "ur", "af", "sw", "is", "mk", "ka", "hy", "fa", "sq", "az", "kk", "uz",
                     "ky", "mn", "hi", "bn", "ta", "te", "ml", "kn", "mr", "gu", "pa", "ne", "si", "am", "zu", "xh",
                     "fr", "ha", "so", "ps", "tk", "eo", "fo", "lb", "fy", "tl", "fil", "ku", "sd", "or", "as"), _ONE),
    **dict.fromkeys(("ru", "uk", "be", "pl"), _FEW_MANY),
    **dict.fromkeys(("cs", "sk", "lt", "ro", "hr", "sr", "bs", "mo"), _FEW),
    "lv": ("zero", "one", "other"),
    "he": ("one", "two", "other"),
    "sl": ("one", "two", "few", "other"),
    "ga": ("one", "two", "few", "many", "other"),
    "mt": ("one", "two", "few", "many", "other"),
    "ar": ORDER,
    "cy": ORDER,
}


# gettext's plural rules of languages (the GNU gettext manual's "Plural forms"), for a catalog made
# from a template, whose header has none, and their number of forms for Qt's numerus forms
_GETTEXT_ONE = "nplurals=1; plural=0;"
_GETTEXT_NOT_ONE = "nplurals=2; plural=(n != 1);"
_GETTEXT_EAST_SLAVIC = "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"
_GETTEXT_RULES = {
    **dict.fromkeys(("ja", "ko", "zh", "vi", "th", "lo", "km", "my"), _GETTEXT_ONE),
    **dict.fromkeys(("en", "de", "nl", "sv", "da", "nb", "nn", "no", "et", "fi", "el", "he", "it", "pt", "es", "bg",
                     "hu", "ca", "eu", "gl", "sq", "ur", "tr", "eo", "fo", "af", "sw"), _GETTEXT_NOT_ONE),
    **dict.fromkeys(("fr", "pt_BR"), "nplurals=2; plural=(n > 1);"),
    **dict.fromkeys(("ru", "uk", "be", "sr", "hr", "bs"), _GETTEXT_EAST_SLAVIC),
    **dict.fromkeys(("cs", "sk"), "nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;"),
    "pl": "nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
    "lt": "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && (n%100<10 || n%100>=20) ? 1 : 2);",
    "lv": "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n != 0 ? 1 : 2);",
    "ro": "nplurals=3; plural=(n==1 ? 0 : (n==0 || (n%100 > 0 && n%100 < 20)) ? 1 : 2);",
    "ga": "nplurals=3; plural=n==1 ? 0 : n==2 ? 1 : 2;",
    "sl": "nplurals=4; plural=(n%100==1 ? 0 : n%100==2 ? 1 : n%100==3 || n%100==4 ? 2 : 3);",
    "ar": "nplurals=6; plural=(n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 ? 4 : 5);",
}


def gettext_plural_forms(language: str) -> str | None:
    """A language's Plural-Forms as gettext writes it ("nplurals=2; plural=(n != 1);"); None where
    it is not known."""
    return _GETTEXT_RULES.get(language_tag(language).replace("-", "_")) or _GETTEXT_RULES.get(two_letter(language) or "")


def plural_form_count(rule: str) -> int | None:
    """How many forms a Plural-Forms rule ("nplurals=2; plural=...") has; None where it names none."""
    found = re.search(r"nplurals\s*=\s*(\d+)", rule)
    return int(found.group(1)) if found else None


def plural_categories(language: str) -> tuple[str, ...] | None:
    """The plural categories of messages in `language` (any code nmt reads: de, deu_Latn, pt-BR),
    in CLDR's order; None where it is not known."""
    return _CATEGORIES.get(two_letter(language) or language_tag(language).split("-")[0].lower())


def plural_forms(language: str, source: dict[str, object]) -> tuple[dict[str, object], list[str]]:
    """A plural's forms for `language` from its source's (category: form; each already
    translated), in CLDR's order: one for each of the language's categories, the source's own
    where it has that category, else its `other` (a form a reviewer should adapt); and the
    categories so added. A
    source's `zero` stays, as a message for none ("No files") that Apple's and i18next's files may
    give any language. Where the language's categories are not known, or the source has no
    `other`, the source's forms."""
    known = plural_categories(language)
    if known is None or "other" not in source:
        return dict(source), []
    wanted = [category for category in ORDER if category in known or (category == "zero" and category in source)]
    added = [category for category in wanted if category not in source]
    return {category: source.get(category, source["other"]) for category in wanted}, added
