#!/usr/bin/env bash
# eole 0.6.4 trained on Multi30k en->de for MINUTES minutes with the demo's settings (eole.yaml;
# a checkpoint every 100 updates, since eole saves nothing when stopped), then test_2016_flickr
# translated with beam 4 from the last checkpoint. Prints JSON: updates, tokens/s, the output file.
# SEED replaces eole.yaml's seed (42).
#
#   experiments/peers/eole.sh MINUTES [SEED]
set -euo pipefail
minutes=${1:?minutes}
seed=${2:-}
peer=eole
packages="eole==0.6.4 aiohttp ctranslate2==4.8.5"  # as bench/peers/eole.sh
study=$(cd "$(dirname "$0")" && pwd)
source "$study/../../bench/peers/setup.sh"
sed 's#run/model#quality/model#' "$study/eole.yaml" > quality.yaml
[ -z "$seed" ] || sed -i "s/^seed: .*/seed: $seed/" quality.yaml
export PYTHONWARNINGS=ignore
[ -s run/vocab.shared ] || "$venv/bin/eole" build_vocab -config quality.yaml -n_sample -1 > vocab.log 2>&1 \
  || { tail -5 vocab.log; exit 1; }
rm -rf quality
start=$(date +%s.%N)
timeout -s INT "${minutes}m" "$venv/bin/eole" train -config quality.yaml > quality_train.log 2>&1 || true
end=$(date +%s.%N)
last=$(ls -d quality/model/step_* 2>/dev/null | sort -t_ -k2 -n | tail -1)
[ -n "$last" ] || { tail -5 quality_train.log; exit 1; }
"$venv/bin/eole" predict -model_path "$last" -src test_2016_flickr.en -output quality_test.de -beam_size 4 \
  -batch_size 2048 -batch_type tokens > quality_decode.log 2>&1 || { tail -5 quality_decode.log; exit 1; }
"$venv/bin/python" - "$start" "$end" "$PWD" "$last" <<'PY'
import json, re, sys
start, end, work, last = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
log = open("quality_train.log").read()
steps = [int(s) for s in re.findall(r"Step (\d+)/", log)]
rates = [int(t) for _, t in re.findall(r"(\d+)/\s*(\d+) tok/s", log)]
print(json.dumps({"toolkit": "eole 0.6.4", "updates": max(steps) if steps else None,
                  "checkpoint_updates": int(last.rsplit("_", 1)[1]), "train_seconds": round(end - start, 1),
                  "logged_target_tokens_per_s": round(sum(rates) / len(rates)) if rates else None,
                  "hypotheses": f"{work}/quality_test.de"}))
PY
