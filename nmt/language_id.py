"""Which language each output line is in (`nmt score --langid de`): the share of the non-empty
lines that py3langid (Lui and Baldwin's langid.py, a naive Bayes model over byte n-grams of 97+
languages, shipped in the package and read without pickle) identifies as the expected language,
and the languages of the others. The measure of off-target output (a multilingual model
answering in the wrong language), which counts of function words only approximate.
"""

from __future__ import annotations

from collections import Counter
from importlib import metadata

from nmt.data.language_filter import identifier, identifier_label, unknown_language


def language_shares(lines: list[str], expected: str, top: int = 5) -> dict:
    """The share of non-empty `lines` identified as `expected` (an ISO 639-1 code py3langid
    knows, or another code of its language: deu, deu_Latn), and the `top` most frequent
    languages found with their shares."""
    ident = identifier("--langid")
    label = identifier_label(ident, expected)
    if label is None:
        raise unknown_language(ident, f"--langid {expected}")
    found = Counter(ident.classify(line)[0] for line in lines if line.strip())
    total = sum(found.values())
    return {"name": "langid", "expected": label, **({"asked": expected} if label != expected else {}), "lines": total,
            "share": round(found[label] / total, 4) if total else 0.0,
            "languages": {lang: round(n / total, 4) for lang, n in found.most_common(top)},
            "identifier": f"py3langid {metadata.version('py3langid')}"}


def describe(result: dict) -> str:
    others = ", ".join(f"{lang} {share:.1%}" for lang, share in result["languages"].items() if lang != result["expected"])
    asked = f" ({result['asked']})" if "asked" in result else ""
    return (f"langid {result['expected']}{asked}: {result['share']:.1%} of {result['lines']:,} non-empty lines"
            f"{f' (others: {others})' if others else ''}  ({result['identifier']})")
