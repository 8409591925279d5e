"""Benchmarks: speed and memory figures written as JSON to bench/results/.

A benchmark's process starts and ends as an nmt command does, whichever of bench's modules it
runs (`python -m bench.gpu`, `bash bench/gpu_day/run.sh`): its first `import torch` with the
garbage collector paused (nmt.startup), its heap frozen at exit (nmt.shutdown).
"""

from nmt.startup import start_and_end_quickly

start_and_end_quickly()
