"""Metrics computed in more than one place (scores, validation, minimum-Bayes-risk decoding):
COMET and CometKiwi from a local model (comet), sentence-level chrF between many pairs (chrf),
sacreBLEU's BLEU with the tokenizer for a target language (bleu)."""
