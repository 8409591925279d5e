"""bf16 weights for the forward and backward passes, fp32 master weights for the optimizer.

Under autocast, every matmul casts its fp32 weight to bf16 in each pass (a kernel per weight in
the forward, and one per weight gradient back to fp32 in the backward). Here each linear layer's
weight and bias are bf16 parameters that the passes use as they are, and their fp32 masters are
what Adam updates, clips and checkpoints save: after each pass's backward the bf16 gradients go
into the masters' fp32 gradients (one multi-tensor kernel: a copy after an update's first pass, an
addition after the others), after the step the masters are copied back into the bf16 weights
(another). The passes compute with autocast's casts of the
masters and get autocast's gradients, so an update equals autocast's bit for bit
(tests/train/test_master_weights.py). Embeddings (the tied output layer among them) and layer norms
stay fp32 parameters, used as autocast uses them.

Frozen linear weights (LoRA's base weights, train.freeze) are bf16 in the passes too, with no
cast per pass and none held for the backward; their fp32 masters never change, so they wait in
host memory (an NLLB-200 3.3B LoRA run keeps 13 GB of fp32 off the GPU), out of the optimizer,
and come to the device only while validation puts the fp32 weights in place.

The model's state_dict keeps giving (and load_state_dict keeps taking) the fp32 masters, so a
checkpoint is the same whichever way it was trained.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch import nn


class MasterWeights:
    def __init__(self, model: nn.Module, dtype: torch.dtype = torch.bfloat16):
        self.model = model
        self.lowered: list[nn.Parameter] = []  # the trained bf16 parameters the passes use
        self.masters: list[nn.Parameter] = []  # their fp32 masters, in the same order
        self._master_of: dict[str, nn.Parameter] = {}  # state_dict key -> master (a frozen one on the host)
        self._places: list[tuple[nn.Module, str, nn.Parameter, nn.Parameter]] = []  # (module, name, master, bf16)
        replaced = {}  # id(master) -> (its bf16 parameter, the master kept) (a shared weight stays shared)
        for module_name, module in model.named_modules():
            if not isinstance(module, nn.Linear):
                continue
            for name, master in list(module.named_parameters(recurse=False)):
                if master.dtype != torch.float32:
                    raise ValueError(f"{module_name}.{name}: {master.dtype} weights; master weights need fp32 ones "
                                     "(a model already lowered by another TrainStep?)")
                if id(master) not in replaced:
                    lowered = nn.Parameter(master.detach().to(dtype), requires_grad=master.requires_grad)
                    if master.requires_grad:
                        self.lowered.append(lowered)
                        self.masters.append(master)
                        kept = master
                    else:  # frozen: the fp32 values only for checkpoints and validation
                        kept = nn.Parameter(master.detach().to("cpu", copy=True), requires_grad=False)
                    replaced[id(master)] = lowered, kept
                lowered, kept = replaced[id(master)]
                setattr(module, name, lowered)
                self._places.append((module, name, kept, lowered))
                self._master_of[f"{module_name}.{name}" if module_name else name] = kept
        self.master_grads = [torch.zeros_like(master) for master in self.masters]  # fp32, kept allocated
        self._first_pass = True
        # (functions, not bound methods: torch marks its hooks with an attribute)
        model.register_state_dict_post_hook(lambda *args: self._masters_in_state_dict(*args))
        model.register_load_state_dict_pre_hook(lambda *args: self._load_into_masters(*args))

    def parameters(self) -> list[nn.Parameter]:
        """What the optimizer updates: the model's trained parameters with each bf16 one's master in
        its place (the order of model.parameters(), so optimizer states stay interchangeable)."""
        master = {id(low): high for low, high in zip(self.lowered, self.masters)}
        return [master.get(id(p), p) for p in self.model.parameters() if p.requires_grad]

    def start_update(self) -> None:
        """Before an update's passes: the masters' gradients given back to them (the optimizer's
        zero_grad frees them). The first pass's gradients are copied into them, not added, so they
        need no zeroing: one kernel fewer, and the fp32 gradients written without being read."""
        for master, grad in zip(self.masters, self.master_grads):
            master.grad = grad
        self._first_pass = True

    def add_gradients_to_masters(self, keep_allocated: bool = False) -> None:
        """After a backward: its bf16 gradients into the masters' fp32 gradients (copied after the
        update's first pass, then added: an update's passes sum in fp32, as under autocast), the
        bf16 ones freed, or zeroed where they must stay allocated (CUDA graphs)."""
        with torch.no_grad():
            pairs = [(grad, low.grad) for grad, low in zip(self.master_grads, self.lowered) if low.grad is not None]
            if self._first_pass:
                missing = [grad for grad, low in zip(self.master_grads, self.lowered) if low.grad is None]
                if missing:  # weights this pass did not use: no gradient, zero
                    torch._foreach_zero_(missing)
            if pairs:
                combine = torch._foreach_copy_ if self._first_pass else torch._foreach_add_
                combine([grad for grad, _ in pairs], [low for _, low in pairs])
                if keep_allocated:
                    torch._foreach_zero_([low for _, low in pairs])
        self._first_pass = False
        if not keep_allocated:
            for low in self.lowered:
                low.grad = None

    def masters_to_weights(self) -> None:
        """After the optimizer step: the bf16 weights from the updated masters."""
        with torch.no_grad():
            torch._foreach_copy_(self.lowered, self.masters)

    @contextlib.contextmanager
    def masters_in_place(self) -> Iterator[None]:
        """The fp32 masters in the model's layers inside the block (validation, decoding in any
        precision), the bf16 weights back after it. Frozen ones come from the host for the block."""
        on_device: dict[int, nn.Parameter] = {}
        for module, name, master, lowered in self._places:
            if master.device != lowered.device and id(master) not in on_device:
                on_device[id(master)] = nn.Parameter(master.to(lowered.device), requires_grad=False)
            setattr(module, name, on_device.get(id(master), master))
        try:
            yield
        finally:
            for module, name, _, lowered in self._places:
                setattr(module, name, lowered)

    def _masters_in_state_dict(self, module, state_dict, prefix, local_metadata) -> None:
        for key, master in self._master_of.items():
            if prefix + key in state_dict:
                state_dict[prefix + key] = master.detach()

    def _load_into_masters(self, module, state_dict, prefix, local_metadata, strict, missing_keys,
                           unexpected_keys, error_msgs) -> None:
        """The fp32 values into the masters; the module's own copy into the bf16 weights then
        rounds the same values."""
        with torch.no_grad():
            for key, master in self._master_of.items():
                if prefix + key in state_dict:
                    master.copy_(state_dict[prefix + key])
