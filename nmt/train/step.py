"""One training update: micro-batches dealt out to the ranks, mixed precision, gradient
accumulation, clipping, the optimizer and the schedule. `nmt train` and `bench/gpu.py` both
run this class, so the benchmark times the code users run.

Nothing in an update reads a device value on the host (no `.item()`, no boolean-mask indexing,
no data-dependent shapes): on a GPU the host queues update n+1, collating its batches, while
the device still computes update n. The one exception is fp16's overflow check when the
optimizer is not fused (under FSDP): `GradScaler.step` reads one flag per update.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable

import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel

from nmt.checkpoint import TRAINING_WEIGHTS
from nmt.config import TrainConfig
from nmt.data.batching import Batch, collate, length_multiple
from nmt.data.buckets import bucket_rows, collate_bucketed
from nmt.data.packing import collate_packed, packed_rows_per_batch
from nmt.data.shards import ParallelShards
from nmt.errors import NmtError
from nmt.model.precision import attention_kernels, autocast, tf32, training_precision
from nmt.model.transformer import Transformer
from nmt.model.varlen_attention import flash_varlen_available
from nmt.model.compiler import compile_settings
from nmt.train.compiling import compile_model, resolve_compile, resolve_cuda_graphs
from nmt.train.distributed import World
from nmt.train.master_weights import MasterWeights
from nmt.train.micro_batches import initial_micro_batches, rank_passes
from nmt.train.schedule import Schedule
from nmt.train import sharding
from nmt.train.weight_average import WeightAverage


def fused_adam(device: torch.device) -> bool:
    """Fused Adam: one kernel for all parameters, its step counts on the device, and it takes the
    GradScaler's overflow flag on the device instead of reading it on the host. On a CPU too,
    where torch's default is a Python loop over the parameters: the fused step takes 2 ms instead
    of 11 for the Multi30k recipe's 133 tensors (2 cores), 4-5 % of a CPU update."""
    return device.type in ("cuda", "cpu")


def uses_master_weights(cfg: TrainConfig, device: torch.device) -> bool:
    """bf16 training on CUDA keeps its linear weights in bf16 for the passes and their fp32 masters
    in the optimizer (frozen ones' in host memory): the same updates as autocast's casts, bit for
    bit, without a cast per weight and pass. So does a CPU, where on a 2-core AMD EPYC (Zen 4) host
    a bf16 update took 0.91 of autocast's time at the demo's shape (6 windows of 20 updates, all
    below 1) and 0.98 at bench-small's (bench/results/cpu_master_weights.json; 0.87 and 0.95 in an
    earlier run), for 2 bytes more per linear weight; unless weights are frozen (LoRA,
    train.freeze): on a CPU the host is the device, and a frozen weight would be held twice there."""
    if cfg.precision != "bf16":
        return False
    return device.type == "cuda" or (device.type == "cpu" and not cfg.lora_rank and not cfg.freeze)


def attention_by_matmul(setting: str, device: torch.device) -> bool:
    """train.attention: matmul, or auto on a CPU (nmt.model.matmul_attention)."""
    return setting == "matmul" or (setting == "auto" and device.type == "cpu")


def keep_gradients_allocated(model: torch.nn.Module) -> None:
    """A CUDA graph's outputs are overwritten by its next replay, so no gradient may be one: every
    parameter the passes train gets its gradient allocated once (under master weights the bf16
    weights, whose gradients the backward makes, not only what the optimizer holds), each backward
    adds into it, and an update zeroes it instead of freeing it."""
    for parameter in model.parameters():
        if parameter.requires_grad and parameter.grad is None:
            parameter.grad = torch.zeros_like(parameter)


def _device_ids(device: torch.device) -> list[int] | None:
    """DDP's device_ids: this process's one GPU (`cuda` alone means the current one), none on a CPU."""
    if device.type != "cuda":
        return None
    return [device.index if device.index is not None else torch.cuda.current_device()]


def _no_buffer_broadcast() -> dict:
    """DDP options that skip re-broadcasting buffers before every forward: the positional table
    is the only buffer and never changes. torch 2.13 renamed the option."""
    if "forward_sync_buffers" in inspect.signature(DistributedDataParallel.__init__).parameters:
        return {"forward_sync_buffers": False}
    return {"broadcast_buffers": False}


class TrainStep:
    """`note`: where the step says what it decided (compiling or not, more passes after running out
    of memory); Trainer.log in a run."""

    def __init__(self, model: Transformer, cfg: TrainConfig, device: torch.device, world: World = World(),
                 budget_used: Callable[[int], float] | None = None, note: Callable[[str], None] = lambda text: None,
                 alignment_targets: Callable[[ParallelShards, np.ndarray, tuple], torch.Tensor] | None = None):
        """`alignment_targets(pairs, indices, (B, T, S))`: a batch's guided-alignment targets
        (TrainingData.alignment_targets), with train.guided_alignment."""
        cfg = cfg.model_copy(update={"precision": training_precision(cfg.precision, device)[0]})  # auto: this device's
        self.model, self.train_cfg, self.device, self.world, self.note = model, cfg, device, world, note
        self.alignment_targets = alignment_targets if cfg.guided_alignment.active else None
        model.use_matmul_attention(attention_by_matmul(cfg.attention, device))  # train.attention
        varlen = cfg.attention == "varlen"
        if varlen and not flash_varlen_available():
            raise NmtError(f"train.attention=varlen needs torch 2.10 or later, whose varlen_attn runs FlashAttention's "
                           f"segments (this is torch {torch.__version__})")
        if varlen and device.type != "cuda":
            raise NmtError(f"train.attention=varlen needs a CUDA device, where FlashAttention runs (this run trains "
                           f"on {device})")
        if varlen and cfg.precision == "fp32":
            raise NmtError(f"train.attention=varlen: FlashAttention takes bf16 or fp16, which {device} does not "
                           "multiply natively (train.precision auto chose fp32); set train.precision=fp16")
        model.use_varlen_attention(varlen)
        model.use_onednn_in_training(device.type == "cpu" and cfg.cpu_linear == "onednn")  # train.cpu_linear
        # this rank's summed guided-alignment loss of the last update (on the device), for the log;
        # None without guided alignment
        self.alignment_loss: torch.Tensor | None = None
        parallel, parallel_note = sharding.choose_parallel(cfg, model, device, world.size)
        self.sharded = parallel == "fsdp"  # nmt.train.sharding
        if self.sharded:  # (the recipe refuses train.freeze and LoRA with fsdp)
            sharding.shard(model, cfg.precision, device)
        if parallel_note:
            note(parallel_note)
        # bf16 weights in the passes, fp32 masters in the optimizer (nmt.train.master_weights);
        # under FSDP its mixed-precision policy does that
        self.master_weights = MasterWeights(model) if uses_master_weights(cfg, device) and not self.sharded else None
        self.parameters = self.master_weights.parameters() if self.master_weights else \
            [p for p in model.parameters() if p.requires_grad]  # frozen ones (train.freeze) left out
        self.optimizer = torch.optim.Adam(self.parameters, lr=1.0, betas=cfg.adam_betas, eps=cfg.adam_eps,
                                          weight_decay=cfg.weight_decay, fused=fused_adam(device) and not self.sharded)
        self.scheduler = Schedule(self.optimizer, cfg, model.cfg.d_model, budget_used)
        # train.ema_decay: the weights' average beside what the optimizer updates (under FSDP, of
        # this process's shards)
        self.average = WeightAverage(self.parameters, cfg.ema_decay) if cfg.ema_decay else None
        # fp16 needs loss scaling on every device; the scaler runs on a CPU too (tested there).
        self.scaler = torch.amp.GradScaler(device.type, enabled=cfg.precision == "fp16")
        self.length_multiple = length_multiple(device.type, varlen)  # batch widths (see there)
        # Forward and backward passes per update (nmt.train.micro_batches); `auto` on one process
        # may raise it when the device runs out of memory.
        self.batches_per_process = max(1, cfg.update_freq // world.size)
        self.micro_batches = initial_micro_batches(cfg.micro_batches, device, self.batches_per_process)
        self.can_split_on_oom = cfg.micro_batches == "auto" and not world.distributed
        forward = model  # a sharded model gathers and reduces by itself
        if world.distributed and not self.sharded:
            forward = DistributedDataParallel(model, device_ids=_device_ids(device), **_no_buffer_broadcast())
        self.compiled, compile_note = resolve_compile(cfg, device)
        if self.sharded and self.compiled:
            self.compiled, compile_note = False, "train.compile: the sharded (fsdp) step runs eagerly"
        self.cuda_graphs, graphs_note = resolve_cuda_graphs(cfg, device, self.compiled, world.size)
        for text in (compile_note, graphs_note):
            if text:
                note(text)
        # CUDA graphs replay a fixed set of shapes: batches padded to shape buckets (nmt.data.buckets),
        # or packed passes of one shape (nmt.data.packing), compiled for that shape alone.
        self.shape_buckets = self.cuda_graphs and not cfg.pack_width
        self.one_packed_shape = self.cuda_graphs and bool(cfg.pack_width)
        if self.cuda_graphs:
            keep_gradients_allocated(model)
        self.forward = compile_model(forward, cuda_graphs=self.cuda_graphs, dynamic=not self.one_packed_shape) \
            if self.compiled else forward
        self.tracing = compile_settings if self.compiled else contextlib.nullcontext

    def __call__(self, data: ParallelShards, group: list[np.ndarray]) -> tuple[torch.Tensor, int]:
        """One update from a group of batches (index arrays into `data`): rank r takes every K-th,
        accumulating gradients over its share. Returns this rank's summed loss (on the device)
        and the group's target tokens. TF32 (train.tf32: tensor-core speed for fp32 matmuls on CUDA,
        fp32 range, a 10-bit mantissa) is on for the update only, never left on for the process;
        so is the choice of attention kernels (nmt.model.precision.attention_kernels)."""
        with tf32(self.device, self.train_cfg.tf32), attention_kernels(self.device):
            while True:
                try:
                    return self._update(data, group)
                except torch.OutOfMemoryError:
                    if not (self.can_split_on_oom and self.micro_batches < len(group)):
                        raise NmtError(self._out_of_memory(group)) from None
                # Outside the handler, so the failed attempt's tensors are freed before the retry.
                self.optimizer.zero_grad(set_to_none=not self.cuda_graphs)
                self.model.zero_grad(set_to_none=not self.cuda_graphs)  # the bf16 weights' too
                if self.device.type == "cuda":
                    torch.cuda.empty_cache()
                self.micro_batches = min(2 * self.micro_batches, len(group))
                self.note(f"out of device memory: this update and the next run in {self.micro_batches} "
                          "passes (train.micro_batches)")

    def _out_of_memory(self, group: list[np.ndarray]) -> str:
        tokens = f"{self.train_cfg.max_tokens:,}"
        if self.micro_batches < len(group):
            return (f"out of device memory with {self.micro_batches} pass(es) per update; "
                    f"set train.micro_batches={min(2 * self.micro_batches, len(group))} (or auto on one process)")
        return (f"out of device memory with one batch of train.max_tokens={tokens} per pass; lower train.max_tokens "
                f"and raise train.update_freq to keep the tokens per update")

    def _collate(self, data: ParallelShards, run: list[np.ndarray]) -> Batch:
        """One pass's batch: the run of batches merged, padded to its bucket's shape under CUDA
        graphs, or packed into rows (train.pack_width)."""
        indices = run[0] if len(run) == 1 else np.concatenate(run)
        if self.shape_buckets:
            rows = bucket_rows(data, run, self.train_cfg.max_tokens)
            batch = collate_bucketed(data, indices, rows, self.model.start_token)
        elif self.train_cfg.pack_width:
            width = self.train_cfg.pack_width
            # one shape: every pass as many batches as the fullest pass of a full update
            batches = -(-self.batches_per_process // self.micro_batches) if self.one_packed_shape else None
            batch = collate_packed(data, run, width, packed_rows_per_batch(self.train_cfg.max_tokens, width),
                                   self.model.start_token, batches, score_every_position=self.one_packed_shape)
        else:
            batch = collate(data, indices, self.length_multiple, self.model.start_token)
        if self.alignment_targets:
            batch.alignment = self.alignment_targets(data, indices, (*batch.tgt_out.shape, batch.src.size(1)),
                                                     batch.pair_places)
        return batch

    def _update(self, data: ParallelShards, group: list[np.ndarray]) -> tuple[torch.Tensor, int]:
        if not self.model.training:  # after validation; setting the flag of each of the base model's
            self.model.train()       # 223 modules took the host 0.5 ms, which every update paid
        # The same on every rank, from the lengths alone: no communication.
        # Scored target tokens: each target and its EOS, less its forced first tokens (collate).
        total_tokens = sum(int(data.tgt.lengths[idx].sum()) + len(idx) * (1 - data.forced_target_tokens) for idx in group)
        passes, weights = rank_passes(group, self.world.rank, self.world.size, self.micro_batches,
                                      same_count=self.sharded)
        batches = [self._collate(data, run).to(self.device) for run in passes]
        # DDP averages gradients over ranks; scaling by world size makes that a sum over all tokens.
        scale = self.world.size / total_tokens
        self.optimizer.zero_grad(set_to_none=not self.cuda_graphs)
        if self.master_weights:
            self.master_weights.start_update()
        loss_sum = torch.zeros((), device=self.device)
        alignment_sum = torch.zeros((), device=self.device) if self.alignment_targets else None
        for i, (batch, weight) in enumerate(zip(batches, weights)):
            last = i == len(batches) - 1
            sync = contextlib.nullcontext()
            if self.sharded:  # reduce-scatter the gradients once, after the last pass
                self.model.set_requires_gradient_sync(last)
            elif self.world.distributed and not last:
                sync = self.forward.no_sync()
            if self.cuda_graphs:  # a new step of the graph tree: this pass's replay may reuse the last one's memory
                torch.compiler.cudagraph_mark_step_begin()
            with sync:
                with autocast(self.device, self.train_cfg.precision), self.tracing():
                    loss = self.forward(batch.src, batch.tgt_in, batch.out_positions, batch.out_targets,
                                        self.train_cfg.label_smoothing, batch.alignment, batch.packing)
                alignment_loss = None
                if batch.alignment is not None:  # guided alignment: the model gives its loss too
                    loss, alignment_loss = loss[0], loss[1] * weight
                    alignment_sum += alignment_loss.detach()
                loss = loss * weight
                objective = loss if alignment_loss is None else loss + self.train_cfg.guided_alignment.weight * alignment_loss
                self.scaler.scale(objective * scale).backward()
            loss_sum += loss.detach()
            # Into the fp32 masters after each pass; under DDP once the last pass's backward has
            # all-reduced what the passes accumulated.
            if self.master_weights and (last or not self.world.distributed):
                self.master_weights.add_gradients_to_masters(keep_allocated=self.cuda_graphs)
        if self.train_cfg.clip_norm > 0:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.parameters, self.train_cfg.clip_norm)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        if self.master_weights:
            self.master_weights.masters_to_weights()
        self.scheduler.step()
        if self.average:  # the schedule counts the updates, a resumed run's before included
            self.average.update(self.scheduler.last_epoch)
        self.alignment_loss = alignment_sum
        return loss_sum, total_tokens

    def fp32_weights(self) -> contextlib.AbstractContextManager:
        """The model with its fp32 weights in place inside the block (validation decodes in any
        precision); a no-op unless the passes run on bf16 weights."""
        return self.master_weights.masters_in_place() if self.master_weights else contextlib.nullcontext()

    def averaged(self) -> contextlib.AbstractContextManager:
        """The model holding the weights' average inside the block (train.ema_decay); a no-op without one."""
        return self.average.in_place() if self.average else contextlib.nullcontext()

    @contextlib.contextmanager
    def validation_model(self):
        """What validation decodes with, on the first process (every process must enter): the model
        with its fp32 weights (their average, with train.ema_decay), or under FSDP a plain copy
        gathered from the shards (None elsewhere)."""
        if self.sharded:
            with self.averaged():  # gathered from the average's shards
                copy = sharding.unsharded_copy(self.model, self.world.is_main, self.device)
            yield copy
        else:
            with self.averaged(), self.fp32_weights():
                yield self.model

    # --- checkpointed state ---------------------------------------------------------------------
    def model_state(self) -> dict:
        """The model's whole weights for a checkpoint (under FSDP every process must call it and
        the first one gets them): {"model": weights}, or with train.ema_decay {"model": their
        average, TRAINING_WEIGHTS: the trained weights themselves}."""
        if self.sharded:
            trained = sharding.full_model_state(self.model)
            if not self.average:
                return {"model": trained}
            with self.average.in_place():
                average = sharding.full_model_state(self.model)
            return {"model": average, TRAINING_WEIGHTS: {name: trained[name] for name in self._parameter_names()
                                                         if name in trained}}  # ({} on the other processes)
        if not self.average:
            return {"model": self.model.state_dict()}
        trained = self.model.state_dict()
        with self.average.in_place():  # (the average's tensors stay as they are until the next update)
            average = self.model.state_dict()
        # the trained weights where they differ from the average's tensors: buffers and frozen
        # weights are the same tensors in both
        return {"model": average, TRAINING_WEIGHTS: {name: tensor for name, tensor in trained.items()
                                                     if tensor.data_ptr() != average[name].data_ptr()}}

    def _parameter_names(self) -> list[str]:
        """Every name of every parameter (a tied weight's two), as a state dict names them."""
        return [name for name, _ in self.model.named_parameters(remove_duplicate=False)]

    def load_weights(self, payload: dict, load=None) -> list[str]:
        """A checkpoint's weights (`model_state`'s) into the model, and into the weights' average
        where this run keeps one; notes where the checkpoint and the run differ in that. `load`:
        how weights go into the model (default `load_model_state`; this process's shards under FSDP)."""
        load = load or self.load_model_state
        trained = payload.get(TRAINING_WEIGHTS)
        if self.average is None:
            load(payload["model"] | (trained or {}))
            return ["train.ema_decay is 0: the checkpoint's average of the weights is left behind, training goes on "
                    "from its trained weights"] if trained else []
        load(payload["model"])
        self.average.restart_from_weights()
        if trained is None:
            return ["the checkpoint keeps no average of the weights: train.ema_decay's starts from its weights"]
        load(payload["model"] | trained)
        return []

    def load_model_state(self, state: dict, strict: bool = True) -> tuple[list, list]:
        """Whole weights (a checkpoint's) into the model, sharded or not; (missing, unexpected) names."""
        if self.sharded:
            return sharding.load_full_model_state(self.model, state, strict)
        return self.model.load_state_dict(state, strict=strict)

    def state_dict(self) -> dict:
        return {"optimizer": self.optimizer_state(), **self.schedule_state()}

    def optimizer_state(self) -> dict:
        """The optimizer's whole state (under FSDP every process must call it and the first one gets it)."""
        if self.sharded:
            return sharding.full_optimizer_state(self.model, self.optimizer)
        return self.optimizer.state_dict()

    def schedule_state(self) -> dict:
        return {"scheduler": self.scheduler.state_dict(), "scaler": self.scaler.state_dict()}

    def local_state(self) -> dict:
        """Under FSDP: this process's shards of the weights and the optimizer's state (no
        collective); with train.ema_decay, as `model_state`, "model" is the average's shards and
        TRAINING_WEIGHTS the trained weights' own."""
        state = {"optimizer": sharding.local_optimizer_state(self.optimizer)}
        # (the trained weights are back in place when the block below ends, before anything is written)
        trained = sharding.local_model_state(self.model)
        if not self.average:
            return state | {"model": trained}
        with self.average.in_place():
            average = sharding.local_model_state(self.model, copy=True)
        names = set(self._parameter_names())
        return state | {"model": average, TRAINING_WEIGHTS: {k: v for k, v in trained.items() if k in names}}

    def load_local_state(self, shards: dict) -> list[str]:
        """Under FSDP: this process's shards of the weights (with their average's) and optimizer
        state (`local_state` of a run of as many processes), each process reading only its own;
        notes as `load_weights` gives them."""
        notes = self.load_weights(shards, load=lambda state: sharding.load_local_model_state(self.model, state))
        sharding.load_local_optimizer_state(self.optimizer, shards["optimizer"])
        return notes

    def load_state_dict(self, state: dict) -> list[str]:
        """Restore the optimizer, schedule and loss scale; returns notes on what could not carry
        over (a run resumed in another precision)."""
        if self.sharded:
            sharding.load_full_optimizer_state(self.model, self.optimizer, state["optimizer"])
        else:
            self.optimizer.load_state_dict(state["optimizer"])
        return self.load_schedule_state(state)

    def load_schedule_state(self, state: dict) -> list[str]:
        """The schedule and loss scale (`load_state_dict` without the optimizer)."""
        self.scheduler.load_state_dict(state["scheduler"])
        notes = []
        if self.scaler.is_enabled() and not state.get("scaler"):
            # Written by a bf16/fp32 run (a disabled scaler saves {}): start from the default scale.
            notes.append(f"no loss scale in the checkpoint (trained in another precision): "
                         f"fp16 starts from scale {self.scaler.get_scale():g}")
        elif self.scaler.is_enabled():
            self.scaler.load_state_dict(state["scaler"])
        return notes
