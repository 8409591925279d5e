"""nmt's own engine: a model (one checkpoint, an average, or an ensemble decoding together) and
the searches of nmt.decode.search run by torch, on a CPU or a GPU; forced-decoding scores."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import torch

from nmt.checkpoint import Checkpoint, open_checkpoint
from nmt.config import DecodeConfig, Recipe
from nmt.data.languages import Controls
from nmt.data.tokenizer import load_processor
from nmt.decode.engines.capabilities import TORCH, Capabilities
from nmt.decode.search import Hypothesis, beam_search, greedy_search
from nmt.decode.text.alignment import model_attention
from nmt.decode.shortlist import Shortlist, read_shortlist
from nmt.errors import NmtError
from nmt.model.compiled_decoding import check_compiler
from nmt.model.guided_alignment import alignment_heads
from nmt.model.precision import attention_kernels, autocast, emulated, inference_precision, tf32
from nmt.model.from_weights import transformer_from_weights
from nmt.model.transformer import Transformer
from nmt.special_tokens import EOS, PAD


@dataclass
class Translator:
    """nmt's own engine (nmt.decode.engines.engine.Engine): one model, an average, or an ensemble."""

    model: Transformer  # or nmt.decode.engines.ensemble.Ensemble, which decodes like one
    recipe: Recipe
    src_tokenizer: object
    tgt_tokenizer: object
    device: torch.device
    controls: Controls = field(default_factory=Controls)  # the direction's tokens (choose_direction)
    capabilities: ClassVar[Capabilities] = TORCH
    shortlists: dict[str, Shortlist] = field(default_factory=dict)  # read once per file (decode.shortlist)

    @property
    def max_positions(self) -> int:  # an Ensemble's cfg gives the smallest of its members'
        return self.model.cfg.max_positions

    def translate_batch(self, sources: list[list[int]], cfg: DecodeConfig, prefixes: list[list[int]] | None = None,
                        constraints: list[list[list[int]]] | None = None) -> list[list[Hypothesis]]:
        return translate_batch(self, sources, cfg, prefixes, constraints)

    def score_batch(self, sources: list[list[int]], targets: list[list[int]], precision: str = "auto") -> list[list[float]]:
        return score_batch(self, sources, targets, precision)

    def alignment_attention(self, sources: list[list[int]], outputs: list[list[int]]) -> torch.Tensor:
        """The attention (B, T, S) word alignments are read from (nmt.decode.text.alignment)."""
        return model_attention(self.model, sources, outputs)


def load(checkpoint: Checkpoint, device: torch.device) -> Translator:
    """The engine of one checkpoint (or of an average's)."""
    model, src_sp, tgt_sp = _model_of(checkpoint)
    return Translator(for_inference(model, device), checkpoint.recipe, src_sp, tgt_sp, device)


def for_inference(model, device: torch.device):
    """The model on `device` in eval mode; on a CPU its linear layers packed for oneDNN (an engine's
    weights never change: nmt.model.onednn_linear)."""
    model = model.to(device).eval()
    if device.type == "cpu":
        model.pack_for_cpu_inference()
    return model


def _model_of(checkpoint: Checkpoint):
    models = checkpoint.tokenizer_models()
    src_sp, tgt_sp = load_processor(model_proto=models["src"]), load_processor(model_proto=models["tgt"])
    model = transformer_from_weights(checkpoint.recipe.model, src_sp.get_piece_size(), tgt_sp.get_piece_size(),
                                     checkpoint.weights, checkpoint.path)
    model.alignment_heads = alignment_heads(checkpoint.recipe)
    return model, src_sp, tgt_sp


def load_ensemble(checkpoints: list[Path], device: torch.device) -> Translator:
    """Each checkpoint a member; all must have the first one's tokenizers (its ids, both sides)."""
    from nmt.decode.engines.ensemble import Ensemble

    models, first = [], None
    for path in checkpoints:
        checkpoint = open_checkpoint(path)
        protos = checkpoint.tokenizer_models()
        for side, name in (("tgt", "target"), ("src", "source")):
            if first is not None and protos[side] != first[1][side]:
                raise NmtError(f"{path}: its {name} vocabulary differs from {first[0]}'s; "
                               "ensemble members need the same tokenizers")
        model, src_sp, tgt_sp = _model_of(checkpoint)
        first = first or (path, protos, checkpoint.recipe, src_sp, tgt_sp)
        models.append(for_inference(model, device))
    _, _, recipe, src_sp, tgt_sp = first
    try:
        ensemble = Ensemble(models)
    except ValueError as e:
        raise NmtError(f"{checkpoints[0]}: {e}") from None
    return Translator(ensemble, recipe, src_sp, tgt_sp, device)


@contextlib.contextmanager
def decode_autocast(device: torch.device, precision: str) -> Iterator[None]:
    """decode.precision: auto is bf16 on a GPU that multiplies bf16 natively (Ampere on; the scores
    are summed in fp32) and fp32 elsewhere, CPUs included (inference_precision). fp32 means fp32:
    TF32 is off while it decodes, so a GPU's fp32 output can be compared with a CPU's token for
    token. Every decoding step has a new length, so CUDA attention runs without cuDNN's kernel
    (attention_kernels)."""
    precision = inference_precision(precision, device)
    numerics = tf32(device, False) if precision == "fp32" else autocast(device, precision)
    with attention_kernels(device), numerics:
        yield


def precision_warning(translator, precision: str) -> str | None:
    """What to warn of where decode.precision would make nmt's own engine slower than fp32: bf16 on a
    CPU without bf16 arithmetic (emulated), fp16 on a CPU. None elsewhere, and for the other
    engines (which compute in their compute type)."""
    if not isinstance(translator, Translator):
        return None
    resolved = inference_precision(precision, translator.device)
    if not emulated(resolved, translator.device):
        return None
    return (f"decode.precision={resolved} on a CPU without {resolved} arithmetic: slower than fp32 "
            "(auto, the default, takes fp32 there)")


def translate_batch(translator: Translator, sources: list[list[int]], cfg: DecodeConfig,
                    prefixes: list[list[int]] | None = None,
                    constraints: list[list[list[int]]] | None = None) -> list[list[Hypothesis]]:
    """Token-id sources (non-empty) -> n-best hypotheses each, in the same order; each output
    starts with its prefix (target token ids), if any, and contains its constraints (phrases of
    target token ids; nmt.decode.constraints), if any."""
    constrained = bool(constraints and any(constraints))
    if constrained and cfg.sampling:
        raise NmtError("lexical constraints need beam search, not sampling (decode.sampling)")
    if cfg.compile:
        check_compiler(translator.device)
    src = padded(sources, last=EOS).to(translator.device)
    vocabulary = _shortlisted(translator, sources, cfg, prefixes, constraints)
    with decode_autocast(translator.device, cfg.precision):
        if not constrained and (cfg.sampling or cfg.beam_size <= 1):
            return [[h] for h in _greedy(translator, src, cfg, prefixes, vocabulary)]
        return beam_search(translator.model, src, max(cfg.beam_size, 1), cfg.length_penalty,
                           cfg.max_len_a, cfg.max_len_b, nbest=cfg.nbest, min_len=cfg.min_len,
                           no_repeat_ngram_size=cfg.no_repeat_ngram_size, length_penalty_form=cfg.length_penalty_form,
                           patience=cfg.patience, prefixes=prefixes, constraints=constraints if constrained else None,
                           vocabulary=vocabulary, compiled=cfg.compile)


def _shortlisted(translator: Translator, sources: list[list[int]], cfg: DecodeConfig,
                 prefixes: list[list[int]] | None, constraints: list[list[list[int]]] | None) -> torch.Tensor | None:
    """With decode.shortlist, the batch's candidate target ids (nmt.decode.shortlist) on the device."""
    if not cfg.shortlist:
        return None
    if cfg.shortlist not in translator.shortlists:
        translator.shortlists[cfg.shortlist] = read_shortlist(cfg.shortlist, translator.tgt_tokenizer)
    piece = translator.src_tokenizer.id_to_piece
    forced = [t for prefix in prefixes or [] for t in prefix]
    forced += [t for phrases in constraints or [] for phrase in phrases for t in phrase]
    ids = translator.shortlists[cfg.shortlist].candidates(([piece(i) for i in ids] for ids in sources), forced)
    return torch.tensor(ids, dtype=torch.long).to(translator.device)


def _greedy(translator: Translator, src: torch.Tensor, cfg: DecodeConfig,
            prefixes: list[list[int]] | None, vocabulary: torch.Tensor | None) -> list[Hypothesis]:
    sample = None
    if cfg.sampling:
        generator = torch.Generator(translator.device).manual_seed(cfg.seed)
        sample = {"temperature": cfg.temperature, "top_k": cfg.top_k, "top_p": cfg.top_p, "generator": generator,
                  "epsilon": cfg.epsilon or 0.0}
    alpha = 0.0 if cfg.sampling else cfg.length_penalty
    return greedy_search(translator.model, src, cfg.max_len_a, cfg.max_len_b, cfg.min_len, sample=sample,
                         no_repeat_ngram_size=cfg.no_repeat_ngram_size, length_penalty=alpha,
                         length_penalty_form=cfg.length_penalty_form, prefixes=prefixes, vocabulary=vocabulary,
                         compiled=cfg.compile)


def padded(rows: list[list[int]], first: int | None = None, last: int | None = None) -> torch.Tensor:
    """Token rows (B, longest + the extra tokens), each with `first` before and `last` after it, PAD-filled."""
    extra = (first is not None) + (last is not None)
    out = torch.full((len(rows), max(len(r) for r in rows) + extra), PAD, dtype=torch.long)
    for i, ids in enumerate(rows):
        row = ([first] if first is not None else []) + ids + ([last] if last is not None else [])
        out[i, : len(row)] = torch.tensor(row, dtype=torch.long)
    return out


@torch.inference_mode()
def score_batch(translator: Translator, sources: list[list[int]], targets: list[list[int]],
                precision: str = "auto") -> list[list[float]]:
    """Forced decoding: per pair, the log-probability of each target token and then of EOS given
    the source and the tokens before it (teacher forcing, all positions in one pass)."""
    src = padded(sources, last=EOS).to(translator.device)
    tgt_in = padded(targets, first=translator.model.start_token).to(translator.device)
    tgt_out = padded(targets, last=EOS).to(translator.device)
    with decode_autocast(translator.device, precision):
        log_probs = translator.model.teacher_forced_log_probs(src, tgt_in)
    picked = log_probs.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1).cpu()  # (B, T)
    return [picked[i, : len(ids) + 1].tolist() for i, ids in enumerate(targets)]
