"""Jobs built on translation and scoring: distillation, back-translation, forced-decoding
scores, lexical shortlists."""
