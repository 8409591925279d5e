"""Language identification: py3langid (Lui and Baldwin's langid.py, a naive Bayes model over
byte n-grams of 97 languages, shipped in its package and read without pickle; `pip install
'nmt[langid]'`). `nmt prepare` drops the training pairs a side of which is in another language
than its corpus's (data.language_filter): crawled corpora hold untranslated copies and text in
third languages, which teach a model to answer in the wrong language."""

from __future__ import annotations

import functools

from nmt.data.languages import two_letter
from nmt.errors import NmtError


def identifier(needed_by: str, probabilities: bool = False):
    """py3langid's identifier over all its languages (`probabilities`: classify gives the top
    language's probability, else its raw score); a one-line error naming the extra when missing."""
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError:
        raise NmtError(f"{needed_by} needs py3langid: pip install 'nmt[langid]'") from None
    return _loaded(LanguageIdentifier, MODEL_FILE, probabilities)


@functools.cache
def _loaded(identifier_class, model_file, probabilities: bool):
    """Read once per process (about a second): the identifier is not changed by classifying."""
    return identifier_class.from_model_file(model_file, norm_probs=probabilities)


def identifier_label(ident, code: str) -> str | None:
    """The identifier's label for a language code (de for de, deu, deu_Latn), or None where it has none."""
    return code if code in ident.labels else (label if (label := two_letter(code)) in ident.labels else None)


def unknown_language(ident, where: str) -> NmtError:
    """`where`: the setting and the code, e.g. "--langid xx"."""
    return NmtError(f"{where}: not a language the identifier knows (ISO 639-1 codes such as "
                    f"{', '.join(ident.labels[:6])}, ...; or NLLB's, such as deu_Latn)")


class LanguageFilter:
    """A pair's side is in another language where the identifier's most probable language is not
    its own and has a probability above `threshold` (0.5: at least as likely as all the others
    together)."""

    KEY = "data.language_filter"

    def __init__(self, threshold: float):
        self.threshold = threshold
        self.ident = identifier(self.KEY, probabilities=True)

    def labels(self, src_lang: str, tgt_lang: str, corpus: str) -> tuple[str, str]:
        """The identifier's labels for a corpus's languages; a one-line error for one it lacks."""
        labels = tuple(identifier_label(self.ident, code) for code in (src_lang, tgt_lang))
        for code, label in zip((src_lang, tgt_lang), labels):
            if label is None:
                raise unknown_language(self.ident, f"{self.KEY}: {code} (the language of {corpus})")
        return labels

    def _other_language(self, text: str, label: str) -> bool:
        found, probability = self.ident.classify(text)
        return found != label and probability > self.threshold

    def reason(self, src: str, tgt: str, labels: tuple[str, str]) -> str | None:
        """Why the pair goes ("source in another language", "target in another language"), or None."""
        if self._other_language(src, labels[0]):
            return "source in another language"
        if self._other_language(tgt, labels[1]):
            return "target in another language"
        return None
