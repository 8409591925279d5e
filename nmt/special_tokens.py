"""The fixed ids of the special tokens, the same in every sentencepiece model nmt trains or imports
(nmt.data.tokenizer sets them): the model, the searches and the data all count on them."""

PAD, UNK, BOS, EOS = 0, 1, 2, 3
# sentencepiece's mark of a space: a piece starting with it starts a word, and "▁" alone is the
# space its tokenizer puts in front of a text
WORD_START = "\u2581"
