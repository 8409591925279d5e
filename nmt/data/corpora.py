"""A recipe's split, whatever its storage. A split is one of:

- a path stem: `{stem}.{src_lang}` and `{stem}.{tgt_lang}`, each plain or compressed (`.gz`, `.xz`, `.bz2`);
- a TSV file (`*.tsv`, or compressed likewise): source in the first column, target in the second;
- a CSV file (`*.csv`, or compressed likewise): the columns its first row names for the two
  languages (nmt.data.csv_corpus);
- a translation memory (`*.tmx`, or compressed likewise): its units in the two languages (nmt.data.tmx);
- a Hugging Face dataset: `hf:NAME[:CONFIG]:SPLIT` (e.g. `hf:wmt14:de-en:train`, loaded with
  `datasets.load_dataset`), or `hf:FOLDER:SPLIT` for one written by `save_to_disk`. Rows hold
  a `translation` mapping {lang: text}, or one column per language.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from nmt.config import DataConfig
from nmt.data.corpus import COMPRESSED, ONE_FILE_CORPORA, Corpus, HuggingFace, TextPair, Tsv
from nmt.data.csv_corpus import Csv
from nmt.data.escapes import unescaped
from nmt.data.tmx import Tmx
from nmt.errors import NmtError


def corpus_kind(spec: str) -> str:
    """What a split is stored as: "hf", "tsv", "csv", "tmx" or "stem" (compressed or not)."""
    if spec.startswith("hf:"):
        return "hf"
    name = Path(spec.lower())
    suffix = (name.with_suffix("") if name.suffix in COMPRESSED else name).suffix
    return suffix[1:] if suffix in ONE_FILE_CORPORA else "stem"


def open_corpus(spec: str, src_lang: str, tgt_lang: str) -> Corpus:
    kind = corpus_kind(spec)
    if kind == "hf":
        return HuggingFace(spec, src_lang, tgt_lang)
    if kind == "tsv":
        return Tsv(spec)
    if kind == "csv":
        return Csv(spec, src_lang, tgt_lang)
    if kind == "tmx":
        return Tmx(spec, src_lang, tgt_lang)
    return TextPair(spec, src_lang, tgt_lang)


class Unescaped(Corpus):
    """A corpus whose escaped lines ("stone &amp; tile", "it &apos;s") are read as the text they
    stand for (nmt.data.escapes), as translation reads such input. `unescaped_lines`: how many
    lines the latest pass over it changed."""

    def __init__(self, corpus: Corpus):
        self.corpus = corpus
        self.unescaped_lines = 0

    def pairs(self) -> Iterator[tuple[str, str]]:
        self.unescaped_lines = 0
        for source, target in self.corpus.pairs():
            pair = unescaped(source), unescaped(target)
            self.unescaped_lines += (pair[0] != source) + (pair[1] != target)
            yield pair

    def fingerprint(self) -> dict:
        return self.corpus.fingerprint()

    def count_pairs(self) -> int:
        return self.corpus.count_pairs()

    def __getattr__(self, name: str):  # what a kind of corpus tells besides (a TMX's units left out)
        if name == "corpus":  # (not set yet: a copy being made)
            raise AttributeError(name)
        return getattr(self.corpus, name)

    def __str__(self) -> str:
        return str(self.corpus)


def recipe_corpus(data: DataConfig, spec: str, src_lang: str, tgt_lang: str) -> Corpus:
    """A split a recipe names, read as its data settings say: escaped lines unescaped (data.unescape)."""
    corpus = open_corpus(spec, src_lang, tgt_lang)
    return Unescaped(corpus) if data.unescape else corpus


def pairs_opener(corpus: str | None, source: Path | None, target: Path | None,
                 doing: str) -> Callable[[tuple[str, str]], Corpus]:
    """What opens the pairs a command reads (`doing` them: filter, score) once its model's
    languages are known: those `--corpus` names (a split as a recipe names one), or those of
    `--source` and `--target`. One way or the other, else a one-line error now, before any model
    loads."""
    if corpus is not None and (source is not None or target is not None):
        raise NmtError("give --corpus, or --source and --target, not both")
    if corpus is None and (source is None or target is None):
        raise NmtError(f"name the pairs to {doing}: --source and --target, or --corpus")
    if corpus is not None:
        return lambda languages: open_corpus(corpus, *languages)
    return lambda languages: TextPair.of_files(source, target)
