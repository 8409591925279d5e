"""One `nmt train` per output directory at a time: a second one would interleave its checkpoints
with the first's (`out/.train.lock`, nmt.file_lock)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from nmt.file_lock import held
from nmt.files import cannot_write
from nmt.train.distributed import launched_rank


@contextmanager
def exclusive_run(out: Path) -> Iterator[None]:
    """Hold `out/.train.lock` for the duration; a directory another training holds is an error.
    Under torchrun only rank 0 takes it (the ranks of one run share the directory)."""
    if launched_rank() != 0:
        yield
        return
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise cannot_write(out / ".train.lock", e) from None
    with held(out / ".train.lock", lambda owner: f"{out}: another `nmt train` is running on this directory{owner}; "
              "wait for it to finish or stop it first"):
        yield
