"""One `nmt train` per output directory at a time: a second one would interleave its checkpoints
with the first's. The lock is the operating system's (flock), so it goes away with the process
that held it, however that process ended; filesystems without locks train unguarded."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from nmt.errors import NmtError
from nmt.train.distributed import launched_rank

try:
    import fcntl
except ImportError:  # not on POSIX: no lock
    fcntl = None


@contextmanager
def exclusive_run(out: Path) -> Iterator[None]:
    """Hold `out/.train.lock` for the duration; a directory another training holds is an error.
    Under torchrun only rank 0 takes it (the ranks of one run share the directory)."""
    if fcntl is None or launched_rank() != 0:
        yield
        return
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".train.lock", "a+", encoding="utf-8") as handle:
        locked = _try_lock(handle, out)
        if locked:
            handle.seek(0)
            handle.truncate()
            handle.write(f"{os.getpid()}\n")
            handle.flush()
        try:
            yield
        finally:
            if locked:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _try_lock(handle, out: Path) -> bool:
    """True once locked; False where the filesystem has no locks; an error where another holds it."""
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        handle.seek(0)
        owner = handle.read().strip()
        raise NmtError(f"{out}: another `nmt train` is running on this directory{f' (pid {owner})' if owner else ''}; "
                       "wait for it to finish or stop it first") from None
    except OSError:
        return False
