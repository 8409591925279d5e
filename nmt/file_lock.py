"""One process at a time on a file or directory: a lock file held with the operating system's
lock (flock), so that it goes away with the process that held it, however that process ended.
A second process is refused, not made to wait; filesystems without locks run unguarded."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from nmt.errors import NmtError
from nmt.files import cannot_write, hidden_beside

try:
    import fcntl
except ImportError:  # not on POSIX: no lock
    fcntl = None


@contextmanager
def held(lock: Path, refusal: Callable[[str], str], remove: bool = False, named: Path | None = None) -> Iterator[None]:
    """Hold `lock` (made where missing) for the duration, with this process's pid in it. Where
    another process holds it: an NmtError of `refusal(" (pid N)")` (or of `refusal("")` where the
    holder wrote no pid). With `remove`, the lock file goes when the holder is done. A write the
    system refuses is an error naming `named` (the file the lock guards), else the lock."""
    named = named or lock
    if fcntl is None:
        yield
        return
    while True:
        try:
            handle = open(lock, "a+", encoding="utf-8")
        except OSError as e:
            raise cannot_write(named, e) from None
        locked = _try_lock(handle, refusal)
        if not (locked and remove) or _still_named(handle, lock):
            break
        handle.close()  # a holder that removes the file did so between our open and our lock: take the new one
    with handle:
        if locked:
            _write_pid(handle, named)
        try:
            yield
        finally:
            if locked:
                if remove:
                    lock.unlink(missing_ok=True)  # before the lock goes: no one can lock a name gone
                fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def sole_writer(output: Path, doing: str = "translating into it") -> Iterator[None]:
    """This process the only one writing `output` (a file, or a folder built whole) while the
    block runs: a second would mix its lines with the first's, or remove the folder it builds. The
    lock is `.OUTPUT.lock` beside it, gone when the block ends; `doing`: what the refusal says the
    other process is doing."""
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise cannot_write(output, e) from None
    with held(hidden_beside(output, "lock"), lambda owner: f"{output}: another nmt is {doing}{owner}; "
              "wait for it to finish or stop it first", remove=True, named=output):
        yield


def _try_lock(handle, refusal: Callable[[str], str]) -> bool:
    """True once locked; False where the filesystem has no locks; an error where another holds it."""
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        handle.seek(0)
        owner = handle.read().strip()
        handle.close()
        raise NmtError(refusal(f" (pid {owner})" if owner else "")) from None
    except OSError:
        return False


def _still_named(handle, lock: Path) -> bool:
    """Whether the file held is still the one `lock` names."""
    try:
        return os.path.samestat(os.fstat(handle.fileno()), os.stat(lock))
    except FileNotFoundError:
        return False


def _write_pid(handle, named: Path) -> None:
    """The holder's pid, for the error another process gets; written past Python's buffer, so that
    a refused write (a full disk) is raised here, not again when the file closes."""
    try:
        if os.fstat(handle.fileno()).st_size:  # an earlier holder's
            os.ftruncate(handle.fileno(), 0)
        os.write(handle.fileno(), f"{os.getpid()}\n".encode())
    except OSError as e:
        raise cannot_write(named, e) from None
