#!/usr/bin/env bash
# Trains eole 0.6.4 (OpenNMT-py's successor, PyTorch) on Multi30k en->de with the "bench-small"
# shape for a few updates, then decodes 100 test sentences with eole and with CTranslate2
# (fp32 and int8, the model converted by CTranslate2's own eole converter). Prints JSON.
#
#   bench/peers/eole.sh [STEPS]        (default 30 updates; ~3 min on 2 cores)
#
# Training batches: 4096 tokens in eole's count, about 3,300 non-padding target tokens.
# Decoding: beam 4, every output forced to exactly 20 tokens (min = max length), so engines do
# equal work whatever the barely trained model would say; eole and CTranslate2 fp32 give
# identical outputs on the same weights. CTranslate2's time is the best of 3, as nmt's is.
set -euo pipefail
steps=${1:-30}
peer=eole
packages="eole==0.6.4 aiohttp ctranslate2==4.8.5"  # eole 0.6.4 imports aiohttp without declaring it
source "$(dirname "$0")/setup.sh"
sed "s/STEPS/$steps/" "$here/eole_bench_small.yaml" > bench_small.yaml
export PYTHONWARNINGS=ignore
[ -s run/vocab.shared ] || "$venv/bin/eole" build_vocab -config bench_small.yaml -n_sample -1 > vocab.log 2>&1 \
  || { tail -5 vocab.log; exit 1; }
rm -rf run/model ct2
"$venv/bin/eole" train -config bench_small.yaml > train.log 2>&1 || { tail -5 train.log; exit 1; }
ckpt=run/model/step_$steps
"$venv/bin/eole" predict -model_path "$ckpt" -src test100.en -output out100.eole -beam_size 4 \
  -min_length 20 -max_length 20 -max_length_ratio 0 -batch_size 2048 -batch_type tokens \
  -report_time > predict.log 2>&1 || { tail -5 predict.log; exit 1; }
"$venv/bin/python" -m ctranslate2.converters.eole_ct2 --model_path "$ckpt" --output_dir ct2 \
  > convert.log 2>&1 || { tail -5 convert.log; exit 1; }
"$venv/bin/python" - "$steps" <<'PY'
import json, re, sys, time
import ctranslate2, sentencepiece as spm
steps = int(sys.argv[1])
log = open("train.log").read()
# "Step 10/ 30; ... bsz: SRC/TGT/SENTS; SRC_RATE/TGT_RATE tok/s; ..."
tgt_rates = [int(t) for _, t in re.findall(r"(\d+)/\s*(\d+) tok/s", log)]
pred = open("predict.log").read()
step0 = float(re.findall(r"Step 0 time \(s\): ([0-9.]+)", pred)[-1])
rest = float(re.findall(r"Subsequent prediction time including all \(s\): ([0-9.]+)", pred)[-1])
sp = spm.SentencePieceProcessor(model_file="sp8k.model")
src = [sp.encode(l, out_type=str) for l in open("test100.en").read().splitlines()]
ct2 = {}
for compute_type in ("float32", "int8"):
    tr = ctranslate2.Translator("ct2", device="cpu", compute_type=compute_type, intra_threads=2)
    tr.translate_batch(src[:8], beam_size=4)  # warm-up
    timings = []
    for _ in range(3):  # the best of 3, as nmt's decoding is timed (bench/run.py)
        t = time.perf_counter()
        tr.translate_batch(src, beam_size=4, min_decoding_length=20, max_decoding_length=20,
                           max_batch_size=2048, batch_type="tokens")
        timings.append(time.perf_counter() - t)
    ct2[compute_type] = round(min(timings), 2)
print(json.dumps({"peer": "eole 0.6.4 / ctranslate2 4.8.5", "config": "bench-small",
                  "updates": steps, "target_tokens_per_s": tgt_rates[1:] or tgt_rates,
                  "decode_100_sentences_beam4_20_tokens_s": {"eole": round(step0 + rest, 2),
                  "ctranslate2_fp32": ct2["float32"], "ctranslate2_int8": ct2["int8"]}}, indent=1))
PY
