"""A glossary (`nmt translate --glossary FILE`, decode.glossary): the terms a translation must use.

The file is tab-separated text, a term a line: the source term, a tab, its translation
("invoice<TAB>Rechnung"); empty lines are skipped. A `.csv` file is comma-separated likewise (as
DeepL's glossaries are), and a `.tbx` file is TermBase eXchange, the terminology tools' format:
each entry's terms in the model's source language, to its first term in the target language.

Each sentence that holds a source term (as whole words, in any case: "Invoice" and "INVOICE" too;
in Chinese, Japanese and other scripts without spaces, anywhere) and whose translation lacks one
of its terms' translations is translated
again by the constrained search, with the translations of its terms as its constraints
(nmt.decode.constraints), at most MOST_TERMS a sentence, the longest terms first where two
overlap ("credit card" before "card"). A translation that has them already (as words, as a
compound's head or with an ending: Glossary.holds) is kept: the constrained search would often
choose other words around them. A sentence without one is translated as
ever; so is a line that brings constraints of its own (a jsonl request's). The constrained
search is nmt's own (the torch engine's and an ONNX export's): CTranslate2 cannot take a glossary.
A multilingual model's lines in other directions (--src-lang auto, a jsonl line's or a served
request's tgt_lang) use a TBX file's terms in their languages; a TSV or CSV file names no
languages, and serves the run's direction alone.
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


def _words(term: str) -> str:
    """A term as a regular expression of its words, its spaces any run of spaces."""
    return r"\s+".join(re.escape(word) for word in term.split())


def _word_edge(char: str) -> bool:
    """Whether a term's first or last character stands at a word's edge: a letter or digit of a
    script written with spaces."""
    return char.isalnum() and not written_without_spaces(char)


def _term_pattern(term: str) -> str:
    """A term as found in a source: its words, bounded by word edges (`_word_edge`)."""
    return (r"(?<!\w)" if _word_edge(term[0]) else "") + _words(term) + (r"(?!\w)" if _word_edge(term[-1]) else "")


def _output_pattern(term: str) -> str:
    """A term's translation as held in an output (Glossary.holds)."""
    return _words(term) + (r"\w{0,2}(?!\w)" if _word_edge(term[-1]) else "")


def read_glossary(path: Path, src_lang: str | None = None, tgt_lang: str | None = None) -> Glossary:
    """A glossary file read: tab-separated (any name but these), comma-separated (`.csv`, as
    DeepL's glossaries are) or TermBase eXchange (`.tbx`, its entries' terms in `src_lang` and
    `tgt_lang`). A line without a term and its translation, or a term given twice in a file of
    lines, is an error naming the file and line."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise NmtError(f"{path}: glossary not found (--glossary, decode.glossary)") from None
    except OSError as e:
        raise NmtError(f"{path}: cannot read the glossary: {e.strerror or e}") from None
    if path.suffix.lower() == ".tbx":
        targets = _tbx_terms(data, path, src_lang, tgt_lang)
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise NmtError(f"{path}: invalid UTF-8 at byte {e.start}") from None
        targets = _listed_terms(text, path, csv=path.suffix.lower() == ".csv")
    if not targets:
        raise NmtError(f"{path}: empty glossary (no terms)")
    terms = sorted(targets, key=len, reverse=True)
    return Glossary(targets, re.compile("|".join(_term_pattern(term) for term in terms), re.IGNORECASE))


def _listed_terms(text: str, path: Path, csv: bool) -> dict[str, str]:
    """Terms a line: term, tab (or comma) and translation."""
    import csv as csv_module

    rows = csv_module.reader(text.splitlines()) if csv else (line.split("\t") for line in text.splitlines())
    separator = "a comma" if csv else "a tab"
    targets: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, row in enumerate(rows, start=1):
        columns = [column.strip() for column in row]
        if not any(columns):
            continue
        if len(columns) != 2 or not all(columns):
            raise NmtError(f"{path}:{number}: expected a term, {separator} and its translation")
        source = " ".join(columns[0].split()).casefold()
        if source in targets:
            raise NmtError(f"{path}:{number}: {columns[0]!r} is given twice (line {lines[source]} first)")
        targets[source], lines[source] = columns[1], number
    return targets


def _tbx_terms(data: bytes, path: Path, src_lang: str | None, tgt_lang: str | None) -> dict[str, str]:
    """A TermBase eXchange file's terms (TBX 2008's termEntry/langSet, TBX v3's
    conceptEntry/langSec): each term of an entry in the source language, to the entry's first
    term in the target language; a term in two entries keeps the first's."""
    import xml.etree.ElementTree as ElementTree

    from nmt.data.languages import language_match
    from nmt.data.tmx import XML_LANG, local_name, not_well_formed

    if not src_lang or not tgt_lang:
        raise NmtError(f"{path}: a TBX glossary needs the model's languages (its recipe's data.src_lang and tgt_lang)")
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as e:
        raise not_well_formed(path, e) from None
    if local_name(root.tag).lower() not in ("tbx", "martif"):
        raise NmtError(f"{path}: not a TBX file (its root element is <{local_name(root.tag)}>)")
    targets: dict[str, str] = {}
    found: set[str] = set()
    for entry in (e for e in root.iter() if local_name(e.tag) in ("termEntry", "conceptEntry")):
        terms: dict[str, list[str]] = {}
        for language_set in (e for e in entry if local_name(e.tag) in ("langSet", "langSec")):
            language = language_set.get(XML_LANG) or language_set.get("lang") or ""
            words = [" ".join("".join(term.itertext()).split()) for term in language_set.iter()
                     if local_name(term.tag) == "term"]
            terms.setdefault(language, []).extend(w for w in words if w)
            found.add(language)
        sources = [t for language, ts in terms.items() if language_match(src_lang, language) for t in ts]
        translations = [t for language, ts in sorted(terms.items(), key=lambda item: -language_match(tgt_lang, item[0]))
                        if language_match(tgt_lang, language) for t in ts]
        for source in sources if translations else ():
            targets.setdefault(source.casefold(), translations[0])
    if not targets:
        raise NmtError(f"{path}: no entry has terms in both {src_lang} and {tgt_lang} "
                       f"(the languages found: {', '.join(sorted(found)) or 'none'})")
    return targets


@functools.lru_cache(maxsize=64)  # (a glossary's directions, for a multilingual model)
def _cached(path: str, size: int, mtime_ns: int, src_lang: str | None, tgt_lang: str | None) -> Glossary:
    return read_glossary(Path(path), src_lang, tgt_lang)


def glossary_of(translator, cfg, languages: tuple[str, str] | None = None) -> Glossary | None:
    """The decode settings' glossary for a direction (`languages`, a line's own; None: the run's),
    read once while its file is unchanged; None without one. A file of lines (TSV, CSV) names no
    languages: it is the run's direction's alone. An engine without the constrained search is an
    error."""
    if not cfg.glossary:
        return None
    from nmt.decode.engines.capabilities import refusal

    if message := refusal(translator, "constraints"):
        raise NmtError(f"decode.glossary: {message}")
    if cfg.sampling or (cfg.mbr.candidates and cfg.mbr.source == "sampling"):
        raise NmtError("decode.glossary needs beam search: its terms are constraints, which sampling cannot "
                       "place (decode.sampling, decode.mbr.source)")
    from nmt.decode.rows import direction

    path, run = Path(cfg.glossary), direction(translator, None)
    src_lang, tgt_lang = languages or run
    if (src_lang, tgt_lang) != run and path.suffix.lower() != ".tbx":
        return None
    try:
        stat = path.stat()
    except OSError:
        return read_glossary(path, src_lang, tgt_lang)  # (its error names the file)
    try:
        return _cached(str(path), stat.st_size, stat.st_mtime_ns, src_lang, tgt_lang)
    except NmtError:
        if translator.recipe.data.language_token == "none":  # one direction: the file is wrong for it
            raise
        return None  # a multilingual model's direction that the file has no terms for
