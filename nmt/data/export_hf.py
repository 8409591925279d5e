"""Export a Hugging Face `datasets` translation corpus to the plain-text files recipes read.

    python -m nmt.data.export_hf wmt14 de-en data/wmt14 --src en --tgt de

writes `data/wmt14/{train,valid,test}.{en,de}.gz`. The name may also be a folder written by
`Dataset.save_to_disk`/`DatasetDict.save_to_disk` (no network needed then).
"""

from __future__ import annotations

import argparse
import gzip
from pathlib import Path

SPLITS = {"train": "train", "validation": "valid", "test": "test"}


def export(name: str, config: str | None, out: Path, src: str, tgt: str) -> dict[str, int]:
    import datasets

    corpus = datasets.load_from_disk(name) if Path(name).is_dir() else datasets.load_dataset(name, config)
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for hf_split, split in SPLITS.items():
        if hf_split not in corpus:
            continue
        with gzip.open(out / f"{split}.{src}.gz", "wt", encoding="utf-8") as fs, \
             gzip.open(out / f"{split}.{tgt}.gz", "wt", encoding="utf-8") as ft:
            n = 0
            for row in corpus[hf_split]:
                pair = row["translation"]
                fs.write(pair[src].replace("\n", " ") + "\n")
                ft.write(pair[tgt].replace("\n", " ") + "\n")
                n += 1
        counts[split] = n
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name")
    parser.add_argument("config", nargs="?")
    parser.add_argument("out", type=Path)
    parser.add_argument("--src", required=True)
    parser.add_argument("--tgt", required=True)
    args = parser.parse_args()
    print(export(args.name, args.config, args.out, args.src, args.tgt))


if __name__ == "__main__":
    main()
