"""Several processes under `torchrun`: the process group, and who does what.

torchrun sets RANK, LOCAL_RANK and WORLD_SIZE; without them training runs as one process and
nothing here communicates. NCCL on GPUs, gloo on CPU. Small host-side values (clocks, stop flags)
travel over a gloo group of their own, so that agreeing on them never waits for the GPU.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist

from nmt.errors import NmtError


def batches_per_rank(update_freq: int, max_tokens: int, world_size: int) -> int:
    """Each of K processes takes update_freq / K of an update's batches, so the update is
    update_freq × max_tokens tokens whatever K is. K must divide update_freq: otherwise an error
    that names the settings keeping the recipe's batch."""
    if update_freq % world_size == 0:
        return update_freq // world_size
    per_process = -(-update_freq // world_size)  # the fewest batches per process that keep every process busy
    freq = per_process * world_size
    tokens = update_freq * max_tokens
    raise NmtError(
        f"train.update_freq={update_freq} batches cannot be shared by {world_size} processes; to keep the "
        f"recipe's {update_freq} × {max_tokens:,} = {tokens:,} tokens per update on {world_size} processes, "
        f"add --set train.update_freq={freq} --set train.max_tokens={round(tokens / freq)}")


@dataclass
class World:
    rank: int = 0
    local_rank: int = 0
    size: int = 1
    host_group: object = None  # gloo group for host values (None: the default group is gloo already)

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.size > 1

    def barrier(self) -> None:
        if self.distributed:
            dist.barrier()

    def share_from_main(self, value):
        """Rank 0's value of a small picklable object, on every rank."""
        if not self.distributed:
            return value
        box = [value]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def gather_objects(self, value) -> list:
        if not self.distributed:
            return [value]
        out = [None] * self.size
        dist.all_gather_object(out, value)
        return out

    def max(self, values: list[float]) -> list[float]:
        """Each value's maximum over the ranks (e.g. the slowest clock, or a stop flag seen by one
        of them); several values share one all-reduce, on the host."""
        if not self.distributed:
            return list(values)
        t = torch.tensor(values, dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=self.host_group)
        return t.tolist()

    def sum(self, values: torch.Tensor) -> torch.Tensor:
        if self.distributed:
            dist.all_reduce(values)
        return values

    def close(self, together: bool = True) -> None:
        """Leave the process group. `together`: after a normal end, wait until every rank is done with
        it; after an error, the other ranks may be stuck elsewhere, so leave at once."""
        if self.distributed and dist.is_initialized():
            if together:
                dist.barrier()
            dist.destroy_process_group()


def _attempt_store(world_size: int) -> dist.Store | None:
    """The store the process group meets in, with keys of this attempt only.

    torchrun's agent store outlives worker restarts (`--max-restarts`), and the process group keys
    its addresses by rank alone: the workers of a restarted run could read the addresses of the
    ones they replace, and fail to connect. Every
    worker bumps a counter once when it starts, so attempt a is the a-th group of `world_size`
    arrivals, and each attempt meets under a prefix of its own. None outside torchrun: env://.
    """
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True":
        return None
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False,
                          timeout=timedelta(minutes=10))
    attempt = (store.add("nmt/workers_started", 1) - 1) // world_size
    return dist.PrefixStore(f"nmt/attempt_{attempt}", store)


def launched_rank() -> int:
    """This process's rank as torchrun set it (0 outside torchrun), before any process group exists."""
    return int(os.environ.get("RANK", "0"))


def join_world(device_name: str) -> tuple[World, str]:
    """Join the process group torchrun describes (if any); return the world and this rank's device."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return World(), device_name
    world = World(launched_rank(), int(os.environ.get("LOCAL_RANK", "0")), size)
    use_cuda = torch.cuda.is_available() and device_name in ("auto", "cuda")
    if use_cuda:
        torch.cuda.set_device(world.local_rank)
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if use_cuda else "gloo", store=_attempt_store(size),
                                rank=world.rank, world_size=size)
    if dist.get_backend() != "gloo":
        world.host_group = dist.new_group(backend="gloo")
    return world, (f"cuda:{world.local_rank}" if use_cuda else "cpu" if device_name == "auto" else device_name)
