"""The engine interface: what every translation engine offers (nmt's own torch engine,
nmt.decode.engines.torch_engine, which also decodes ensembles; CTranslate2 from its export,
nmt.decode.engines.ctranslate2_engine; onnxruntime from an ONNX export,
nmt.decode.engines.onnx_engine), what each can do (nmt.decode.engines.capabilities), and loading one."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import torch

from nmt.checkpoint import open_checkpoint
from nmt.config import DecodeConfig, Recipe
from nmt.data.languages import Controls, direction_controls
from nmt.data.source_language import AUTO, SourceGuess, readers
from nmt.decode.engines.capabilities import Capabilities
from nmt.decode.search import Hypothesis
from nmt.devices import resolve_device, use_threads
from nmt.errors import NmtError
from nmt.export import not_translatable
from nmt.export.ctranslate2 import is_export_dir
from nmt.export.onnx import is_onnx_export
from nmt.host_memory import keep_freed_memory

# CTranslate2's compute types (its quantization docs); which of them a device has, it says when loading
COMPUTE_TYPES = ("default", "auto", "float32", "float16", "bfloat16", "int16",
                 "int8", "int8_float32", "int8_float16", "int8_bfloat16")


class Engine(Protocol):
    recipe: Recipe
    src_tokenizer: object
    tgt_tokenizer: object
    controls: Controls  # the direction's tokens: before each source, forced first in each output
    zero_shot: bool  # whether directions the model was not trained on are allowed (choose_direction)
    source_guess: SourceGuess | None  # --src-lang auto: each line's source language (choose_direction)
    capabilities: Capabilities

    @property
    def max_positions(self) -> int: ...

    def translate_batch(self, sources: list[list[int]], cfg: DecodeConfig, prefixes: list[list[int]] | None = None,
                        constraints: list[list[list[int]]] | None = None) -> list[list[Hypothesis]]: ...

    def score_batch(self, sources: list[list[int]], targets: list[list[int]],
                    precision: str = "auto") -> list[list[float]]: ...

    def alignment_attention(self, sources: list[list[int]], outputs: list[list[int]]) -> torch.Tensor:
        """Where capabilities.alignments: the teacher-forced attention (B, T, S) that word
        alignments are read from (nmt.decode.text.alignment.align_batch)."""
        ...


def load_engine(checkpoints: list[Path], device: str = "cpu", engine: str = "torch",
                compute_type: str = "default", threads: int = 0, ensemble: bool = False,
                src_lang: str | None = None, tgt_lang: str | None = None, zero_shot: bool = False,
                parallel_calls: int = 1) -> Engine:
    """One checkpoint, several averaged on the fly (or, with `ensemble`, decoding together);
    or a CTranslate2 or ONNX export directory, on `threads` CPU threads (0: torch's default). It
    translates from src_lang into tgt_lang (default: the recipe's data.src_lang, data.tgt_lang)
    until `choose_direction` says otherwise.

    engine "ctranslate2" with checkpoints converts them (averaged first) into a temporary export.
    `parallel_calls`: how many threads may translate with it at once (a server's workers); the
    torch engine takes any number, CTranslate2 runs that many batches side by side.
    """
    use_threads(threads)
    loaded = _load(checkpoints, device, engine, compute_type, threads, ensemble, parallel_calls)
    choose_direction(loaded, src_lang, tgt_lang, zero_shot)
    return loaded


def _load(checkpoints: list[Path], device: str, engine: str, compute_type: str, threads: int, ensemble: bool,
          parallel_calls: int) -> Engine:
    from nmt.decode.engines import ctranslate2_engine, onnx_engine, torch_engine

    if engine not in ("torch", "ctranslate2"):
        raise NmtError(f"--engine {engine}: choose torch or ctranslate2")
    if onnx := [c for c in checkpoints if is_onnx_export(c)]:
        if len(checkpoints) > 1 or ensemble:
            raise NmtError(f"{onnx[0]}: an exported model is translated on its own (one -c)")
        if engine == "ctranslate2":
            raise NmtError(f"{onnx[0]}: an ONNX export runs on onnxruntime; --engine ctranslate2 takes a "
                           "checkpoint or a CTranslate2 export")
        keep_freed_memory()  # each step's outputs (log-probabilities, the past) are new arrays of the same sizes
        return onnx_engine.load(onnx[0], device, compute_type, threads, parallel_calls)
    exports = [c for c in checkpoints if is_export_dir(c)]
    _check_compute_type(compute_type, engine, bool(exports))
    if exports or engine == "ctranslate2":  # before a checkpoint is converted for it
        ctranslate2_engine.check_runs_here(device, compute_type)
    if exports:
        if len(checkpoints) > 1:
            raise NmtError(f"{exports[0]}: an exported model is translated on its own (one -c)")
        return ctranslate2_engine.load(exports[0], device, compute_type, threads, parallel_calls)
    for path in checkpoints:
        if Path(path).is_dir():
            raise NmtError(not_translatable(Path(path)))
    if ensemble and engine == "ctranslate2":
        raise NmtError("--ensemble runs on the torch engine only")
    if engine == "ctranslate2":
        return ctranslate2_engine.load_from_checkpoints(checkpoints, device, compute_type, threads, parallel_calls)
    keep_freed_memory()  # each search step frees and re-allocates the same large blocks (logits)
    target = resolve_device(device)  # CTranslate2 (above) has devices of its own: a CPU torch may drive a CUDA build
    if ensemble:
        return torch_engine.load_ensemble(checkpoints, target)
    return torch_engine.load(open_checkpoint(checkpoints), target)


def _check_compute_type(compute_type: str, engine: str, exported: bool) -> None:
    if compute_type not in COMPUTE_TYPES:
        raise NmtError(f"--compute-type {compute_type}: choose one of {', '.join(COMPUTE_TYPES)}")
    if compute_type != "default" and engine == "torch" and not exported:
        raise NmtError(f"--compute-type {compute_type} is CTranslate2's (add --engine ctranslate2); "
                       "the torch engine's precision is --set decode.precision=fp32|bf16|fp16")


def choose_direction(translator, src_lang: str | None = None, tgt_lang: str | None = None,
                     zero_shot: bool = False) -> str:
    """Translate from src_lang into tgt_lang (default: the recipe's data.src_lang, data.tgt_lang):
    sets its language tokens (`Controls`); returns the direction, e.g. "en-fr". src_lang "auto":
    each line's source is identified (`translator.source_guess`, nmt.data.source_language); until
    then the recipe's source language, or the first the model translates into tgt_lang from."""
    data = translator.recipe.data
    translator.source_guess = None
    if src_lang == AUTO:
        target = tgt_lang or data.tgt_lang
        translator.source_guess = SourceGuess(data, zero_shot)
        translator.source_guess.by_label(target)  # a missing identifier is an error now, not at each line
        sources = readers(data, target, zero_shot)
        src_lang = data.src_lang if data.src_lang in sources else sources[0]
    direction, translator.controls = direction_controls(translator.src_tokenizer, translator.tgt_tokenizer,
                                                        data, src_lang, tgt_lang, zero_shot)
    translator.zero_shot = zero_shot  # for a jsonl line that names its own target (nmt.decode.request.line_controls)
    translator.target_chosen = tgt_lang is not None  # (else a document may name its own: request.document_target)
    return direction
