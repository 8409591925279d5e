"""One `nmt train` per output directory at a time: a second one would interleave its checkpoints
with the first's. The lock is the operating system's (flock), so it goes away with the process
that held it, however that process ended; filesystems without locks train unguarded."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from nmt.errors import NmtError
from nmt.files import cannot_write
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
    lock = out / ".train.lock"
    try:
        out.mkdir(parents=True, exist_ok=True)
        handle = open(lock, "a+", encoding="utf-8")
    except OSError as e:
        raise cannot_write(lock, e) from None
    with handle:
        locked = _try_lock(handle, out)
        if locked:
            try:  # the holder's pid, for the error another run gets; written past Python's buffer,
                # so that a refused write (a full disk) is raised here, not again when the file closes
                if os.fstat(handle.fileno()).st_size:  # an earlier holder's
                    os.ftruncate(handle.fileno(), 0)
                os.write(handle.fileno(), f"{os.getpid()}\n".encode())
            except OSError as e:
                raise cannot_write(lock, e) from None
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
