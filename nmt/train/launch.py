"""`nmt train --nproc K`: the run's settings and inputs checked in this process, then the same
command under torchrun with K processes on this machine."""

from __future__ import annotations

import os
import tempfile

from nmt.config import Recipe
from nmt.errors import NmtError
from nmt.train.checkpointing import check_parent
from nmt.train.distributed import batches_per_rank
from nmt.train.training_data import check_prepared


def relaunch_under_torchrun(nproc: int, argv: list[str], recipe: Recipe) -> int:
    """`nmt train ... --nproc K`: the same command line, without --nproc, under torchrun with K
    processes on this machine; returns 0, or the exit code of the first process that failed (2 for
    bad input, as in one process). torchrun runs inside this process: no second interpreter to
    start, and a signal sent to `nmt train` reaches its agent, which passes it on to the K
    processes. `recipe` is checked first, so that a batch K processes cannot share, a step not yet
    run (`nmt tokenizer`, `nmt prepare`) or a parent checkpoint not there is one line before
    anything starts."""
    if "WORLD_SIZE" in os.environ:
        raise NmtError("--nproc is for a plain `nmt train`; under torchrun, leave it out")
    batches_per_rank(recipe.train.update_freq, recipe.train.max_tokens, nproc)
    check_prepared(recipe)
    check_parent(recipe)
    args, skip_value = [], False
    for arg in argv:
        if skip_value:
            skip_value = False
        elif arg == "--nproc":
            skip_value = True
        elif not arg.startswith("--nproc="):
            args.append(arg)
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import main as torchrun

    # torchrun's agent makes a folder of (empty, as nothing is redirected) log folders per run; left
    # to itself it makes one in /tmp and never removes it
    try:
        with tempfile.TemporaryDirectory(prefix="nmt-torchrun-") as logs:
            torchrun(["--standalone", f"--nproc-per-node={nproc}", f"--log-dir={logs}", "-m", "nmt", *args])
    except ChildFailedError as failed:  # torchrun has logged which process failed and how
        return failed.get_first_failure()[1].exitcode or 1
    except SignalException:  # passed on to the processes, which saved a checkpoint
        return 130  # as `nmt train` in one process
    return 0
