"""A glossary (`nmt translate --glossary FILE`, decode.glossary): the terms a translation must use.

The file is tab-separated text, a term a line: the source term, a tab, its translation
("invoice<TAB>Rechnung"); empty lines are skipped. Each sentence that holds a source term (as
whole words, in any case: "Invoice" and "INVOICE" too; in Chinese, Japanese and other scripts
without spaces, anywhere) and whose translation lacks one of its terms' translations is translated
again by the constrained search, with the translations of its terms as its constraints
(nmt.decode.constraints), at most MOST_TERMS a sentence, the longest terms first where two
overlap ("credit card" before "card"). A translation that has them already (as words, as a
compound's head or with an ending: Glossary.holds) is kept: the constrained search would often
choose other words around them. A sentence without one is translated as
ever; so is a line that brings constraints of its own (a jsonl request's). The constrained
search is nmt's own (the torch engine's and an ONNX export's): CTranslate2 cannot take a glossary.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from nmt.data.words import written_without_spaces
from nmt.errors import NmtError

MOST_TERMS = 8  # constraints per sentence: the search's cost grows with each (docs/decoding.md)


@dataclass(frozen=True)
class Glossary:
    targets: dict[str, str]  # each source term, case-folded, to its translation
    pattern: re.Pattern  # any source term, longest first

    def constraints(self, sentence: str) -> tuple[str, ...]:
        """The translations of the terms `sentence` holds, in the order they occur (each once)."""
        found = (self.targets.get(" ".join(match.group(0).split()).casefold()) for match in self.pattern.finditer(sentence))
        return tuple(dict.fromkeys(target for target in found if target))[:MOST_TERMS]

    def holds(self, output: str, targets: tuple[str, ...]) -> bool:
        """Whether an output holds every one of `targets`, in any case, as a word, at a word's end
        (the head of a compound: "Tisch" in "Picknicktisch") or with an ending of up to two
        letters ("Hund" in "Hunden"); forced as a word instead, a term would break them up."""
        return all(re.search(_output_pattern(target), output, re.IGNORECASE) for target in targets)


def _term_pattern(term: str) -> str:
    """A term as a regular expression: its spaces any run of spaces, and bounded by word edges
    where it begins or ends in a letter or digit of a script written with spaces."""
    body = r"\s+".join(re.escape(word) for word in term.split())
    before = r"(?<!\w)" if term[0].isalnum() and not written_without_spaces(term[0]) else ""
    after = r"(?!\w)" if term[-1].isalnum() and not written_without_spaces(term[-1]) else ""
    return before + body + after


def _output_pattern(term: str) -> str:
    body = r"\s+".join(re.escape(word) for word in term.split())
    return body + (r"\w{0,2}(?!\w)" if term[-1].isalnum() and not written_without_spaces(term[-1]) else "")


def read_glossary(path: Path) -> Glossary:
    """A glossary file read; a line without a term and its translation, or a term given twice,
    is an error naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise NmtError(f"{path}: glossary not found (--glossary, decode.glossary)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise NmtError(f"{path}: cannot read the glossary: {getattr(e, 'strerror', None) or e}") from None
    targets: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        columns = [column.strip() for column in line.split("\t")]
        if len(columns) != 2 or not all(columns):
            raise NmtError(f"{path}:{number}: expected a term, a tab and its translation")
        source = " ".join(columns[0].split()).casefold()
        if source in targets:
            raise NmtError(f"{path}:{number}: {columns[0]!r} is given twice (line {lines[source]} first)")
        targets[source], lines[source] = columns[1], number
    if not targets:
        raise NmtError(f"{path}: empty glossary (no terms)")
    terms = sorted(targets, key=len, reverse=True)
    return Glossary(targets, re.compile("|".join(_term_pattern(term) for term in terms), re.IGNORECASE))


@functools.lru_cache(maxsize=4)
def _cached(path: str, size: int, mtime_ns: int) -> Glossary:
    return read_glossary(Path(path))


def glossary_of(translator, cfg) -> Glossary | None:
    """The decode settings' glossary (read once while its file is unchanged), None without one;
    an engine without the constrained search is an error."""
    if not cfg.glossary:
        return None
    from nmt.decode.engines.capabilities import refusal

    if message := refusal(translator, "constraints"):
        raise NmtError(f"decode.glossary: {message}")
    if cfg.sampling or (cfg.mbr.candidates and cfg.mbr.source == "sampling"):
        raise NmtError("decode.glossary needs beam search: its terms are constraints, which sampling cannot "
                       "place (decode.sampling, decode.mbr.source)")
    path = Path(cfg.glossary)
    try:
        stat = path.stat()
    except OSError:
        return read_glossary(path)  # (its error names the file)
    return _cached(str(path), stat.st_size, stat.st_mtime_ns)
