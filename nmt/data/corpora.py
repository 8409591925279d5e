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

from collections.abc import Callable
from pathlib import Path

from nmt.data.corpus import COMPRESSED, ONE_FILE_CORPORA, Corpus, HuggingFace, TextPair, Tsv
from nmt.data.csv_corpus import Csv
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
