"""The plural categories a language's messages need (Unicode CLDR's cardinal rules), for resource
files that give each category its own string: Android's `<plurals>`, Apple's String Catalogs,
i18next's `key_one`/`key_other`. A translation into Russian needs `few` and `many` where the
English source had only `one` and `other`; into Japanese, `other` alone.

Only the categories that whole numbers reach are listed, with `other`, which every language has
(Russian's `other` is for fractions, French's `many` for millions written "1 M" only). Where a
language is not listed, the source's categories are kept.
"""

from __future__ import annotations

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


def plural_categories(language: str) -> tuple[str, ...] | None:
    """The plural categories of messages in `language` (any code nmt reads: de, deu_Latn, pt-BR),
    in CLDR's order; None where it is not known."""
    return _CATEGORIES.get(two_letter(language) or language_tag(language).split("-")[0].lower())


def plural_forms(language: str, source: dict[str, object]) -> tuple[dict[str, object], list[str]]:
    """A plural's forms for `language` from its source's (category: form; each already
    translated): one for each of the language's categories, the source's own where it has that
    category, else its `other` (a form a reviewer should adapt); and the categories so added. A
    source's `zero` stays, as a message for none ("No files") that Apple's and i18next's files may
    give any language. Where the language's categories are not known, or the source has no
    `other`, the source's forms."""
    known = plural_categories(language)
    if known is None or "other" not in source:
        return dict(source), []
    wanted = [category for category in ORDER if category in known or (category == "zero" and category in source)]
    added = [category for category in wanted if category not in source]
    return {category: source.get(category, source["other"]) for category in wanted}, added
