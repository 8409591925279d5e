#!/usr/bin/env bash
# The wheels nmt needs beyond what the lent GPU machines ship (their own PyTorch with CUDA,
# sentencepiece, sacrebleu, typer, pyyaml and rich; no package index there), for their Python
# 3.12 on x86-64. Run on a machine with an index; `make gpu-check` installs from the folder
# without touching the machine's torch.  Usage: bash bench/gpu_wheels.sh [DIR]  (default bench/wheels)
set -euo pipefail
dir="${1:-$(dirname "$0")/wheels}"
mkdir -p "$dir"
python3 -m pip download --quiet --dest "$dir" --only-binary=:all: --python-version 3.12 \
    --implementation cp --abi cp312 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux_2_28_x86_64 --platform any \
    "pydantic>=2.5" "pytest>=8"
ls "$dir"
