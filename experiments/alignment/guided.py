"""Guided alignment on the demo's data and settings (`make bench-guided-alignment`): does training one
attention head on word alignments cost BLEU, and does it place tags as well as the unguided
model's mean of all layers, through nmt's engine and through a CTranslate2 export?

    python -m experiments.alignment.guided [--minutes 12] [--seed 1]

Three models train side by side for the same minutes (the demo's settings, one thread each):
    unguided        the demo as it is
    guided_dice     train.guided_alignment.weight 0.1 with data.word_alignments dice (prepare's
                    own word dictionary, one-to-one links; nothing to install)
    guided_eflomal  the same with eflomal's links of the training corpus (both directions,
                    grow-diag-final-and), given as a Pharaoh file
The guided heads: the first head of the penultimate decoder layer (the defaults).

Each model translates test_2016_flickr (the recipe's decode settings): BLEU, updates and target
tokens/s. Then the tag stress forms of `make bench-robustness` (one word in <b>, two words in an
<a href ...>) as markup, through nmt's engine and, for the guided models, through their
CTranslate2 export (which refuses alignments for the unguided one): tags kept, BLEU of the text,
and where the tag went, judged against eflomal on Multi30k train plus the judged pairs (the same
reference as bench-robustness; the eflomal-guided model was trained on links of the same aligner,
on the training pairs only). Results: experiments/alignment/results/guided_alignment.json.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from experiments.robustness.stress_forms import tagged, tagged_words, tags_of, text_of
from experiments.shared.demo_model import score, translated
from experiments.shared.reference_alignment import directional_links, placement, reference_links
from experiments.shared.runs import nmt, nmt_command, run_facts, sets
from nmt.config import load_recipe
from nmt.data.clean import normalize
from nmt.data.corpus import read_lines
from nmt.decode.engines.engine import load_engine
from nmt.export import export_checkpoint
from nmt.info import checkpoint_info
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
WORK = ROOT / "runs" / "guided_alignment"
RECIPE = "recipes/multi30k_en_de.yaml"
TEST = ROOT / "data" / "multi30k" / "test_2016_flickr"
# the demo's settings (Makefile DEMO_SET), less its output_dir and minutes
DEMO = ["model.dropout=0.1", "tokenizer.vocab_size=8000", "train.max_tokens=1024", "train.warmup_steps=400",
        "train.cooldown=0.3", "train.valid_every=500", "train.valid_bleu_sentences=300", "train.threads=1"]
GUIDED = ["train.guided_alignment.weight=0.1"]


def grow_diag_final_and(forward: set, reverse: set) -> set:
    """Koehn et al.'s symmetrization: the links both directions agree on, grown into neighbouring
    links of either direction that align a word not yet aligned, then either direction's links
    between two words neither of which is aligned."""
    union, links = forward | reverse, set(forward & reverse)
    neighbours = [(-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]
    grew = True
    while grew:
        grew = False
        for s, t in sorted(links):
            for ds, dt in neighbours:
                link = (s + ds, t + dt)
                if link in union and link not in links and (
                        all(a != link[0] for a, _ in links) or all(b != link[1] for _, b in links)):
                    links.add(link)
                    grew = True
    for s, t in sorted(union):
        if all(a != s for a, _ in links) and all(b != t for _, b in links):
            links.add((s, t))
    return links


def eflomal_file(path: Path) -> Path:
    """eflomal's symmetrized links of every Multi30k training pair, one Pharaoh line each."""
    if path.is_file():
        return path
    sources, targets = ([normalize(line, False) for line in read_lines(ROOT / f"data/multi30k/train.{lang}.gz")]
                        for lang in ("en", "de"))
    forward, reverse = directional_links([" ".join(s.lower().split()) for s in sources],
                                         [" ".join(t.lower().split()) for t in targets])
    lines = [" ".join(f"{s}-{t}" for s, t in sorted(grow_diag_final_and(f, r))) for f, r in zip(forward, reverse)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def train_side_by_side(runs: dict[str, list[str]], minutes: float) -> None:
    """tokenizer and prepare for each run, then every `nmt train` at once."""
    for name, settings in runs.items():
        for verb in ("tokenizer", "prepare"):
            nmt(verb, RECIPE, *sets(settings))
    processes = [subprocess.Popen([nmt_command(), "train", RECIPE, *sets(settings + [f"train.max_minutes={minutes}"]),
                                   "--no-progress"], cwd=ROOT, stdout=subprocess.DEVNULL)
                 for settings in runs.values()]
    if any(p.wait() for p in processes):
        raise SystemExit("a training run failed")


def tag_placement(engine, cfg, sources: list[str], train: list[list[str]]) -> dict:
    """The tag forms as markup: tags kept, BLEU of the text, where the tags went (against eflomal)."""
    references = list(read_lines(Path(f"{TEST}.de.gz")))
    forms, judged = {}, []
    for width, name in ((1, "tags_one_word"), (2, "tags_two_words")):
        lines, spans = tagged(sources, width)
        outputs, seconds = translated(engine, lines, cfg, markup=True)
        same = [tags_of(out) == tags_of(line) for out, line in zip(outputs, lines)]
        forms[name] = {"lines": len(lines), "seconds": round(seconds, 1), "same_tags_well_formed": sum(same),
                       **score([text_of(out) for out in outputs], references)}
        judged.append((name, lines, spans, outputs, same))
    pairs = [(text_of(line), text_of(out)) for _, lines, _, outputs, _ in judged for line, out in zip(lines, outputs)]
    links = iter(reference_links([p[0] for p in pairs], [p[1] for p in pairs], *train))
    for name, lines, spans, outputs, same in judged:
        verdicts = [placement(reference, range(first, last + 1), tagged_words(out)) if first >= 0 and kept else None
                    for (first, last), out, kept, reference in zip(spans, outputs, same, links)]
        counted = [v for v in verdicts if v is not None]
        forms[name]["placement"] = {
            "judged": len(counted), "exact": round(counted.count("exact") / max(len(counted), 1), 4),
            "overlap_or_exact": round((counted.count("exact") + counted.count("overlap")) / max(len(counted), 1), 4)}
    return forms


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=12.0)
    parser.add_argument("--seed", type=int, default=1, help="train.seed of all three (results file: _seed2 etc.)")
    args = parser.parse_args()
    links = eflomal_file(WORK / "train.eflomal.align")
    runs = {"unguided": [], "guided_dice": GUIDED + ["data.word_alignments=dice"],
            "guided_eflomal": GUIDED + [f"data.word_alignments={links}"]}
    folder = WORK if args.seed == 1 else WORK / f"seed{args.seed}"
    runs = {name: DEMO + [f"output_dir={folder / name}", f"train.seed={args.seed}"] + settings
            for name, settings in runs.items()}
    train_side_by_side(runs, args.minutes)

    import torch

    torch.set_num_threads(2)
    sources, references = (list(read_lines(Path(f"{TEST}.{lang}.gz"))) for lang in ("en", "de"))
    train = [list(read_lines(ROOT / f"data/multi30k/train.{lang}.gz")) for lang in ("en", "de")]
    cfg = load_recipe(ROOT / RECIPE).decode
    results = {}
    for name in runs:
        checkpoint = folder / name / "checkpoints" / "best.pt"
        info = checkpoint_info(checkpoint)
        engine = load_engine([checkpoint])
        outputs, seconds = translated(engine, sources, cfg)
        entry = {"updates": info["step"], "training_minutes": info["training_minutes"], **run_facts(folder / name),
                 "test_2016_flickr": score(outputs, references) | {"seconds": round(seconds, 1)},
                 "markup": {"nmt": tag_placement(engine, cfg, sources, train)}}
        if name != "unguided":
            with tempfile.TemporaryDirectory() as scratch:
                export_checkpoint(checkpoint, Path(scratch) / "ct2")
                entry["markup"]["ctranslate2"] = tag_placement(load_engine([Path(scratch) / "ct2"]), cfg, sources, train)
        results[name] = entry
        print(name, entry["test_2016_flickr"]["bleu"], flush=True)
    name = "guided_alignment.json" if args.seed == 1 else f"guided_alignment_seed{args.seed}.json"
    write_json(RESULTS / name, {
        "recipe": RECIPE, "settings": DEMO, "seed": args.seed, "minutes": args.minutes, "side_by_side": list(runs),
        "guided": {"weight": 0.1, "layer": -2, "heads": 1}, "test": str(TEST.relative_to(ROOT)),
        "reference": "eflomal links (intersection, else union) on Multi30k train + the judged pairs", "runs": results})


if __name__ == "__main__":
    main()
