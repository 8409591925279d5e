"""`make bench-peers`: nmt beside eole (with CTranslate2) and JoeyNMT, on the same data, model
shape and machine, in one run, so that their ratios hold (absolute speeds drift between hosts
and hours).

    python -m bench.peers [--steps 30] [--skip joeynmt]

Order: eole, nmt (`bench/run.py`), eole again, JoeyNMT: nmt sits between two eole runs, so host
drift shows in the spread of eole's figures. Each peer installs itself once into its own virtual
environment under $PEERS_HOME (default ~/.cache/nmt-peers; this needs a package index) and
trains bench-small for a few updates (`bench/peers/*.sh`, which say what each figure counts).
Writes bench/results/peers.json: every figure, nmt's from the same run, and the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tools.results import write_json

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "bench" / "peers"
RESULTS = ROOT / "bench" / "results"


def run_peer(script: str, steps: int) -> dict:
    """A peer's script, its JSON (the last JSON object it prints) and how long it took."""
    start = time.perf_counter()
    done = subprocess.run(["bash", str(PEERS / script), str(steps)], capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        return {"script": script, "error": (done.stdout + done.stderr).strip().splitlines()[-5:]}
    text = done.stdout
    report = json.loads(text[text.rindex("\n{") + 1 if "\n{" in text else text.index("{"):])
    return report | {"wall_seconds": round(time.perf_counter() - start, 1)}


def run_nmt(steps: int) -> dict:
    subprocess.run([sys.executable, "-m", "bench.run", "--steps", str(steps)], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    return json.loads((RESULTS / "bench_small.json").read_text())


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def ratios(nmt: dict, eole_runs: list[dict], joeynmt: dict | None) -> dict:
    """nmt's training speed over each peer's (higher is faster for nmt), and the peers' decoding
    time over nmt's (higher is faster for nmt)."""
    out = {}
    nmt_train = nmt["training"]["target_tokens_per_s"]
    nmt_decode = nmt["decoding_100_sentences_20_tokens"]["beam4"]["seconds"]
    eole_ok = [r for r in eole_runs if "error" not in r]
    if eole_ok:
        eole_train = mean([mean(r["target_tokens_per_s"]) for r in eole_ok])
        decode = [r["decode_100_sentences_beam4_20_tokens_s"] for r in eole_ok]
        out["training_nmt_over_eole"] = round(nmt_train / eole_train, 2)
        out["decoding_eole_over_nmt"] = round(mean([d["eole"] for d in decode]) / nmt_decode, 2)
        out["decoding_ctranslate2_fp32_over_nmt"] = round(mean([d["ctranslate2_fp32"] for d in decode]) / nmt_decode, 2)
        out["decoding_ctranslate2_int8_over_nmt"] = round(mean([d["ctranslate2_int8"] for d in decode]) / nmt_decode, 2)
    if joeynmt and "error" not in joeynmt and joeynmt.get("target_tokens_per_s"):
        out["training_nmt_over_joeynmt"] = round(nmt_train / mean(joeynmt["target_tokens_per_s"]), 2)
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30, help="training updates of each peer")
    parser.add_argument("--nmt-steps", type=int, default=20, help="timed updates of nmt (bench/run.py)")
    parser.add_argument("--skip", default="", help="comma-separated peers to leave out: eole, joeynmt")
    args = parser.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    report: dict = {"config": "bench-small", "threads": 2, "started": time.strftime("%Y-%m-%d %H:%M:%S"),
                    "peers_home": os.environ.get("PEERS_HOME", "~/.cache/nmt-peers")}
    eole_runs = []
    if "eole" not in skip:
        eole_runs.append(run_peer("eole.sh", args.steps))
        print(json.dumps({"eole": eole_runs[-1]}), flush=True)
    nmt = run_nmt(args.nmt_steps)
    print(json.dumps({"nmt": {"training": nmt["training"], "decoding": nmt["decoding_100_sentences_20_tokens"]}}), flush=True)
    if "eole" not in skip:
        eole_runs.append(run_peer("eole.sh", args.steps))
        print(json.dumps({"eole": eole_runs[-1]}), flush=True)
    joeynmt = None
    if "joeynmt" not in skip:
        joeynmt = run_peer("joeynmt.sh", args.steps)
        print(json.dumps({"joeynmt": joeynmt}), flush=True)
    report |= {"nmt": nmt, "eole": eole_runs, "joeynmt": joeynmt, "ratios": ratios(nmt, eole_runs, joeynmt)}
    write_json(RESULTS / "peers.json", report)
    print(json.dumps({"ratios": report["ratios"]}, indent=1))
    return report


if __name__ == "__main__":
    main()
