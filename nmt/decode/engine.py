"""The engine interface: what every translation engine offers (nmt's own torch engine, which also
decodes ensembles, and CTranslate2 from an export) and what each one can do. Callers ask an
engine's `capabilities`, never its type or attributes, and refuse what it cannot do with the one
message `refusal` gives."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from nmt.config import DecodeConfig, Recipe
from nmt.decode.search import Hypothesis
from nmt.errors import NmtError


@dataclass(frozen=True)
class Capabilities:
    name: str  # "torch" or "ctranslate2" (what `nmt serve`'s /health reports)
    constraints: bool  # lexical constraints (nmt.decode.constraints)
    alignments: bool  # word alignments from cross-attention (nmt.decode.alignment)
    prefixes: bool = True  # forced target prefixes
    token_scores: bool = True  # per-token log-probabilities (score_batch)
    directions: bool = True  # language tokens in front of the source (choose_direction)


TORCH = Capabilities("torch", constraints=True, alignments=True)
CTRANSLATE2 = Capabilities("ctranslate2", constraints=False, alignments=False)
# Why an engine without a capability cannot do it, by capability.
_REASONS = {"constraints": "CTranslate2 has no lexical constraints", "alignments": "come from nmt's own engine"}


class Engine(Protocol):
    recipe: Recipe
    src_tokenizer: object
    tgt_tokenizer: object
    control_ids: list[int]  # token ids before each source (a language token)
    capabilities: Capabilities

    @property
    def max_positions(self) -> int: ...

    def translate_batch(self, sources: list[list[int]], cfg: DecodeConfig, prefixes: list[list[int]] | None = None,
                        constraints: list[list[list[int]]] | None = None) -> list[list[Hypothesis]]: ...

    def score_batch(self, sources: list[list[int]], targets: list[list[int]],
                    precision: str = "auto") -> list[list[float]]: ...


def refusal(engine: Engine, capability: str) -> str | None:
    """None where `engine` has `capability`; else the message every caller (CLI, jsonl, serve) gives."""
    if getattr(engine.capabilities, capability):
        return None
    return f"{capability}: {_REASONS[capability]}; translate with the checkpoint, not an export"


def require(engine: Engine, capability: str, line: int | None = None) -> None:
    """Raise NmtError (naming the input line, if given) where `engine` lacks `capability`."""
    message = refusal(engine, capability)
    if message:
        raise NmtError(f"line {line}: {message}" if line is not None else message)
