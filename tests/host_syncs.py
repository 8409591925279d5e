"""Count the operations that make a GPU's host wait for the device, while running on a CPU.

On CUDA each of these copies a value computed on the device back to the host, so the host stops
queueing work until the device has caught up: `.item()`/`float()`/`bool()` (all
`_local_scalar_dense`), `nonzero`, boolean-mask indexing (a data-dependent size), `torch.equal`
and `.tolist()`. Counting them on the CPU finds the syncs a GPU run would have.
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten
_READS = {aten._local_scalar_dense.default, aten.nonzero.default, aten.is_nonzero.default,
          aten.masked_select.default, aten.equal.default}


def _has_boolean_index(args) -> bool:
    indices = args[1] if len(args) > 1 else ()
    return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in indices)


class HostSyncCounter(TorchDispatchMode):
    """`with HostSyncCounter() as syncs: ...`; then `syncs.count` and `syncs.ops` (what was counted)."""

    def __init__(self):
        super().__init__()
        self.ops: list[str] = []
        self._tolist = None

    @property
    def count(self) -> int:
        return len(self.ops)

    def __enter__(self):
        # .tolist() reads the data without passing through the dispatcher: count it by hand.
        self._tolist = torch.Tensor.tolist
        counter, original = self, self._tolist

        def counted_tolist(tensor):
            counter.ops.append("tolist")
            return original(tensor)

        torch.Tensor.tolist = counted_tolist
        return super().__enter__()

    def __exit__(self, *exc):
        torch.Tensor.tolist = self._tolist
        return super().__exit__(*exc)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in _READS or (func is aten.index.Tensor and _has_boolean_index(args)):
            self.ops.append(str(func))
        return func(*args, **(kwargs or {}))
