#!/usr/bin/env bash
# JoeyNMT 2.3.0 trained on Multi30k en->de for MINUTES minutes with the demo's settings
# (joeynmt.yaml), stopped by SIGINT (on which JoeyNMT saves model/latest.ckpt), then
# test_2016_flickr translated with beam 4. Prints JSON: updates, tokens/s, the output file.
# SEED replaces joeynmt.yaml's random_seed (42).
#
#   experiments/peers/joeynmt.sh MINUTES [SEED]
set -euo pipefail
minutes=${1:?minutes}
seed=${2:-}
peer=joeynmt
packages="joeynmt==2.3.0 importlib_metadata sentencepiece==0.2.0"  # as bench/peers/joeynmt.sh
study=$(cd "$(dirname "$0")" && pwd)
source "$study/../../bench/peers/setup.sh"
[ -s sp8k.joey.vocab ] || cut -f1 sp8k.vocab > sp8k.joey.vocab
cp "$study/joeynmt.yaml" quality.yaml
[ -z "$seed" ] || sed -i "s/^\( *\)random_seed: .*/\1random_seed: $seed/" quality.yaml
rm -rf model
start=$(date +%s.%N)
timeout -s INT "${minutes}m" "$venv/bin/python" -m joeynmt train quality.yaml --skip-test > quality_train.log 2>&1 || true
end=$(date +%s.%N)
[ -s model/latest.ckpt ] || { tail -5 quality_train.log; exit 1; }
sed 's#^testing:#testing:\n    load_model: "model/latest.ckpt"#' quality.yaml > quality_decode.yaml
"$venv/bin/python" -m joeynmt translate quality_decode.yaml < test_2016_flickr.en > quality_test.de 2> quality_decode.log \
  || { tail -5 quality_decode.log; exit 1; }
"$venv/bin/python" - "$start" "$end" "$PWD" <<'PY'
import json, re, sys
start, end, work = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
log = open("quality_train.log").read()
steps = [int(s) for s in re.findall(r"Step:\s+(\d+)", log) + re.findall(r"Interrupt at epoch \d+, step (\d+)", log)]
rates = [int(r) for r in re.findall(r"Tokens per Sec:\s+(\d+)", log)]
print(json.dumps({"toolkit": "JoeyNMT 2.3.0", "updates": max(steps) if steps else None,
                  "train_seconds": round(end - start, 1),
                  "logged_target_tokens_per_s": round(sum(rates) / len(rates)) if rates else None,
                  "hypotheses": f"{work}/quality_test.de"}))
PY
