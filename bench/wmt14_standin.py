"""A full-size stand-in for WMT14 de-en, for exercising the base recipe where the corpus cannot be
downloaded.

    python -m bench.wmt14_standin data/multi30k data/wmt14_standin

writes a `datasets.DatasetDict` with `save_to_disk`, with the schema of the Hub's `wmt/wmt14`
`de-en`: splits train (4,508,785 rows), validation (3,000) and test (3,003), each row a
`translation` mapping {"de": ..., "en": ...}. Rows are real sentences: 1-3 Multi30k pairs joined
(German with German, English with English), so that lengths resemble news text (about 27 words).
Train rows are distinct (every Multi30k pair once alone, then each 2- or 3-combination drawn at
most once), so duplicate removal keeps them; validation and test join pairs of Multi30k's val and
test_2016_flickr, disjoint from train.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np

from nmt.data.corpus import read_parallel

WMT14_ROWS = {"train": 4_508_785, "validation": 3_000, "test": 3_003}
MULTI30K = {"train": "train", "validation": "val", "test": "test_2016_flickr"}
# How many Multi30k pairs a row joins: Multi30k averages 12-13 words a sentence, so a mean of
# 2.15 pairs gives about 27 words, the length of WMT14's news sentences.
PAIRS_PER_ROW = (1, 2, 3)
PAIRS_PER_ROW_P = (0.0, 0.85, 0.15)


def _rows(stem: str, n_rows: int, seed: int, singles: bool):
    """Yield `n_rows` distinct rows of the Multi30k split `stem`: every pair alone first (if
    `singles`), then distinct random 2- and 3-joins."""
    # Read here, not passed in: `datasets` would deal a list argument out to shards, one per item.
    pairs = list(read_parallel(Path(f"{stem}.en.gz"), Path(f"{stem}.de.gz")))
    rng = np.random.default_rng(seed)
    n = len(pairs)
    seen: set[tuple[int, ...]] = set()
    emitted = 0
    for i in range(min(n, n_rows) if singles else 0):  # each pair on its own once
        seen.add((i,))
        yield {"translation": {"de": pairs[i][1], "en": pairs[i][0]}}
        emitted += 1
    while emitted < n_rows:
        sizes = rng.choice(PAIRS_PER_ROW, size=65_536, p=PAIRS_PER_ROW_P)
        picks = rng.integers(0, n, size=(65_536, max(PAIRS_PER_ROW)))
        for size, pick in zip(sizes, picks):
            key = tuple(int(x) for x in pick[:size])
            if key in seen:
                continue
            seen.add(key)
            yield {"translation": {"de": " ".join(pairs[i][1] for i in key),
                                   "en": " ".join(pairs[i][0] for i in key)}}
            emitted += 1
            if emitted == n_rows:
                return


def build(multi30k: Path, out: Path, rows: dict[str, int] | None = None, seed: int = 2014) -> dict:
    """Write the stand-in to `out` (atomically: a folder beside it, renamed when complete)."""
    import datasets

    rows = rows or WMT14_ROWS
    datasets.disable_progress_bars()
    features = datasets.Features({"translation": datasets.Translation(languages=["de", "en"])})
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        splits = {}
        for split, n_rows in rows.items():
            splits[split] = datasets.Dataset.from_generator(
                _rows, gen_kwargs={"stem": str(multi30k / MULTI30K[split]), "n_rows": n_rows, "seed": seed + len(split),
                            "singles": split == "train"},
                features=features, cache_dir=str(work / "cache"))
        corpus = datasets.DatasetDict(splits)
        corpus.save_to_disk(str(work / "dataset"))
        if out.exists():
            shutil.rmtree(out)
        (work / "dataset").rename(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return describe(out)


def describe(path: Path, sample: int = 20_000) -> dict:
    """Row counts and the mean words per sentence of `sample` evenly spaced rows of each split."""
    import datasets

    corpus = datasets.load_from_disk(str(path))
    summary = {}
    for split, data in corpus.items():
        picks = np.linspace(0, len(data) - 1, num=min(sample, len(data))).astype(int)
        head = data.select(picks)["translation"]
        summary[split] = {
            "rows": len(data),
            "mean_words_en": round(float(np.mean([len(t["en"].split()) for t in head])), 1),
            "mean_words_de": round(float(np.mean([len(t["de"].split()) for t in head])), 1),
        }
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("multi30k", type=Path, help="folder with Multi30k's {train,val,test_2016_flickr}.{en,de}.gz")
    parser.add_argument("out", type=Path)
    parser.add_argument("--train-rows", type=int, default=WMT14_ROWS["train"])
    args = parser.parse_args()
    rows = WMT14_ROWS | {"train": args.train_rows}
    print(json.dumps(build(args.multi30k, args.out, rows), indent=1))


if __name__ == "__main__":
    main()
