"""The Transformer model."""
