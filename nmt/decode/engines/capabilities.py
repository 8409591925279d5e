"""What each translation engine can do (nmt's own torch engine, which also decodes ensembles,
CTranslate2 and onnxruntime from an export), and the one message every caller (CLI, jsonl, serve) gives where an
engine cannot: callers ask an engine's `capabilities`, never its type or attributes."""

from __future__ import annotations

from dataclasses import dataclass

from nmt.errors import NmtError


@dataclass(frozen=True)
class Capabilities:
    name: str  # "torch", "ctranslate2" or "onnx" (what `nmt serve`'s /health reports)
    constraints: bool  # lexical constraints (nmt.decode.constraints)
    alignments: bool  # word alignments from cross-attention (nmt.decode.text.alignment)
    prefixes: bool = True  # forced target prefixes
    token_scores: bool = True  # per-token log-probabilities (score_batch)
    directions: bool = True  # language tokens in front of the source (choose_direction)
    epsilon: bool = True  # epsilon sampling (decode.epsilon)
    # computes on threads of its own (CTranslate2, onnxruntime): torch's work beside it runs on one
    # thread (nmt.devices.torch_on_one_thread)
    own_threads: bool = False


TORCH = Capabilities("torch", constraints=True, alignments=True)
CTRANSLATE2 = Capabilities("ctranslate2", constraints=False, alignments=False, epsilon=False, own_threads=True)
ONNX = Capabilities("onnx", constraints=True, alignments=True, own_threads=True)  # nmt's searches over the export's graphs
# Why an engine without a capability cannot do it, by engine and capability.
_REASONS = {("ctranslate2", "constraints"): "CTranslate2 has no lexical constraints",
            ("ctranslate2", "alignments"): "this CTranslate2 export returns no attention to read them from "
                                           "(export the checkpoint again)",
            ("ctranslate2", "epsilon"): "CTranslate2 has no epsilon sampling (decode.epsilon)",
            ("onnx", "alignments"): "this ONNX export's graphs give no attention (an export of this nmt does)"}


def refusal(engine, capability: str) -> str | None:
    """None where `engine` has `capability`; else the message every caller (CLI, jsonl, serve) gives."""
    if getattr(engine.capabilities, capability):
        return None
    return f"{capability}: {_REASONS[engine.capabilities.name, capability]}; translate with the checkpoint, not an export"


def require(engine, capability: str, line: int | None = None) -> None:
    """Raise NmtError (naming the input line, if given) where `engine` lacks `capability`."""
    message = refusal(engine, capability)
    if message:
        raise NmtError(f"line {line}: {message}" if line is not None else message)
