#!/usr/bin/env bash
# The wheels nmt needs beyond what the lent GPU machines ship (their own PyTorch with CUDA, pytest,
# sentencepiece, sacrebleu, typer, pyyaml and rich; no package index there): pydantic and its
# dependencies, for CPython 3.12 (the GPU machines) and 3.11 (the rehearsal in the test suite) on
# x86-64. They are committed in bench/gpu_day/wheels/, so they travel with the tree; run this on a machine
# with an index to refresh them. bench/gpu_day/deps.py unpacks them there.
# Usage: bash bench/gpu_day/wheels.sh [DIR]  (default bench/gpu_day/wheels)
set -euo pipefail
dir="${1:-$(dirname "$0")/wheels}"
mkdir -p "$dir"
rm -f "$dir"/*.whl
for version in 3.12 3.11; do
    python3 -m pip download --quiet --no-deps --dest "$dir" --only-binary=:all: --python-version "$version" \
        --implementation cp --abi "cp${version/./}" --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux_2_28_x86_64 --platform any \
        pydantic pydantic-core annotated-types typing-inspection typing-extensions sentencex
done
ls "$dir"
