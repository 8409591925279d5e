"""What a training run will hold in memory, said before it starts: the weights as the run stores
them (bf16 linear weights beside fp32 masters where the step uses them, frozen weights as they
are), gradients and Adam's two moments for the trained parameters only, and the activations of a
pass, measured, not guessed: probe batches run on the run's device, in its precision and with its
activation checkpointing, at two batch sizes. On a GPU the measure is the most memory the probe's
forward and backward passes allocate; elsewhere, what autograd keeps for the backward pass. What
grows with the batch is counted per token of a pass (train.max_tokens times the batches a pass
merges); what does not (autocast's bf16 copies of fp32 weights, the tied output table's among
them) is counted once. On a CPU the process's own memory before the model (interpreter,
libraries, training data) is added. The total is compared with the device's memory (a GPU's, or
the machine's RAM).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import nn

from nmt.config import TrainConfig
from nmt.host_memory import nmt_sets_malloc
from nmt.model.precision import autocast
from nmt.model.transformer import Transformer
from nmt.special_tokens import EOS

GB = 1e9
PROBE_ROWS, PROBE_LENGTH = 4, 32  # the measured batches: 4, then 8, sentences of 32 tokens a side
# glibc's heap keeps freed blocks that later ones do not fit into: a LoRA fine-tune's process held
# 1.51-1.53 times its estimate, one training every weight 1.04 times (bench/results/large_models.json)
HEAP_SLACK = 1.5


@dataclass
class MemoryEstimate:
    weights: int  # bytes
    gradients: int
    optimizer: int
    activations_per_token: float  # bytes per target token of a pass (its source included)
    tokens_per_pass: int
    available: int | None  # the device's memory in bytes, where known
    activations_fixed: float = 0.0  # bytes a pass keeps whatever its size (casts of fp32 weights)
    compiled_logits: float = 0.0  # a compiled step's whole (tokens × vocabulary) logits and their gradient
    process: float = 0.0  # on a CPU, what the process held before the model: interpreter, libraries, data
    heap_may_grow: bool = False  # on a CPU under glibc's heap as nmt sets it (nmt.host_memory)
    average: int = 0  # bytes of the weights' fp32 average (train.ema_decay)

    @property
    def activations(self) -> float:
        return self.activations_per_token * self.tokens_per_pass + self.activations_fixed + self.compiled_logits

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.average + self.activations + self.process

    @property
    def fits(self) -> bool | None:
        return None if self.available is None else self.total <= self.available

    def describe(self) -> str:
        line = (f"memory estimate: weights {_size(self.weights)}, gradients {_size(self.gradients)}, "
                f"Adam {_size(self.optimizer)}, "
                + (f"the weights' average {_size(self.average)}, " if self.average else "")
                + f"activations {self.activations_per_token / 1e3:.1f} kB per token "
                f"× {self.tokens_per_pass:,} tokens per pass"
                + (f" + {_size(self.activations_fixed)}" if self.activations_fixed >= 1e5 else "")
                + (f" + the compiled step's logits {_size(self.compiled_logits)}" if self.compiled_logits else "")
                + f" = {_size(self.activations)}"
                + (f"; the process besides {_size(self.process)}" if self.process else "")
                + f"; {_size(self.total)} in all")
        if self.available is None:
            return line
        if self.fits and self.heap_may_grow and HEAP_SLACK * self.total > self.available:
            return (f"{line}, of the device's {self.available / GB:.1f} GB; a CPU's heap may hold up to half as "
                    "much again: if the machine runs short, run with MALLOC_MMAP_THRESHOLD_=1048576 (docs/gpu.md)")
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
def _probe_batch(model: Transformer, device: torch.device, rows: int) -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.arange(rows * PROBE_LENGTH, device=device).view(rows, PROBE_LENGTH) % 64 + 4
    src = torch.cat([ids[:, 1:], torch.full((rows, 1), EOS, device=device)], dim=1)
    return src, torch.cat([torch.full((rows, 1), model.start_token, device=device), ids[:, 1:]], dim=1)


@contextlib.contextmanager
def _probing(model: Transformer, device: torch.device) -> Iterator[None]:
    """Probe passes as training runs them (training mode), leaving the model as it was and the
    run's random stream where it was (a resumed run probes too)."""
    was_training = model.training
    model.train()
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        try:
            yield
        finally:
            model.train(was_training)


def _probe_loss(model: Transformer, device: torch.device, precision: str, rows: int) -> torch.Tensor:
    """The probe batch's forward pass in the run's precision."""
    src, tgt_in = _probe_batch(model, device, rows)
    positions = torch.arange(tgt_in.numel(), device=device)
    numerics = autocast(device, precision) if precision in ("bf16", "fp16") else torch.autocast(device.type, enabled=False)
    with numerics:
        return model(src, tgt_in, positions, tgt_in.flatten(), label_smoothing=0.1)


def kept_bytes(model: Transformer, device: torch.device, precision: str = "fp32", rows: int = PROBE_ROWS) -> int:
    """Bytes autograd keeps for the backward pass (each storage once, the weights left out) after
    one forward pass in training mode of a batch of `rows` × PROBE_LENGTH target tokens (and as
    much source); the model is left as it was."""
    weights: set[int] = set()  # the storages of the weights as each module runs with them
    kept: dict[int, int] = {}  # storage -> bytes: a tensor saved by several operations counts once

    def note_weights(module, args) -> None:  # under FSDP a layer's whole weights exist while it runs
        weights.update(p.untyped_storage().data_ptr() for p in module.parameters(recurse=False)
                       if not hasattr(p, "to_local"))

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in weights:  # the weights are held anyway
            kept[storage.data_ptr()] = storage.nbytes()
        return tensor.detach()  # the tensor itself would hold its own grad_fn: a cycle through C++ that never dies

    hooks = [module.register_forward_pre_hook(note_weights) for module in model.modules()]
    try:
        with _probing(model, device), torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            _probe_loss(model, device, precision, rows)
    finally:
        for hook in hooks:
            hook.remove()
    return sum(kept.values())


def probe_backward(model: Transformer, device: torch.device, precision: str, rows: int) -> torch.Tensor:
    """One forward and backward pass of the probe batch, as an update runs them but for the weights'
    gradients: the backward asks only for the gradient of a scalar that scales both embeddings'
    outputs, so every activation's gradient is made and no weight's (the state counts those, and a
    gradient made here would stay until the first update). Returns that scalar's gradient."""
    scale = torch.ones((), device=device, requires_grad=True)
    hooks = [embed.register_forward_hook(lambda module, args, output: output * scale)
             for embed in (model.src_embed, model.tgt_embed)]
    try:
        with _probing(model, device):  # the backward too: checkpointed layers recompute in training mode
            loss = _probe_loss(model, device, precision, rows)
            (gradient,) = torch.autograd.grad(loss, [scale])
    finally:
        for hook in hooks:
            hook.remove()
    return gradient


def peak_bytes(model: Transformer, device: torch.device, precision: str, rows: int) -> int:
    """On CUDA: the most memory the probe's forward and backward (probe_backward) allocate above
    what was allocated before them: the activations kept, and what exists only for a moment (the
    output layer's chunk of logits and its cast table, activations' gradients, kernels' workspaces)."""
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    start = torch.cuda.memory_allocated(device)
    probe_backward(model, device, precision, rows)
    torch.cuda.synchronize(device)
    return torch.cuda.max_memory_allocated(device) - start


def activation_bytes(model: Transformer, device: torch.device, precision: str = "fp32",
                     tokens_per_pass: int | None = None, sharded: bool = False) -> tuple[float, float]:
    """(bytes per target token, bytes whatever the batch size) of a pass's activations: the line
    through two measured batches. A single batch would count its fixed part (autocast's bf16 copy
    of every fp32 weight it uses, a 256k-vocabulary output table's 1 GB among them) as if each of
    its tokens brought a share.

    On CUDA the measure is the device's own: peak_bytes of a quarter and of half the run's pass
    (tokens_per_pass), so that the output layer's chunks are as large as in the run. A sharded run
    (FSDP's hooks gather and reduce around a backward), a probe the device cannot hold, and every
    other device measure what autograd keeps for the backward (kept_bytes) of PROBE_ROWS and twice
    as many sentences."""
    def line(measure, small: int, large: int) -> tuple[float, float]:
        tokens_small, tokens_large = small * PROBE_LENGTH, large * PROBE_LENGTH
        at_small, at_large = measure(small), measure(large)
        per_token = max(at_large - at_small, 0) / (tokens_large - tokens_small)
        return per_token, max(at_small - per_token * tokens_small, 0.0)

    if device.type == "cuda" and tokens_per_pass and not sharded:
        quarter = max(PROBE_ROWS, tokens_per_pass // (4 * PROBE_LENGTH))
        try:
            return line(lambda rows: peak_bytes(model, device, precision, rows), quarter, 2 * quarter)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
    return line(lambda rows: kept_bytes(model, device, precision, rows), PROBE_ROWS, 2 * PROBE_ROWS)


def state_bytes(model: nn.Module, master_weights: bool = False) -> tuple[int, int, int]:
    """(weights, gradients, Adam's moments) in bytes, as a run holds them on its device: every
    weight at its dtype, and with master weights each linear layer's as a bf16 copy beside its fp32
    master (a frozen one's master in host memory; gradients: bf16 from the passes, fp32 into the
    masters); gradients and the two fp32 moments for trained parameters only (LoRA, train.freeze).
    A weight shared by layers counts once."""
    linear = {id(p) for module in model.modules() if isinstance(module, nn.Linear)
              for p in module.parameters(recurse=False)}
    weights = gradients = optimizer = 0
    for parameter in model.parameters():
        count = parameter.numel()
        if master_weights and id(parameter) in linear:
            held = (2 + 4 if parameter.requires_grad else 2) * count
        else:
            held = parameter.element_size() * count
        weights += held
        if parameter.requires_grad:
            gradients += held
            optimizer += 8 * count
    return weights, gradients, optimizer


def estimate_memory(model: Transformer, cfg: TrainConfig, device: torch.device, tokens_per_pass: int,
                    master_weights: bool = False, shards: int = 1, compiled: bool = False,
                    process: int = 0) -> MemoryEstimate:
    """The run's estimate, per process. master_weights: bf16 copies of the linear weights beside fp32
    masters, and bf16 gradients for the passes (nmt.train.master_weights). shards: FSDP's
    processes, each holding 1/shards of the weights, gradients and Adam's moments. compiled: the
    probes run eagerly, where the output layer goes through the logits in chunks; the compiled
    step computes them whole (nmt.model.output_loss) and keeps them and their gradient, in the
    passes' precision, for a pass's tokens. process: bytes the process holds besides (on a CPU,
    where the run shares the machine's memory with them: what it held before building the model)."""
    weights, gradients, optimizer = (-(-part // shards) for part in state_bytes(model, master_weights))
    per_token, fixed = activation_bytes(model, device, cfg.precision, tokens_per_pass, sharded=shards > 1)
    logits = 0.0
    if compiled:
        element = 4 if cfg.precision == "fp32" else 2
        logits = 2 * element * tokens_per_pass * model.output_weight.size(0)
    heap_may_grow = device.type == "cpu" and nmt_sets_malloc()
    average = optimizer // 2 if cfg.ema_decay else 0  # fp32, like each of Adam's two moments
    return MemoryEstimate(weights, gradients, optimizer, per_token, tokens_per_pass, device_memory(device), fixed,
                          logits, process, heap_may_grow, average)
