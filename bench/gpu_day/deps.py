"""The packages nmt needs beyond a GPU machine's own (pydantic and its dependencies), unpacked from
the wheels in bench/gpu_day/wheels/ into a private folder that goes on PYTHONPATH: no pip, no resolver, no
package index, and nothing in the machine's own site-packages touched.

    python3 bench/gpu_day/deps.py WHEELS_DIR TARGET_DIR

Standard library only (it runs before anything else is importable). A wheel is unpacked when its
distribution is missing from the interpreter, or older than another carried wheel requires (e.g.
typing_extensions for pydantic); a machine's newer copy is left to win. Of a package with builds
for several Pythons, the build for this interpreter's tag is taken. A missing or empty wheel
folder, or no build for this Python, is a one-line error (exit 2): never a silent skip.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
import zipfile
from pathlib import Path


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version.split("+")[0])[:4])


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_name_version(wheel: Path) -> tuple[str, str, str]:
    """(distribution, version, python tag) from a wheel's file name."""
    name, version, python_tag = wheel.name.split("-")[:3]
    return canonical(name), version, python_tag


def requirements(wheel: Path) -> list[tuple[str, str, str]]:
    """The unconditional `Requires-Dist` lines of a wheel as (name, operator, version)."""
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(metadata).decode("utf-8")
    found = []
    for line in text.splitlines():
        if not line.startswith("Requires-Dist:") or ";" in line:  # markers: extras, other platforms
            continue
        match = re.match(r"Requires-Dist:\s*([A-Za-z0-9_.-]+)\s*\(?\s*(>=|==)\s*([0-9][^,\s)]*)", line)
        if match:
            found.append((canonical(match[1]), match[2], match[3]))
    return found


def installed_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def choose(wheels: list[Path]) -> list[Path]:
    """The wheels to unpack for this interpreter."""
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    by_name: dict[str, list[Path]] = {}
    for wheel in wheels:
        by_name.setdefault(wheel_name_version(wheel)[0], []).append(wheel)
    chosen = {}
    for name, builds in by_name.items():
        fitting = [w for w in builds if wheel_name_version(w)[2] in (tag, "py3", "py2.py3")]
        if not fitting:
            raise SystemExit(f"error: {builds[0].parent}: no build of {name} for Python {tag[2]}.{tag[3:]} "
                             f"(have {', '.join(w.name for w in builds)}); run `make gpu-wheels`")
        chosen[name] = fitting[0]
    minimum: dict[str, tuple[int, ...]] = {}
    for wheel in chosen.values():
        for name, _, version in requirements(wheel):
            minimum[name] = max(minimum.get(name, ()), version_tuple(version))
    needed = []
    for name, wheel in chosen.items():
        have = installed_version(name)
        if have is None or version_tuple(have) < minimum.get(name, ()):
            needed.append(wheel)
    return needed


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python3 bench/gpu_day/deps.py WHEELS_DIR TARGET_DIR", file=sys.stderr)
        return 2
    source, target = Path(argv[0]), Path(argv[1])
    wheels = sorted(source.glob("*.whl")) if source.is_dir() else []
    if not wheels:
        print(f"error: {source}: no wheels there (the folder must travel with the tree; `make gpu-wheels` "
              "writes it)", file=sys.stderr)
        return 2
    try:
        needed = choose(wheels)
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    target.mkdir(parents=True, exist_ok=True)
    for wheel in needed:
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(target)
    names = ", ".join(f"{wheel_name_version(w)[0]} {wheel_name_version(w)[1]}" for w in needed) or "nothing"
    print(f"gpu_deps: unpacked {names} into {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
