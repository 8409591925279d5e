"""A documentation site kept up to date (`make bench-updates`): test_2016_flickr as a site of 100
Markdown pages of 10 captions each (docs/en/, a language tree), translated into docs/de/ in place
by the demo model (`-i site --update site`); then a share of the captions replaced by others
(val's), as a site's authors edit it, and the site updated in place. Timed against translating
the changed site anew into a new folder, and checked against it: the update must write what a
translation anew writes, page for page, since every kept paragraph is the translation of the
same text. Also BLEU of the updated pages' changed captions against their references. Writes
experiments/robustness/results/updates.json.

    python -m experiments.robustness.updates [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_test_set, score, write_study
from nmt.config import load_recipe
from nmt.data.corpus import read_lines
from nmt.decode.engines.engine import load_engine
from nmt.decode.folders import translate_folder

RESULTS = Path(__file__).resolve().parent / "results"
PAGES, CAPTIONS, CHANGED = 100, 10, 0.05


def _site(root: Path, captions: list[str]) -> None:
    for page in range(PAGES):
        path = root / "docs" / "en" / f"page{page:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = captions[page * CAPTIONS:(page + 1) * CAPTIONS]
        path.write_text(f"# Page {page}\n\n" + "\n\n".join(body) + "\n", encoding="utf-8")
    (root / "docs" / "de").mkdir(parents=True, exist_ok=True)


def _pages(root: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted((root / "docs" / "de").glob("*.md"))}


def main() -> None:
    parser = demo_parser()
    parser.add_argument("--valid", default="data/multi30k/val")
    args = parser.parse_args()
    checkpoint, sources, references = demo_test_set(args)
    cfg = load_recipe(args.recipe).decode
    engine = load_engine([checkpoint])
    quiet = lambda path: lambda message: None  # noqa: E731
    others_en = list(read_lines(Path(f"{args.valid}.en.gz")))
    others_de = list(read_lines(Path(f"{args.valid}.de.gz")))
    rng = random.Random(1)
    changed = sorted(rng.sample(range(PAGES * CAPTIONS), int(PAGES * CAPTIONS * CHANGED)))
    edited, edited_references = list(sources), list(references)
    for k, index in enumerate(changed):
        edited[index], edited_references[index] = others_en[k], others_de[k]
    result: dict = {"pages": PAGES, "captions": PAGES * CAPTIONS, "changed_captions": len(changed)}
    with tempfile.TemporaryDirectory() as folder:
        site = Path(folder) / "site"
        _site(site, sources[:PAGES * CAPTIONS])
        start = time.perf_counter()
        translate_folder(engine, site, None, cfg, quiet)
        result["first_translation_seconds"] = round(time.perf_counter() - start, 2)
        _site(site, edited[:PAGES * CAPTIONS])  # (the authors' edits)
        start = time.perf_counter()
        report = translate_folder(engine, site, None, cfg, quiet)
        result["update_seconds"] = round(time.perf_counter() - start, 2)
        result["update_kept_texts"], result["update_texts"] = report.kept_texts
        result["pages_written"] = len(report.written)
        anew = Path(folder) / "anew"
        (site / "docs" / "de").rename(Path(folder) / "updated")
        start = time.perf_counter()
        translate_folder(engine, site, anew, cfg, quiet)
        result["translation_anew_seconds"] = round(time.perf_counter() - start, 2)
        updated = {path.name: path.read_bytes() for path in sorted((Path(folder) / "updated").glob("*.md"))}
        result["pages_as_translated_anew"] = sum(updated[name] == content for name, content in _pages(anew).items())
        outputs = [paragraph for name in sorted(updated)
                   for paragraph in updated[name].decode("utf-8").strip().split("\n\n")[1:]]
        result["changed_captions_bleu"] = score([outputs[i] for i in changed], [edited_references[i] for i in changed])
    result["speedup"] = round(result["translation_anew_seconds"] / result["update_seconds"], 1)
    print(result, flush=True)
    write_study(RESULTS / "updates.json", checkpoint, args.test, result)


if __name__ == "__main__":
    main()
