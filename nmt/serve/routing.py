"""A request of several languages, split between the models that translate them (nmt serve with
several models): each line goes to the model of its direction, src_lang auto first identifying
each line's source among the languages any model translates into its target, and the answers
come back in the request's order. With one model the request is its only part, unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from nmt.data.source_language import AUTO
from nmt.decode.request import RequestRefused
from nmt.errors import NmtError
from nmt.serve.models import Served, ServedModels, ServedSourceGuess


@dataclass
class Part:
    served: Served
    lines: list[int]  # the request's lines it holds (indices, in order)
    body: object  # its own request (nmt.serve.app.TranslateRequest) of those lines

    @property
    def numbers(self) -> list[int]:
        """Its lines as errors name them (1 for the request's first)."""
        return [i + 1 for i in self.lines]


def per_line(value: str | list[str] | None, n: int, name: str) -> list[str | None]:
    """A request's field given once or once per line, as one value per line; RequestRefused where
    a list does not have one entry per line."""
    if isinstance(value, list):
        if len(value) != n:
            raise RequestRefused(f"{name}: {len(value)} entries for {n} lines (one, or one per line)")
        return list(value)
    return [value] * n


def split_request(body, models: ServedModels) -> tuple[list[Part], list[str] | None]:
    """The request's parts, one per model that translates some of its lines, and each line's
    source language where src_lang auto identified it across models (else None)."""
    n = len(body.text)
    if len(models.models) == 1 or n == 0:
        return [Part(models.first, list(range(n)), body)], None
    targets = per_line(body.tgt_lang, n, "tgt_lang")
    identified = None
    if body.src_lang == AUTO:
        targets = [target or models.first.data.tgt_lang for target in targets]  # as a request without: the first's
        guess = ServedSourceGuess(models, body.zero_shot)
        identified = []
        for number, (text, target) in enumerate(zip(body.text, targets), start=1):
            try:
                identified.append(guess.language(text, target))
            except NmtError as e:
                raise RequestRefused(f"line {number}: " + str(e).replace("--src-lang", "src_lang")) from None
        sources = identified
    else:
        sources = per_line(body.src_lang, n, "src_lang")
    by_model = models.for_lines(sources, targets, body.zero_shot)
    if len(by_model) == 1 and identified is None:
        served = models.models[next(iter(by_model))]
        return [Part(served, list(range(n)), body)], None
    parts = []
    for index, lines in by_model.items():
        changes = {"text": [body.text[i] for i in lines]}
        for name in ("prefix", "constraints"):
            if getattr(body, name) is not None:
                changes[name] = [getattr(body, name)[i] for i in lines]
        if identified is not None or isinstance(body.src_lang, list):
            changes["src_lang"] = [sources[i] for i in lines]
        if identified is not None or isinstance(body.tgt_lang, list):
            changes["tgt_lang"] = [targets[i] for i in lines]
        parts.append(Part(models.models[index], lines, body.model_copy(update=changes)))
    return parts, identified


def in_request_order(parts: list[Part], answers: list[list]) -> list:
    """Each part's answers (one per line, in the part's order) as one list in the request's."""
    merged: list = [None] * sum(len(part.lines) for part in parts)
    for part, answer in zip(parts, answers):
        for i, line in zip(part.lines, answer):
            merged[i] = line
    return merged
