"""nmt: a readable, fast Transformer toolkit for neural machine translation."""

__version__ = "0.1.0"
