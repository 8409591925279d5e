"""A system score that is the mean of segment scores computed beforehand (COMET's, CometKiwi's),
in the shape sacrebleu's paired tests read a metric in: so that bootstrap resampling and
approximate randomization run on it exactly as they run on BLEU (the same resamples, seeds and
p-values), each resample's score being the mean of its segments' scores."""

from __future__ import annotations

from collections.abc import Sequence

from sacrebleu.metrics.base import Score


class SegmentMeanSignature:
    """What sacrebleu's signature offers a paired test: fields to add, and its text."""

    def __init__(self, fields: dict):
        self.fields = dict(fields)

    def update(self, key: str, value) -> None:
        self.fields[key] = value

    def __str__(self) -> str:
        return "|".join(f"{key}:{value}" for key, value in self.fields.items())


class SegmentMean:
    """`segments[system text]` holds each system's segment scores (looked up by its lines)."""

    def __init__(self, name: str, segments: dict[tuple[str, ...], list[float]], signature: dict):
        self.name, self.segments, self.signature = name, segments, signature

    def _extract_corpus_statistics(self, hypotheses: Sequence[str], references=None) -> list[list[float]]:
        return [[score, 1.0] for score in self.segments[tuple(hypotheses)]]

    def _compute_score_from_stats(self, stats) -> Score:
        total, count = float(stats[0]), float(stats[1])
        return Score(self.name, total / count if count else 0.0)

    def _aggregate_and_compute(self, stats: list[list[float]]) -> Score:
        return self._compute_score_from_stats([sum(s[0] for s in stats), sum(s[1] for s in stats)])

    def get_signature(self) -> SegmentMeanSignature:
        return SegmentMeanSignature(self.signature)
