#!/usr/bin/env bash
# Source me with PY set to a python that has sentencepiece: puts Multi30k en-de (train, val,
# test_2016_flickr, and test100.en = its first 100 lines) and a joint 8k BPE sentencepiece
# model (sp8k.model, sp8k.vocab) in the current directory, once.
data=${PEERS_DATA:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../data/multi30k" && pwd)}
for split in train val test_2016_flickr; do
  for lang in en de; do
    [ -s "$split.$lang" ] || zcat "$data/$split.$lang.gz" > "$split.$lang"
  done
done
[ -s test100.en ] || head -100 test_2016_flickr.en > test100.en
if [ ! -s sp8k.model ]; then
  cat train.en train.de > sp_train.txt
  "$PY" - <<'PY'
import sentencepiece as spm
spm.SentencePieceTrainer.train(input="sp_train.txt", model_prefix="sp8k", vocab_size=8000,
    model_type="bpe", character_coverage=1.0, unk_id=0, pad_id=1, bos_id=2, eos_id=3,
    num_threads=2, minloglevel=2)
PY
fi
