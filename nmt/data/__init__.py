"""Data: corpus reading, sentencepiece tokenizer, cleaning, binarized shards, token batching."""
