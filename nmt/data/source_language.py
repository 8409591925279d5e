"""A multilingual model's source language, line by line (`nmt translate --src-lang auto`, a jsonl
line's or a server request's "src_lang": "auto"): py3langid (nmt[langid]) finds the most probable
of the languages the model translates from into the line's target. A model whose source sentence
starts with the source's language token (data.language_token both: NLLB-200, M2M-100) reads each
line with its own token; for any model, the line's direction is then checked as a named one is.
"""

from __future__ import annotations

import re

from nmt.config import DataConfig
from nmt.data.language_filter import identifier, identifier_label
from nmt.data.languages import listed, listed_sources
from nmt.errors import NmtError

AUTO = "auto"  # --src-lang auto
_TAG = re.compile(r"<[^<>]*>")  # inline markup, left out of what the identifier reads
# A line the identifier finds at least this probably in a language none of the model's: said (once a language)
OTHER_LANGUAGE = 0.5  # more probable than all the others together, as data.language_filter reads 0.5


def readers(data: DataConfig, target: str, zero_shot: bool = False) -> list[str]:
    """The source languages the model translates into `target` as trained directions (every
    source language it has, with `zero_shot`), in the model's order."""
    directions = set(data.directions())
    imported = listed_sources(data) if target in data.languages else []
    return [s for s in data.source_languages() if zero_shot or (s, target) in directions or s in imported]


class SourceGuess:
    """Each text's source language among `readers(data, target, zero_shot)`. One reader needs no
    identifier; several need py3langid (a one-line error naming the extra where it is missing).
    Readers the identifier does not know are never chosen, and where it names several readers by
    one language (zho_Hans, zho_Hant), the first is chosen: `notes` says so, once per target."""

    who = "the model"  # what translates from the readers, as errors name it

    def __init__(self, data: DataConfig, zero_shot: bool = False):
        self.data, self.zero_shot = data, zero_shot
        self._labels: dict[str, dict[str, str]] = {}  # target -> {identifier label: the reader it chooses}
        self.notes: list[str] = []

    def sources(self, target: str) -> list[str]:
        """The languages a text into `target` may be read as, in order of preference."""
        return readers(self.data, target, self.zero_shot)

    def by_label(self, target: str) -> dict[str, str]:
        """{the identifier's label: the reader it stands for} of `target`'s readers ({"": the
        reader} where there is one); a one-line error where there is none, or no identifier."""
        if target in self._labels:
            return self._labels[target]
        sources = self.sources(target)
        if not sources:
            raise NmtError(f"--src-lang {AUTO}: {self.who} translates into {target} from no language")
        if len(sources) == 1:
            self._labels[target] = {"": sources[0]}
            return self._labels[target]
        ident = identifier(f"--src-lang {AUTO} (with several source languages: {listed(sources)})", probabilities=True)
        by_label: dict[str, str] = {}
        unknown, shared = [], []
        for source in sources:
            label = identifier_label(ident, source)
            if label is None:
                unknown.append(source)
            elif label in by_label:
                shared.append(f"{source} (read as {by_label[label]})")
            else:
                by_label[label] = source
        if not by_label:
            raise NmtError(f"--src-lang {AUTO}: the language identifier knows none of the source languages "
                           f"{self.who} translates into {target} from ({listed(sources)}); name the source with --src-lang")
        if unknown:
            self.notes.append(f"--src-lang {AUTO}: the identifier does not know {listed(unknown)}: no line into "
                              f"{target} is read as in them")
        if shared:
            self.notes.append(f"--src-lang {AUTO}: the identifier takes these for another reader's language: "
                              f"{listed(shared)}")
        self._labels[target] = by_label
        return by_label

    def language(self, text: str, target: str) -> str:
        """The reader of `target` most probable for `text` (`identify`'s first part)."""
        return self.identify(text, target)[0]

    def identify(self, text: str, target: str) -> tuple[str, tuple[str, float] | None]:
        """The reader of `target` most probable for `text` (its inline tags left out), and the
        identifier's own first choice with its probability where that is none of the readers'
        languages and at least OTHER_LANGUAGE (a line in a language the model does not read), else
        None. A text without letters is read as the recipe's source language where it reads into
        `target`, else as the first reader."""
        by_label = self.by_label(target)
        if "" in by_label:
            return by_label[""], None
        words = _TAG.sub(" ", text)
        if not any(ch.isalpha() for ch in words):
            return (self.data.src_lang if self.data.src_lang in by_label.values() else next(iter(by_label.values()))), None
        ident = identifier(f"--src-lang {AUTO}", probabilities=True)
        ranked = ident.rank(words)
        top, probability = ranked[0]
        other = (top, float(probability)) if top not in by_label and probability >= OTHER_LANGUAGE else None
        return next(by_label[label] for label, _ in ranked if label in by_label), other
