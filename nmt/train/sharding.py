"""Sharded data parallel training through PyTorch's own FSDP (`fully_shard`, FSDP2): under torchrun
with `train.parallel: fsdp`, each process keeps 1/K of the weights, gradients and Adam's moments
instead of DDP's full copy, and gathers a layer's weights only while that layer runs.

Each encoder and decoder layer is a unit of its own, the embeddings, positions and final norms
the root's; with bf16 on CUDA, FSDP's mixed-precision policy computes in bf16 and reduces
gradients in fp32 (in place of nmt's own bf16 weights with fp32 masters). The batches, the
schedule and the gradient's scale are DDP's: FSDP averages gradients over the processes as DDP
does.

Checkpoints stay nmt's own: every process takes part in gathering the full weights and the
optimizer's state onto the first process's CPU, which writes an ordinary checkpoint (the
optimizer's state keyed by parameter index, as `Optimizer.state_dict` keys it), so `nmt average`,
`export` and `translate` read it, and a run resumes from it under FSDP, DDP or one process alike.
With train.sharded_checkpoints, each process writes its own shards instead (`local_model_state`,
`local_optimizer_state`), with no gathering at save time; a run resumed in as many processes reads
them back each its own (`load_local_model_state`, `load_local_optimizer_state`), and every other
reader gets them joined by nmt.checkpoint into the same checkpoint. (torch.distributed.checkpoint is not used: it reads its
metadata with pickle, and nmt loads checkpoints with weights_only=True only.)
Tied weights (the shared embedding and output layer) are one parameter: loading skips their
second name.
"""

from __future__ import annotations

import torch
from torch import nn

from nmt.config import TrainConfig
from nmt.errors import NmtError
from nmt.model.from_weights import transformer_from_weights

# auto shards when weights, gradients and Adam's moments (16 bytes a parameter) would take more
# than this share of one device's memory, leaving the rest to activations
AUTO_SHARE = 0.5


def choose_parallel(cfg: TrainConfig, model: nn.Module, device: torch.device, processes: int) -> tuple[str, str | None]:
    """("ddp" | "fsdp" | "none", a note for the log where auto decided)."""
    if processes == 1:
        return "none", None
    if cfg.parallel != "auto":
        return cfg.parallel, None
    if device.type != "cuda":
        return "ddp", None
    parameters = sum(p.numel() for p in model.parameters())
    held = 16 * parameters
    memory = torch.cuda.get_device_properties(device).total_memory
    if held > AUTO_SHARE * memory:
        return "fsdp", (f"train.parallel auto: fsdp, as weights, gradients and Adam ({held / 1e9:.1f} GB) would take "
                        f"more than {AUTO_SHARE:.0%} of each GPU's {memory / 1e9:.0f} GB under DDP")
    return "ddp", None


def shard(model: nn.Module, precision: str, device: torch.device) -> None:
    """fully_shard each layer, then the whole model (its embeddings, positions and final norms),
    from the first process's weights, as DDP starts (each process drew its own initialisation)."""
    import torch.distributed as dist
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    with torch.no_grad():
        for tensor in [*model.parameters(), *model.buffers()]:
            dist.broadcast(tensor, src=0)

    policy = MixedPrecisionPolicy()
    if device.type == "cuda" and precision == "bf16":
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for layer in [*model.encoder_layers, *model.decoder_layers]:
        fully_shard(layer, mp_policy=policy)
    fully_shard(model, mp_policy=policy)


def local_parameters(model: nn.Module) -> int:
    """The parameter elements this process holds (its shards)."""
    return sum(p.to_local().numel() if hasattr(p, "to_local") else p.numel() for p in model.parameters())


def aliases(model: nn.Module) -> set[str]:
    """State-dict names of a tensor already named before (a tied weight's second name)."""
    seen, second = set(), set()
    for name, tensor in model.state_dict(keep_vars=True).items():
        if id(tensor) in seen:
            second.add(name)
        seen.add(id(tensor))
    return second


def _options(**kwargs):
    from torch.distributed.checkpoint.state_dict import StateDictOptions

    return StateDictOptions(full_state_dict=True, **kwargs)


def full_model_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """The whole model's weights on the first process's CPU (every process must call it; the others get {})."""
    from torch.distributed.checkpoint.state_dict import get_model_state_dict

    return get_model_state_dict(model, options=_options(cpu_offload=True))


def load_full_model_state(model: nn.Module, state: dict[str, torch.Tensor], strict: bool = True) -> tuple[list, list]:
    """Whole weights (on every process) into the sharded model; (missing, unexpected) names."""
    from torch.distributed.checkpoint.state_dict import set_model_state_dict

    skipped = aliases(model)
    result = set_model_state_dict(model, {k: v for k, v in state.items() if k not in skipped},
                                  options=_options(strict=False))
    missing = [name for name in result.missing_keys if name not in skipped]
    if strict and (missing or result.unexpected_keys):
        raise RuntimeError(f"missing {missing[:3]}, unexpected {list(result.unexpected_keys)[:3]}")
    return missing, list(result.unexpected_keys)


def _trainable_names(model: nn.Module) -> list[str]:
    """The optimizer's parameters in its order (TrainStep: model.parameters() that require grad)."""
    return [name for name, p in model.named_parameters() if p.requires_grad]


def full_optimizer_state(model: nn.Module, optimizer: torch.optim.Optimizer) -> dict:
    """The optimizer's whole state on the first process's CPU, keyed by index as a plain
    Optimizer.state_dict() is (every process must call it)."""
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

    state = get_optimizer_state_dict(model, optimizer, options=_options(cpu_offload=True))
    if not state:
        return {}
    index = {name: i for i, name in enumerate(_trainable_names(model))}
    return {"state": {index[name]: value for name, value in state["state"].items()},
            "param_groups": [group | {"params": [index[name] for name in group["params"]]}
                             for group in state["param_groups"]]}


def load_full_optimizer_state(model: nn.Module, optimizer: torch.optim.Optimizer, state: dict) -> None:
    """An index-keyed optimizer state (from any checkpoint of this model) into the sharded optimizer."""
    from torch.distributed.checkpoint.state_dict import set_optimizer_state_dict

    names = _trainable_names(model)
    if len(state["param_groups"][0]["params"]) != len(names):
        raise NmtError(f"the checkpoint's optimizer holds {len(state['param_groups'][0]['params'])} parameters, "
                       f"this model trains {len(names)}")
    by_name = {"state": {names[i]: value for i, value in state["state"].items()},
               "param_groups": [group | {"params": [names[i] for i in group["params"]]} for group in state["param_groups"]]}
    set_optimizer_state_dict(model, optimizer, by_name, options=_options())


def _local(value):
    """A DTensor's own shard, on the CPU; anything else as it is."""
    if hasattr(value, "to_local"):
        return value.to_local().detach().cpu()
    return value.detach().cpu() if isinstance(value, torch.Tensor) else value


def local_model_state(model: nn.Module, copy: bool = False) -> dict[str, torch.Tensor]:
    """This process's shard of every weight (first-dimension slices, in process order); a tied
    weight's names share one tensor, as in the model. `copy`: tensors of their own, which keep
    their values when the weights change (on a CPU a shard is otherwise the weight's own storage)."""
    shards: dict[int, torch.Tensor] = {}
    state = model.state_dict(keep_vars=True)
    for tensor in state.values():
        if id(tensor) not in shards:
            shards[id(tensor)] = _local(tensor).clone() if copy else _local(tensor)
    return {name: shards[id(tensor)] for name, tensor in state.items()}


def local_optimizer_state(optimizer: torch.optim.Optimizer) -> dict:
    """This process's shard of the optimizer's state, keyed by parameter index as a plain
    Optimizer.state_dict() is (its parameters are the model's trainable ones in order)."""
    state = optimizer.state_dict()
    return {"state": {i: {key: _local(value) for key, value in entry.items()} for i, entry in state["state"].items()},
            "param_groups": state["param_groups"]}


def load_local_model_state(model: nn.Module, state: dict[str, torch.Tensor]) -> None:
    """This process's shards (`local_model_state`, written by a run of as many processes) into it."""
    with torch.no_grad():
        for name, tensor in model.state_dict(keep_vars=True).items():
            local = tensor.to_local() if hasattr(tensor, "to_local") else tensor
            if name not in state or state[name].shape != local.shape:
                got = tuple(state[name].shape) if name in state else "nothing"
                raise NmtError(f"{name}: the checkpoint's shard has {got}, this process holds {tuple(local.shape)}")
            local.copy_(state[name])


def load_local_optimizer_state(optimizer: torch.optim.Optimizer, state: dict) -> None:
    """This process's shard of the optimizer's state (`local_optimizer_state`) into it: each
    per-parameter tensor made a shard of its parameter again (a DTensor placed as it is)."""
    from torch.distributed.tensor import DTensor

    parameters = [p for group in optimizer.param_groups for p in group["params"]]

    def placed(value, parameter):
        if isinstance(value, torch.Tensor) and value.dim() > 0 and isinstance(parameter, DTensor):
            return DTensor.from_local(value.to(parameter.to_local().device), parameter.device_mesh, parameter.placements,
                                      shape=parameter.shape, stride=parameter.stride())
        return value

    optimizer.load_state_dict({"state": {i: {key: placed(value, parameters[i]) for key, value in entry.items()}
                                         for i, entry in state["state"].items()},
                               "param_groups": state["param_groups"]})


def unsharded_copy(model: nn.Module, is_main: bool, device: torch.device) -> nn.Module | None:
    """A plain copy of the sharded Transformer on the first process (None on the others), for what
    runs there alone (validation, decoding): every process takes part in gathering its weights."""
    state = full_model_state(model)
    if not is_main:
        return None
    copy = transformer_from_weights(model.cfg, model.src_embed.tokens.num_embeddings,
                                    model.tgt_embed.tokens.num_embeddings, state)
    return copy.to(device)
