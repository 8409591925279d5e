"""Language identification: py3langid (Lui and Baldwin's langid.py, a naive Bayes model over
byte n-grams of 97 languages, shipped in its package and read without pickle; `pip install
'nmt[langid]'`). `nmt prepare` drops the training pairs a side of which is in another language
than its corpus's (data.language_filter): crawled corpora hold untranslated copies and text in
third languages, which teach a model to answer in the wrong language.

The identifier walks each text's bytes in Python, about 5,000 short pairs a second on one core: a
large corpus is split into consecutive shares classified by worker processes (started with
"spawn", each loading the identifier once), and their verdicts joined in order, so the pairs
kept are the same on any number of processes."""

from __future__ import annotations

import functools
import multiprocessing
import signal

from nmt.data.languages import two_letter
from nmt.errors import NmtError

# Below this many pairs per process, a share would not pay for its transfer: classified in this process.
PAIRS_PER_PROCESS = 2_000


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
    together). `processes` > 1: `reasons` spreads large lists of pairs over that many worker
    processes, started at the first such list and stopped by `close`."""

    KEY = "data.language_filter"

    def __init__(self, threshold: float, processes: int = 1):
        self.threshold, self.processes = threshold, processes
        self.ident = identifier(self.KEY, probabilities=True)
        self._pool = None

    def close(self) -> None:
        """Stops the worker processes (idle between calls, or still classifying where `reasons`
        was interrupted)."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

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

    def reasons(self, pairs: list[tuple[str, str]], labels: tuple[str, str]) -> list[str | None]:
        """`reason` of each pair, in order: on up to `processes` processes, each given at least
        PAIRS_PER_PROCESS consecutive pairs."""
        processes = min(self.processes, len(pairs) // PAIRS_PER_PROCESS)
        if processes <= 1:
            return [self.reason(src, tgt, labels) for src, tgt in pairs]
        if self._pool is None:
            context = multiprocessing.get_context("spawn")  # a fork would copy the parent's threads and locks
            self._pool = context.Pool(self.processes, initializer=_start_worker, initargs=(self.threshold,))
        size = -(-len(pairs) // processes)
        shares = [(pairs[i:i + size], labels) for i in range(0, len(pairs), size)]
        return [reason for share in self._pool.starmap(_share_reasons, shares) for reason in share]


_worker_filter: LanguageFilter | None = None  # each worker process's filter, made once by _start_worker


def _start_worker(threshold: float) -> None:
    global _worker_filter
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle: it stops the workers
    _worker_filter = LanguageFilter(threshold)


def _share_reasons(pairs: list[tuple[str, str]], labels: tuple[str, str]) -> list[str | None]:
    return [_worker_filter.reason(src, tgt, labels) for src, tgt in pairs]
