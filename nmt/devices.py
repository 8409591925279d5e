"""The device and the CPU threads a command runs on, from what the user wrote: a name torch cannot
read, a device this machine lacks, or a negative number of threads is a one-line error naming
the option, before anything loads. And a GPU's datasheet peak, which MFU is measured against."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from nmt.errors import NmtError

if TYPE_CHECKING:
    import torch

T = TypeVar("T")


def resolve_device(name: str, option: str = "--device") -> torch.device:
    """`name` (cpu, cuda, cuda:1, mps, or auto: CUDA where there is one) as a torch device that
    exists here; `option` names the setting in errors (--device, train.device)."""
    import torch  # here, not above: `nmt score` checks --threads without a second of torch's import

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        raise NmtError(f"{option} {name}: not a device (cpu, cuda, cuda:1, ..., or auto)") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise NmtError(f"{option} {name}: CUDA is not available on this machine")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise NmtError(f"{option} {name}: this machine has {torch.cuda.device_count()} CUDA device(s), "
                           "numbered from 0")
    elif device.type == "mps":
        if not torch.backends.mps.is_available():
            raise NmtError(f"{option} {name}: Apple's MPS is not available on this machine")
    elif device.type != "cpu":
        raise NmtError(f"{option} {name}: nmt runs on cpu, cuda or mps")
    return device


def check_threads(threads: int, option: str = "--threads") -> None:
    if threads < 0:
        raise NmtError(f"{option} {threads}: a number of threads (0: torch's default)")


def use_threads(threads: int, option: str = "--threads") -> None:
    """torch's CPU threads: `threads`, or torch's default for 0."""
    check_threads(threads, option)
    if threads:
        import torch

        torch.set_num_threads(threads)


def on_a_thread_that_ends(work: Callable[[], T]) -> T:
    """work() on a thread of its own that ends with it: its result returned, its exception raised.

    For torch's CPU work done before other threads take over the model (a server's workers).
    OpenMP (libgomp, torch's) keeps a team of threads for each thread that ran a parallel region,
    until that thread ends; while there are more such threads than cores, a waiting thread spins
    100 times instead of 300,000 before it sleeps (libgomp's manual, GOMP_SPINCOUNT), and each
    small operator then waits for a wake-up. A server that loaded its model on its main thread
    decoded 2.3 times slower on its worker's thread (`nmt serve --workers 1` on 2 cores); loaded
    on a thread that ended, as fast as on the main thread."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["result"] = work()
        except BaseException as e:  # raised again on the calling thread
            outcome["error"] = e

    thread = threading.Thread(target=run, name="nmt-load", daemon=True)  # Ctrl-C need not wait for it
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity, e.g. under taskset or a container's
    cpuset), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def datasheet_bf16_tflops(device_name: str) -> tuple[float | None, str]:
    """NVIDIA's bf16 dense peak (TFLOP/s, no sparsity) for a device name as torch reports it, and
    the model it was read as; (None, "unknown") for a device not listed: never a guess."""
    name = device_name.upper()
    for pattern, model, peak in (
        (r"H100.*NVL", "H100 NVL", 835.0), (r"H100.*PCIE", "H100 PCIe", 756.0),
        (r"H100.*(SXM|HBM3)", "H100 SXM", 989.0), (r"H200.*NVL", "H200 NVL", 835.0), (r"H200", "H200 SXM", 989.0),
        (r"A100", "A100", 312.0),
    ):
        if re.search(pattern, name):
            return peak, model
    return None, "unknown"


_one_thread = {"lock": threading.Lock(), "inside": 0, "threads": 0}  # translations in flight (a server's threads)


@contextlib.contextmanager
def torch_on_one_thread():
    """torch on one thread while an engine with threads of its own (onnxruntime, CTranslate2)
    translates: torch's part beside it (a step's top-k over the rows, word alignments) is small,
    and a team of torch's OpenMP threads beside theirs makes their searches wait (measured on 2
    cores: beam search of 4 over the ONNX graphs twice as slow; CTranslate2's 1.5-2.6 times as
    slow for the rest of the process once torch's team exists). torch's thread count is the
    process's: the first translation in sets it, the last out restores it."""
    import torch

    with _one_thread["lock"]:
        if _one_thread["inside"] == 0:
            _one_thread["threads"] = torch.get_num_threads()
            torch.set_num_threads(1)
        _one_thread["inside"] += 1
    try:
        yield
    finally:
        with _one_thread["lock"]:
            _one_thread["inside"] -= 1
            if _one_thread["inside"] == 0:
                torch.set_num_threads(_one_thread["threads"])
