"""Export a Hugging Face `datasets` translation corpus to the plain-text files recipes read.

    python -m tools.export_hf wmt/wmt14 de-en data/wmt14 --src en --tgt de

writes `data/wmt14/{train,valid,test}.{en,de}.gz`. The name may also be a folder written by
`Dataset.save_to_disk`/`DatasetDict.save_to_disk` (no network needed then).

The export is atomic: files are written into a scratch folder beside the output and moved into
place only when every split is complete, `train.{src}.gz` last (it is the Makefile's up-to-date
marker). A run cut short leaves no output file, and the next run starts its scratch folder anew.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import sys
from pathlib import Path

from nmt.data.corpus import load_hf_dataset
from nmt.errors import NmtError

SPLITS = {"train": "train", "validation": "valid", "test": "test"}
ROWS_PER_READ = 10_000


def _write_split(rows, where: str, src: str, tgt: str, src_file: Path, tgt_file: Path) -> int:
    if "translation" not in rows.column_names:
        raise NmtError(f"{where}: no 'translation' column (columns: {', '.join(rows.column_names)})")
    n = 0
    with gzip.open(src_file, "wt", encoding="utf-8") as fs, gzip.open(tgt_file, "wt", encoding="utf-8") as ft:
        for batch in rows.iter(batch_size=ROWS_PER_READ):
            for pair in batch["translation"]:
                n += 1
                for lang, handle in ((src, fs), (tgt, ft)):
                    text = pair.get(lang) if isinstance(pair, dict) else None
                    if text is None:
                        have = ", ".join(sorted(pair)) if isinstance(pair, dict) else type(pair).__name__
                        raise NmtError(f"{where}: row {n} has no '{lang}' text (it has: {have})")
                    handle.write(text.replace("\n", " ").replace("\r", " ") + "\n")
    return n


def export(name: str, config: str | None, out: Path, src: str, tgt: str) -> dict[str, int]:
    corpus = load_hf_dataset(name, config)
    if not hasattr(corpus, "keys") or "train" not in corpus:
        raise NmtError(f"{name}: no 'train' split (a DatasetDict with train/validation/test is expected)")
    out.mkdir(parents=True, exist_ok=True)
    scratch = out / ".export.partial"
    shutil.rmtree(scratch, ignore_errors=True)  # what an interrupted run left is never reused
    scratch.mkdir()
    counts, written = {}, []
    for hf_split, split in SPLITS.items():
        if hf_split not in corpus:
            continue
        files = (scratch / f"{split}.{src}.gz", scratch / f"{split}.{tgt}.gz")
        counts[split] = _write_split(corpus[hf_split], f"{name} ({hf_split})", src, tgt, *files)
        written += files
    marker = scratch / f"train.{src}.gz"
    for path in sorted(written, key=lambda p: p == marker):  # the marker moves last
        path.replace(out / path.name)
    scratch.rmdir()
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="a dataset on the Hub (wmt/wmt14) or a folder written by save_to_disk")
    parser.add_argument("config", nargs="?", help="the dataset's configuration, e.g. de-en")
    parser.add_argument("out", type=Path)
    parser.add_argument("--src", required=True)
    parser.add_argument("--tgt", required=True)
    args = parser.parse_args(argv)
    try:
        print(export(args.name, args.config, args.out, args.src, args.tgt))
    except NmtError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print(f"interrupted: nothing was moved into {args.out}; run again to export anew", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
