"""Benchmarks: speed and memory figures written as JSON to bench/results/."""
