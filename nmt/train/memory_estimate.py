"""What a training run will hold in memory, said before it starts: weights, gradients and Adam's
two moments per parameter (bf16 weights with fp32 masters where they are used), and activations
per token, measured, not guessed: one forward pass of a small batch on the run's device, in its
precision and with its activation checkpointing, counting the bytes autograd keeps for the
backward pass. Activations grow with the tokens of a pass (train.max_tokens times the batches a
pass merges); the total is compared with the device's memory (a GPU's, or the machine's RAM).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch

from nmt.config import TrainConfig
from nmt.model.precision import autocast
from nmt.model.transformer import Transformer
from nmt.special_tokens import EOS

GB = 1e9
PROBE_ROWS, PROBE_LENGTH = 4, 32  # the measured batch: 4 sentences of 32 tokens a side


@dataclass
class MemoryEstimate:
    weights: int  # bytes
    gradients: int
    optimizer: int
    activations_per_token: float  # bytes per target token of a pass (its source included)
    tokens_per_pass: int
    available: int | None  # the device's memory in bytes, where known

    @property
    def activations(self) -> float:
        return self.activations_per_token * self.tokens_per_pass

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.activations

    @property
    def fits(self) -> bool | None:
        return None if self.available is None else self.total <= self.available

    def describe(self) -> str:
        line = (f"memory estimate: weights {_size(self.weights)}, gradients {_size(self.gradients)}, "
                f"Adam {_size(self.optimizer)}, activations {self.activations_per_token / 1e3:.1f} kB per token "
                f"× {self.tokens_per_pass:,} tokens per pass = {_size(self.activations)}; {_size(self.total)} in all")
        if self.available is None:
            return line
        if self.fits:
            return f"{line}, of the device's {self.available / GB:.1f} GB"
        return (f"{line}: more than the device's {self.available / GB:.1f} GB; lower train.max_tokens, raise "
                "train.update_freq, or set train.checkpoint_activations: true")


def _size(bytes_: float) -> str:
    return f"{bytes_ / GB:.2f} GB" if bytes_ >= 0.1 * GB else f"{bytes_ / 1e6:.1f} MB"


def device_memory(device: torch.device) -> int | None:
    """A GPU's memory, or the machine's RAM for a CPU, in bytes."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).total_memory
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


@torch.no_grad()
def _probe_batch(model: Transformer, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.arange(PROBE_ROWS * PROBE_LENGTH, device=device).view(PROBE_ROWS, PROBE_LENGTH) % 64 + 4
    src = torch.cat([ids[:, 1:], torch.full((PROBE_ROWS, 1), EOS, device=device)], dim=1)
    return src, torch.cat([torch.full((PROBE_ROWS, 1), model.start_token, device=device), ids[:, 1:]], dim=1)


def activation_bytes_per_token(model: Transformer, device: torch.device, precision: str = "fp32") -> float:
    """Bytes autograd keeps for the backward pass per target token (each storage once, the weights
    left out), from one forward pass of a PROBE_ROWS × PROBE_LENGTH batch (and as much source) in
    training mode; the model is left as it was."""
    weights: set[int] = set()  # the storages of the weights as each module runs with them
    kept: dict[int, int] = {}  # storage -> bytes: a tensor saved by several operations counts once

    def note_weights(module, args) -> None:  # under FSDP a layer's whole weights exist while it runs
        weights.update(p.untyped_storage().data_ptr() for p in module.parameters(recurse=False)
                       if not hasattr(p, "to_local"))

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in weights:  # the weights are held anyway
            kept[storage.data_ptr()] = storage.nbytes()
        return tensor

    src, tgt_in = _probe_batch(model, device)
    was_training = model.training
    model.train()
    hooks = [module.register_forward_pre_hook(note_weights) for module in model.modules()]
    # The probe's dropout draws must not move the run's random stream (a resumed run probes too).
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        try:
            numerics = autocast(device, precision) if precision in ("bf16", "fp16") else \
                torch.autocast(device.type, enabled=False)
            with numerics, torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
                positions = torch.arange(tgt_in.numel(), device=device)
                model(src, tgt_in, positions, tgt_in.flatten(), label_smoothing=0.1)
        finally:
            model.train(was_training)
            for hook in hooks:
                hook.remove()
    return sum(kept.values()) / tgt_in.numel()


def estimate_memory(model: Transformer, cfg: TrainConfig, device: torch.device, tokens_per_pass: int,
                    master_weights: bool = False, shards: int = 1) -> MemoryEstimate:
    """The run's estimate, per process. master_weights: bf16 copies of the linear weights beside fp32
    masters, and bf16 gradients for the passes (nmt.train.master_weights), counted for every
    parameter (an upper bound: embeddings and norms stay fp32). shards: FSDP's processes, each
    holding 1/shards of the weights, gradients and Adam's moments."""
    parameters = -(-sum(p.numel() for p in model.parameters()) // shards)
    weights = parameters * (4 + (2 if master_weights else 0))
    gradients = parameters * (4 + (2 if master_weights else 0))
    per_token = activation_bytes_per_token(model, device, cfg.precision)
    return MemoryEstimate(weights, gradients, parameters * 8, per_token, tokens_per_pass, device_memory(device))
