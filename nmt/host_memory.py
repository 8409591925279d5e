"""Keep freed CPU memory in the process for reuse, instead of handing it back to the kernel.

glibc's malloc serves large blocks with mmap and gives them back on free, and trims the heap
whenever its free top grows past twice the largest block seen. A training step frees most of
what it allocated (activations, gradients), so the next step takes the same memory back from
the kernel page by page (tens of thousands of page faults per update on the bench-small shape;
bench/speed.md). Serving every block up to 32 MB (glibc's maximum) from the heap
and never trimming it brings that to about zero. The cost is that the process keeps its peak
memory until it exits, which suits a training run and a translation process alike (beam search
frees and re-allocates its logits every step). (Blocks above 32 MB still come from mmap;
the largest, the output layer's logits, are never built whole: see nmt.model.output_loss.)
jemalloc or tcmalloc preloaded with LD_PRELOAD do the same; with them this changes nothing.

A heap also keeps freed blocks that the next ones do not fit into: LoRA fine-tuning of a
361M-parameter model, estimated at 3.2 GB, holds 4.8 GB (bench/results/large_models.json).
Where that is more than the machine has, glibc's own setting in the environment wins over this
one: MALLOC_MMAP_THRESHOLD_=1048576 gives every block of 1 MB or more back on free (3.3 GB for
that run), at the cost of the page faults above (12 % more time there, 43 % with every weight
trained).
"""

from __future__ import annotations

import ctypes
import os
import platform

# mallopt parameters, from glibc's malloc.h
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_LARGEST_HEAP_BLOCK = 32 * 2**20  # glibc refuses a larger mmap threshold
_NEVER_TRIM = 2**31 - 1


def keep_freed_memory() -> bool:
    """Set glibc's malloc to reuse freed memory; False where the C library is not glibc, or where
    the environment sets glibc's malloc itself (MALLOC_MMAP_THRESHOLD_=1048576, say: large blocks
    given back on free, for a run short of memory), which wins."""
    if not nmt_sets_malloc():
        return False
    libc = ctypes.CDLL(None)
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, _LARGEST_HEAP_BLOCK)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, _NEVER_TRIM))


def nmt_sets_malloc() -> bool:
    """Whether keep_freed_memory sets the C library's malloc: glibc's, not set by the environment
    already (its MALLOC_*_ variables or malloc tunables)."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    return not (any(os.environ.get(f"MALLOC_{name}_") for name in ("MMAP_THRESHOLD", "TRIM_THRESHOLD", "TOP_PAD", "MMAP_MAX"))
                or "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", ""))


def anonymous_memory() -> int | None:
    """The bytes of anonymous memory this process holds (Linux's RssAnon: what the machine must
    keep for it, not file pages the kernel may drop); None where /proc does not say."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None
