#!/usr/bin/env bash
# One part of the GPU check, as a lent GPU machine runs it: that machine's own python3 and PyTorch,
# no package index, the tree as it arrives (bench/gpu_day/wheels/ is tracked, so nothing needs carrying),
# results written under $OUT as each check ends.
#
#   bash bench/gpu_day/run.sh PART [OPTIONS]   PART: correctness | speed | training   (bench/gpu_day/README.md)
#   bash bench/gpu_day/run.sh PROBE [OPTIONS]  PROBE: compiled_probe | attention_probe
#
# OPTIONS go to bench/gpu_day/check.py, e.g. `--runs base_recipe,big_recipe` for part of the speed part,
# or to the probe (bench/gpu_day/PROBE.py), which writes $OUT/PROBE.json.
#
# $OUT/PART.json holds the part's checks (rewritten after each one, so a command killed at its
# time limit still returns what it measured); $OUT/PART.log the whole output (training logs,
# pytest's report); the terminal gets one line per check. Without $OUT: runs/gpu_day/.
# GPU_PYTHON picks the interpreter (default python3). Without a GPU every check runs a tiny
# shape on the CPU: what the test suite's rehearsal runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
part="${1:?usage: bash bench/gpu_day/run.sh correctness|speed|training|compiled_probe|attention_probe}"
python="${GPU_PYTHON:-python3}"
out="${OUT:-runs/gpu_day}"
mkdir -p "$out"
site="$(mktemp -d "${TMPDIR:-/tmp}/nmt-gpu-site.XXXXXX")"
trap 'rm -rf "$site"' EXIT  # (each run's own unpacked packages: gone when it ends, however it ends)
# pydantic and its dependencies, unpacked beside the machine's packages, never into them.
"$python" bench/gpu_day/deps.py bench/gpu_day/wheels "$site"
export PYTHONPATH="$site:$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
case "$part" in
  compiled_probe|attention_probe) "$python" -m "bench.gpu_day.$part" --out "$out/$part.json" "${@:2}" ;;
  *) "$python" -m bench.gpu_day.check --part "$part" --out-dir "$out" "${@:2}" ;;
esac
