"""`nmt prepare` throughput and peak memory: full Multi30k train, and synthetic 250k- and 1M-pair corpora.

The synthetic corpus is Multi30k repeated with a running number appended to each pair (so that
duplicate removal keeps it, and has a million distinct pairs to track). Each measurement runs in its own process so that its peak memory is
its own. Writes bench/results/prepare.json.

    python -m bench.prepare [--pairs 250000 1000000]
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from tools.results import write_json

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "runs" / "bench_prepare"


def synthetic_corpus(prefix: Path, pairs: int) -> None:
    en = gzip.open(ROOT / "data/multi30k/train.en.gz", "rt", encoding="utf-8").read().splitlines()
    de = gzip.open(ROOT / "data/multi30k/train.de.gz", "rt", encoding="utf-8").read().splitlines()
    with gzip.open(f"{prefix}.en.gz", "wt", encoding="utf-8", compresslevel=1) as fe, \
         gzip.open(f"{prefix}.de.gz", "wt", encoding="utf-8", compresslevel=1) as fd:
        for i in range(pairs):
            fe.write(f"{en[i % len(en)]} {i}\n")
            fd.write(f"{de[i % len(de)]} {i}\n")


def measure_one(train_prefix: str) -> dict:
    """Runs in a child process: tokenizer from Multi30k (shared), then prepare of `train_prefix`."""
    from nmt.config import load_recipe
    from nmt.data.prepare import prepare
    from nmt.data.tokenizer import train_tokenizer

    out = WORK / Path(train_prefix).name
    base = load_recipe(ROOT / "recipes/multi30k_en_de.yaml", [f"output_dir={WORK / 'tokenizer'}"])
    train_tokenizer(base.data, base.tokenizer, base.out)
    recipe = load_recipe(ROOT / "recipes/multi30k_en_de.yaml", [f"output_dir={out}", f"data.train={train_prefix}"])
    out.mkdir(parents=True, exist_ok=True)
    for name in ("spm.model", "spm.vocab"):
        (out / name).write_bytes((base.out / name).read_bytes())
    (out / "data" / "report.json").unlink(missing_ok=True)
    raw_bytes = sum(len(line.encode()) + 1 for lang in ("en", "de")
                    for line in gzip.open(f"{train_prefix}.{lang}.gz", "rt", encoding="utf-8"))
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    report = prepare(recipe.data, recipe.tokenizer, recipe.out)
    seconds = time.perf_counter() - start
    pairs = report["splits"]["train"]["read"]
    return {"corpus": train_prefix, "pairs": pairs, "kept": report["splits"]["train"]["kept"],
            "seconds": round(seconds, 2), "pairs_per_s": round(pairs / seconds),
            "mb_per_s": round(raw_bytes / seconds / 1e6, 2),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "rss_before_prepare_mb": round(rss_before / 1024)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, nargs="+", default=[250_000, 1_000_000],
                        help="sizes of synthetic corpora; peak memory should not grow from one to the next")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure_one(args.one)))
        return
    WORK.mkdir(parents=True, exist_ok=True)
    prefixes = [str(ROOT / "data/multi30k/train")]
    for pairs in args.pairs:
        synthetic = WORK / f"synthetic_{pairs}"
        if not Path(f"{synthetic}.de.gz").is_file():
            synthetic_corpus(synthetic, pairs)
        prefixes.append(str(synthetic))
    results = []
    for prefix in prefixes:
        out = subprocess.run([sys.executable, "-m", "bench.prepare", "--one", prefix],
                             capture_output=True, text=True, check=True, cwd=ROOT)
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    report = {"benchmark": "nmt prepare (read, clean, encode with 2 threads, binarize)", "runs": results}
    (ROOT / "bench/results").mkdir(parents=True, exist_ok=True)
    write_json(ROOT / "bench/results/prepare.json", report)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
