#!/usr/bin/env bash
# Trains JoeyNMT 2.3.0 (a PyTorch NMT toolkit) on Multi30k en->de with the "bench-small"
# configuration for a few updates and prints its training speed as JSON, so nmt's own
# benchmark can be put side by side with a peer measured on the same machine, same data,
# same model shape.
#
#   bench/peers/joeynmt.sh [STEPS]        (default 30 updates; ~2.5 min on 2 cores)
#
# bench-small: 3+3 layers, d_model 256, 4 heads, d_ff 1024, post-LN, tied embeddings,
# joint sentencepiece BPE 8k, token batches of 4096 (JoeyNMT counts max(src,tgt) padded
# tokens; that holds about 1,840 target tokens), fp32, Adam + Noam warmup, label smoothing 0.1.
# JoeyNMT's "Tokens per Sec" counts non-padding target tokens.
set -euo pipefail
steps=${1:-30}
peer=joeynmt
# joeynmt 2.3.0 needs importlib_metadata (undeclared) and calls SetVocabulary, which
# sentencepiece 0.2.3 no longer has.
packages="joeynmt==2.3.0 importlib_metadata sentencepiece==0.2.0"
source "$(dirname "$0")/setup.sh"
[ -s sp8k.joey.vocab ] || cut -f1 sp8k.vocab > sp8k.joey.vocab
sed "s/STEPS/$steps/" "$here/joeynmt_bench_small.yaml" > bench_small.yaml
rm -rf model
start=$(date +%s.%N)
"$venv/bin/python" -m joeynmt train bench_small.yaml --skip-test > train.log 2>&1 \
  || { tail -5 train.log; exit 1; }
end=$(date +%s.%N)
# decoding: the 100 first test sentences, beam 4, every output forced to 20 tokens so that
# engines are compared on equal work whatever the (barely trained) model would say
sed -e 's#^testing:#testing:\n    load_model: "model/latest.ckpt"\n    min_output_length: 20#' \
    -e 's#max_output_length: 100#max_output_length: 20#' bench_small.yaml > decode.yaml
"$venv/bin/python" -m joeynmt translate decode.yaml < test100.en > out100.txt 2> decode.log \
  || { tail -5 decode.log; exit 1; }
"$venv/bin/python" - "$start" "$end" "$steps" <<'PY'
import json, re, sys
start, end, steps = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
log = open("train.log").read()
rates = [int(r) for r in re.findall(r"Tokens per Sec:\s+(\d+)", log)]
stamps = re.findall(r"(\d\d:\d\d:\d\d),\d+ - INFO - joeynmt.training - Epoch .*Step:\s+(\d+)", log)
def secs(t):
    h, m, s = map(int, t.split(":")); return 3600 * h + 60 * m + s
per_step = None
if len(stamps) >= 2:  # steady state: from the first logged step to the last
    (t0, s0), (t1, s1) = stamps[0], stamps[-1]
    per_step = (secs(t1) - secs(t0)) / (int(s1) - int(s0))
gen = re.findall(r"Generation took ([0-9.]+)", open("decode.log").read())
decode_s = float(gen[-1]) if gen else None
# What the outputs hold, beside the time: a barely trained model's may say "." alone for every
# line (its 20 tokens mostly spaces, or cut short: the time then varied 0.7-11 s between runs).
outputs = open("out100.txt", encoding="utf-8").read().splitlines()
mean_chars = round(sum(map(len, outputs)) / max(len(outputs), 1), 1)
print(json.dumps({"peer": "joeynmt 2.3.0", "config": "bench-small", "updates": steps,
                  "decode_100_sentences_beam4_20_tokens_s": decode_s, "decode_output_characters_mean": mean_chars,
                  "wall_s": round(end - start, 1), "sec_per_update": per_step,
                  "target_tokens_per_s": rates[1:] or rates}, indent=1))
PY
