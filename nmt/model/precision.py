"""Numeric precision on a device, set for the code that needs it and restored after: autocast for
bf16/fp16, TF32 (fp32 matmuls on tensor cores) and the choice of CUDA attention kernels as scoped
switches rather than process-wide flags, so that a training run's TF32 never leaks into a later
fp32 comparison or decode."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

AUTOCAST_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def bf16_arithmetic(device: torch.device) -> str | None:
    """What multiplies bf16 natively on `device`, or None where nothing does: a CUDA GPU of compute
    capability 8.0 or more, a CPU with AVX512-BF16 (AMD Zen 4 and later, Intel Cooper Lake) or
    AMX-BF16 (Intel Sapphire Rapids and later). Elsewhere bf16 is emulated, slower than fp32."""
    if device.type == "cuda":
        return "this GPU's bf16" if torch.cuda.is_bf16_supported(including_emulation=False) else None
    if device.type != "cpu":
        return None
    capabilities = torch.cpu.get_capabilities() if hasattr(torch.cpu, "get_capabilities") else {}
    return next((name for key, name in (("amx_bf16", "AMX-BF16"), ("avx512_bf16", "AVX512-BF16"))
                 if capabilities.get(key)), None)


def emulated(precision: str, device: torch.device) -> bool:
    """Whether `precision` (resolved: fp32, bf16, fp16) runs emulated on `device`, slower than fp32:
    bf16 on a CPU without bf16 arithmetic, fp16 on any CPU."""
    return device.type == "cpu" and precision != "fp32" and not (precision == "bf16" and bf16_arithmetic(device))


def training_precision(setting: str, device: torch.device) -> tuple[str, str | None]:
    """train.precision as a run uses it on `device`: `setting` itself, or for auto bf16 where the
    device multiplies bf16 natively and fp32 elsewhere; and, for auto, why (for the run's log).

    On a 2-core AMD EPYC (Zen 4) host a bf16 update of 3+3 layers of 256 took 0.60-0.70 of an fp32
    one, and of the demo's 4+4 layers of 128 0.79-0.99 (within the host's noise); the logged
    losses agreed to 4e-4 after 100-300 updates (experiments/precision/README.md, "bf16 on a CPU")."""
    if setting != "auto":
        return setting, None
    arithmetic = bf16_arithmetic(device)
    if arithmetic:
        return "bf16", f"train.precision auto: bf16 ({arithmetic} dot products)"
    return "fp32", f"train.precision auto: fp32 (no bf16 arithmetic on {device.type})"


def inference_precision(setting: str, device: torch.device) -> str:
    """decode.precision as translation and scoring use it on `device`: `setting` itself, or for
    auto bf16 on a GPU that multiplies bf16 natively and fp32 elsewhere, CPUs included.

    A CPU with bf16 arithmetic translates faster in bf16 (the linear layers' large products in
    bf16 through oneDNN, the small ones and attention in fp32: nmt.model.onednn_linear,
    nmt.model.matmul_attention): on a 2-core AMD EPYC (Zen 4) host a 256-wide model translated
    test_2016_flickr in 0.76 of the fp32 time and the demo's 128-wide one in 0.88, at 0.06-0.10
    BLEU less, and a base-shaped model's search took 0.65 of its fp32 time (experiments/precision/
    README.md, "bf16 translation on a CPU"). But 7-9 % of the lines came out otherwise than in fp32, and so
    otherwise than through the model's CTranslate2 or ONNX export, and than on a CPU without bf16:
    auto keeps a CPU's translations those of the model as trained, whichever host runs it, as
    CTranslate2's and Marian's defaults do; decode.precision bf16 asks for the speed."""
    if setting != "auto":
        return setting
    return "bf16" if device.type == "cuda" and bf16_arithmetic(device) else "fp32"


def autocast(device: torch.device, precision: str) -> contextlib.AbstractContextManager:
    """Autocast to `precision` (bf16, fp16) on `device`; fp32 runs as it is."""
    if precision not in AUTOCAST_DTYPES:
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=AUTOCAST_DTYPES[precision])


class _AutocastPaused:
    """Autocast off for the block on `device_type`, where it was on; as it was afterwards."""

    __slots__ = ("device_type", "was_enabled")

    def __init__(self, device_type: str):
        self.device_type = device_type

    def __enter__(self) -> None:
        self.was_enabled = torch.is_autocast_enabled(self.device_type)
        torch.set_autocast_enabled(self.device_type, False)

    def __exit__(self, *exc) -> None:
        torch.set_autocast_enabled(self.device_type, self.was_enabled)


def autocast_off(device_type: str) -> contextlib.AbstractContextManager:
    """`torch.autocast(device_type, enabled=False)` for a block inside an autocast region, where
    its arithmetic is fp32 (a layer norm, a small product, a decoding step's attention). In eager
    mode a plain switch: torch.autocast's context costs about 10 µs of Python to open and close,
    and bf16 decoding on a CPU opened 11 of them per step of the demo's model, enough to make a
    request of one line 16 % slower than in fp32 (docs/serving.md, "Compiled decoding steps"). Under
    torch.compile, torch.autocast itself, which dynamo traces."""
    if torch.compiler.is_compiling():
        return torch.autocast(device_type, enabled=False)
    return _AutocastPaused(device_type)


@contextlib.contextmanager
def tf32(device: torch.device, enabled: bool) -> Iterator[None]:
    """TF32 on (or off) for CUDA fp32 matmuls and convolutions inside the block; the process's
    previous setting afterwards. Nothing changes on other devices."""
    if device.type != "cuda":
        yield
        return
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


@contextlib.contextmanager
def attention_kernels(device: torch.device) -> Iterator[None]:
    """CUDA attention without cuDNN's kernel inside the block (FlashAttention, memory-efficient and
    math stay); the process's previous setting afterwards. Nothing changes on other devices.

    In bf16/fp16, `F.scaled_dot_product_attention` prefers cuDNN's kernel on Hopper, and cuDNN
    builds an execution plan for every new (batch, heads, length) shape. Token-based batches and
    decoding steps bring new shapes all the time: measured on an H200 (docs/gpu.md), the base
    model's bf16 update took 0.64-0.71 s while its shapes were new and 0.069 s once they were
    not, against 0.087-0.092 s from the first update without cuDNN."""
    if device.type != "cuda":
        yield
        return
    saved = torch.backends.cuda.cudnn_sdp_enabled()
    torch.backends.cuda.enable_cudnn_sdp(False)
    try:
        yield
    finally:
        torch.backends.cuda.enable_cudnn_sdp(saved)
