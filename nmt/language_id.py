"""Which language each output line is in (`nmt score --langid de`): the share of the non-empty
lines that py3langid (Lui and Baldwin's langid.py, a naive Bayes model over byte n-grams of 97+
languages, shipped in the package and read without pickle) identifies as the expected language,
and the languages of the others. The measure of off-target output (a multilingual model
answering in the wrong language), which counts of function words only approximate.
"""

from __future__ import annotations

from collections import Counter
from importlib import metadata

from nmt.errors import NmtError


def identifier():
    """py3langid's identifier over all its languages; a one-line error naming the extra when missing."""
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError:
        raise NmtError("--langid needs py3langid: pip install 'nmt[langid]'") from None
    return LanguageIdentifier.from_model_file(MODEL_FILE)


def language_shares(lines: list[str], expected: str, top: int = 5) -> dict:
    """The share of non-empty `lines` identified as `expected` (an ISO 639-1 code py3langid
    knows), and the `top` most frequent languages found with their shares."""
    ident = identifier()
    if expected not in ident.labels:
        raise NmtError(f"--langid {expected}: not a language the identifier knows "
                       f"(ISO 639-1 codes such as {', '.join(ident.labels[:6])}, ...)")
    found = Counter(ident.classify(line)[0] for line in lines if line.strip())
    total = sum(found.values())
    return {"name": "langid", "expected": expected, "lines": total,
            "share": round(found[expected] / total, 4) if total else 0.0,
            "languages": {lang: round(n / total, 4) for lang, n in found.most_common(top)},
            "identifier": f"py3langid {metadata.version('py3langid')}"}


def describe(result: dict) -> str:
    others = ", ".join(f"{lang} {share:.1%}" for lang, share in result["languages"].items() if lang != result["expected"])
    return (f"langid {result['expected']}: {result['share']:.1%} of {result['lines']:,} non-empty lines"
            f"{f' (others: {others})' if others else ''}  ({result['identifier']})")
