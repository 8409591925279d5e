"""Several processes under `torchrun`: the process group, and who does what.

torchrun sets RANK, LOCAL_RANK and WORLD_SIZE; without them training runs as one process and
nothing here communicates. NCCL on GPUs, gloo on CPU.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class World:
    rank: int = 0
    local_rank: int = 0
    size: int = 1

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

    def max(self, values: list[float], device: torch.device) -> list[float]:
        """Each value's maximum over the ranks (e.g. the slowest clock, or a stop flag seen by one
        of them); several values share one all-reduce."""
        if not self.distributed:
            return list(values)
        t = torch.tensor(values, dtype=torch.float64, device=device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
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


def join_world(device_name: str) -> tuple[World, str]:
    """Join the process group torchrun describes (if any); return the world and this rank's device."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return World(), device_name
    world = World(int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0")), size)
    use_cuda = torch.cuda.is_available() and device_name in ("auto", "cuda")
    if use_cuda:
        torch.cuda.set_device(world.local_rank)
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if use_cuda else "gloo")
    return world, (f"cuda:{world.local_rank}" if use_cuda else "cpu" if device_name == "auto" else device_name)
