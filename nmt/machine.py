"""`nmt env`: what this machine and installation offer nmt, for a user who compares speeds or
reports a problem. Versions; the CPU by name, family and model (one name, "AMD EPYC", covers
generations whose fp32 rates through oneDNN differ twofold: 256-bit vector units or 512-bit), its
vector instructions and whether it multiplies bf16; each GPU; what train.precision and
decode.precision `auto` become on each device; and which optional extras are installed."""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path

# Extras a user installs (pyproject.toml's optional-dependencies, less the developers' own).
_NOT_FOR_USERS = {"dev", "bench"}


def cpu_identity(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict:
    """The first processor's "model name", and its family and model numbers ({"cpu_family": 25,
    "cpu_model": 17}), from `cpuinfo` ({} where there is none)."""
    if not cpuinfo.is_file():
        return {}
    fields: dict[str, str] = {}
    for line in cpuinfo.read_text().splitlines():
        if not line.strip():
            break  # the first processor's block ends
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    identity = {"model name": fields["model name"]} if "model name" in fields else {}
    for key, name in (("cpu family", "cpu_family"), ("model", "cpu_model")):
        if fields.get(key, "").isdigit():
            identity[name] = int(fields[key])
    return identity


def extras(requirements: list[str] | None = None) -> dict[str, list[str]]:
    """Each optional extra of nmt's (`pip install 'nmt[NAME]'`) and the distributions it needs that
    are not installed ([] where it is installed whole), from nmt's own metadata (`requirements`:
    its requirement strings, for a test)."""
    from importlib.metadata import PackageNotFoundError, requires, version

    if requirements is None:
        try:
            requirements = requires("nmt") or []
        except PackageNotFoundError:  # a tree on PYTHONPATH, not installed
            return {}
    found: dict[str, list[str]] = {}
    for requirement in requirements:
        extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", requirement)
        if not extra or extra[1] in _NOT_FOR_USERS:
            continue
        name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement.strip())[0]
        missing = found.setdefault(extra[1], [])
        try:
            version(name)
        except PackageNotFoundError:
            missing.append(name)
    return dict(sorted(found.items()))


def machine_report() -> dict:
    """What `nmt env` prints (`--json`: this dict)."""
    import torch

    import nmt
    from nmt.devices import datasheet_bf16_tflops, usable_cores
    from nmt.model.precision import bf16_arithmetic, inference_precision, training_precision

    cpu_device = torch.device("cpu")
    identity = cpu_identity()
    cpu = {"name": identity.get("model name") or platform.processor() or platform.machine(),
           "family": identity.get("cpu_family"), "model": identity.get("cpu_model"),
           "cores": os.cpu_count(), "usable_cores": usable_cores(), "torch_threads": torch.get_num_threads(),
           "vectors": torch.backends.cpu.get_cpu_capability(), "bf16_arithmetic": bf16_arithmetic(cpu_device)}
    gpus = []
    for index in range(torch.cuda.device_count() if torch.cuda.is_available() else 0):
        properties = torch.cuda.get_device_properties(index)
        peak, _ = datasheet_bf16_tflops(properties.name)
        with torch.cuda.device(index):  # (bf16_arithmetic asks of the current GPU)
            native_bf16 = bf16_arithmetic(torch.device("cuda", index)) is not None
        gpus.append({"index": index, "name": properties.name, "capability": f"{properties.major}.{properties.minor}",
                     "memory_gb": round(properties.total_memory / 2**30, 1), "bf16_arithmetic": native_bf16,
                     "datasheet_bf16_dense_tflops": peak})
    devices = [cpu_device] + ([torch.device("cuda", 0)] if gpus else [])
    auto = {device.type: {"train.precision": training_precision("auto", device)[0],
                          "decode.precision": inference_precision("auto", device)} for device in devices}
    return {"nmt": nmt.__version__, "python": platform.python_version(), "torch": torch.__version__,
            "cuda": torch.version.cuda, "cpu": cpu, "gpus": gpus, "auto": auto, "extras": extras()}


def describe(report: dict) -> list[str]:
    """`machine_report` as lines for a person."""
    cpu = report["cpu"]
    generation = f" (family {cpu['family']}, model {cpu['model']})" if cpu["family"] is not None else ""
    lines = [f"nmt {report['nmt']}, Python {report['python']}, torch {report['torch']}"
             + (f" (CUDA {report['cuda']})" if report["cuda"] else ""),
             f"CPU: {cpu['name']}{generation}, {cpu['cores']} cores ({cpu['usable_cores']} usable), "
             f"torch's kernels for {cpu['vectors']}, bf16 arithmetic: {cpu['bf16_arithmetic'] or 'none (emulated)'}"]
    for gpu in report["gpus"]:
        lines.append(f"GPU {gpu['index']}: {gpu['name']}, compute capability {gpu['capability']}, {gpu['memory_gb']} GB, "
                     f"bf16 arithmetic: {'yes' if gpu['bf16_arithmetic'] else 'no (emulated)'}")
    if not report["gpus"]:
        lines.append("GPU: none that torch sees")
    for device, choices in report["auto"].items():
        lines.append(f"auto on {device}: " + ", ".join(f"{key} {value}" for key, value in choices.items()))
    installed = [name for name, missing in report["extras"].items() if not missing]
    absent = [name for name, missing in report["extras"].items() if missing]
    lines.append(f"extras installed: {', '.join(installed) or 'none'}")
    if absent:
        lines.append(f"extras not installed: {', '.join(absent)} (pip install 'nmt[NAME]')")
    return lines
