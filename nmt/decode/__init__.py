"""Decoding: search algorithms and line-by-line translation."""
