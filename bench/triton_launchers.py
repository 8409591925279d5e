"""How the compiled step's Triton kernels are launched, in this process: a census of inductor's
kernel objects (torch._inductor.runtime.triton_heuristics.CachingAutotuner).

Each kernel keeps the launchers of the configurations still in the running; a launcher is either
inductor's static CUDA launcher (a C++ call, `_is_static`) or a Python function generated around
Triton's own. On the fifth GPU day the base update's host took 0.048 s to issue its 984 kernels
in the process that compiled them cold and 0.070 and 0.062 s in two that loaded them from the
cache: where the cached ones hold more Python launchers (or kernels not yet tuned to one
launcher), that is where the host's time goes. Reads only what is already imported: None where
inductor has made no Triton kernel (a CPU).
"""

from __future__ import annotations

import gc
import sys


def launcher_census() -> dict | None:
    """{"kernels", "static_launchers", "python_launchers", "kernels_still_tuning"} over the
    CachingAutotuner objects alive in this process; None where there are none."""
    module = sys.modules.get("torch._inductor.runtime.triton_heuristics")
    kind = getattr(module, "CachingAutotuner", None)
    if kind is None or "triton" not in sys.modules:  # (without Triton, no kernel to count: no scan of the heap)
        return None
    # gc.get_objects() leaves out what gc.freeze froze: bench's processes freeze only at torch's
    # import (nmt.startup), before inductor makes any kernel, so every kernel is still seen here.
    kernels = [obj for obj in gc.get_objects() if issubclass(type(obj), kind)]  # (isinstance would ask proxies)
    if not kernels:
        return None
    launchers = [launcher for kernel in kernels for launcher in getattr(kernel, "launchers", [])]
    static = sum(bool(getattr(launcher, "_is_static", False)) for launcher in launchers)
    return {"kernels": len(kernels), "static_launchers": static, "python_launchers": len(launchers) - static,
            "kernels_still_tuning": sum(len(getattr(kernel, "launchers", [])) > 1 for kernel in kernels)}
