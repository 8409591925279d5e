"""A recipe's split, whatever its storage. A split is one of:

- a path stem: `{stem}.{src_lang}` and `{stem}.{tgt_lang}`, each plain or `.gz`;
- a TSV file (`*.tsv` or `*.tsv.gz`): source in the first column, target in the second;
- a translation memory (`*.tmx` or `*.tmx.gz`): its units in the two languages (nmt.data.tmx);
- a Hugging Face dataset: `hf:NAME[:CONFIG]:SPLIT` (e.g. `hf:wmt14:de-en:train`, loaded with
  `datasets.load_dataset`), or `hf:FOLDER:SPLIT` for one written by `save_to_disk`. Rows hold
  a `translation` mapping {lang: text}, or one column per language.
"""

from __future__ import annotations

from nmt.data.corpus import Corpus, HuggingFace, TextPair, Tsv
from nmt.data.tmx import Tmx


def open_corpus(spec: str, src_lang: str, tgt_lang: str) -> Corpus:
    if spec.startswith("hf:"):
        return HuggingFace(spec, src_lang, tgt_lang)
    if spec.endswith((".tsv", ".tsv.gz")):
        return Tsv(spec)
    if spec.lower().endswith((".tmx", ".tmx.gz")):
        return Tmx(spec, src_lang, tgt_lang)
    return TextPair(spec, src_lang, tgt_lang)
