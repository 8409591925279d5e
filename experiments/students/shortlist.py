"""Lexical shortlists on Multi30k (`python -m experiments.students.shortlist`, after `make demo` and `make student`).

1. Which shortlist, chosen on val with the student (greedy): co-occurrence (`nmt shortlist`) against
   p(t | s) from eflomal's alignments of the training pieces (both directions' links, united;
   `pip install 'nmt[bench]'`), each with the 100 most frequent target pieces and --best N more
   per source piece: the share of each reference's pieces among its own sentence's candidates
   (coverage), the mean candidates of one sentence, and BLEU.
2. What it buys, on test_2016_flickr: BLEU and sentences per second of nmt's engine and of the
   CTranslate2 export (fp32, the shortlist as its vocabulary map) with and without the chosen
   shortlist, for the demo (beam) and the student (greedy), at the recipe's batches
   (decode.max_tokens) and at small ones (--small-batch tokens), runs alternated --repeats times;
   with the shortlist, also the share of lines identical to the full vocabulary's.

Writes experiments/students/results/shortlist.json.
"""

from __future__ import annotations

import multiprocessing
import statistics
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from experiments.shared.demo_model import demo_parser, score, translated
from experiments.shared.reference_alignment import directional_links
from nmt.checkpoint import load_checkpoint, tokenizer_models
from nmt.config import load_recipe
from nmt.data.corpus import read_lines
from nmt.data.tokenizer import load_processor
from nmt.decode.engines.engine import load_engine
from nmt.data.vocabulary_map import write_vocabulary_map
from nmt.decode.shortlist import read_shortlist
from nmt.jobs.shortlist_build import aligned_shortlist, cooccurrence_shortlist
from nmt.export.ctranslate2 import export_ctranslate2
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"


def eflomal_links(sources: list[list[str]], targets: list[list[str]]) -> list[set[tuple[int, int]]]:
    """eflomal's links between the pieces of each pair, both directions united."""
    fwd, rev = directional_links([" ".join(s) for s in sources], [" ".join(t) for t in targets])
    return [f | r for f, r in zip(fwd, rev)]


def coverage(path: Path, engine, sources: list[str], references: list[str]) -> dict:
    """Per sentence alone: the share of its reference's pieces among its candidates, and how many those are."""
    shortlist = read_shortlist(path, engine.tgt_tokenizer)
    covered = total = size = 0
    for source, reference in zip(sources, references):
        allowed = set(shortlist.candidates([engine.src_tokenizer.encode(source, out_type=str)]))
        wanted = engine.tgt_tokenizer.encode(reference)
        covered += sum(t in allowed for t in wanted)
        total += len(wanted)
        size += len(allowed)
    return {"reference_pieces_covered": round(covered / total, 4), "candidates_per_sentence": round(size / len(sources))}


def timed(model: Path, configs: dict, sources: list[str], threads: int, repeats: int) -> dict:
    """In a process of its own: each decode setting's outputs and median sentences per second,
    the settings alternated `repeats` times."""
    import torch

    torch.set_num_threads(threads)
    engine = load_engine([model], threads=threads)
    runs = {key: {"seconds": []} for key in configs}
    for _ in range(repeats):
        for key, cfg in configs.items():
            runs[key]["outputs"], seconds = translated(engine, sources, cfg)
            runs[key]["seconds"].append(round(seconds, 2))
    for run in runs.values():
        run["sentences_per_second"] = round(len(sources) / statistics.median(run["seconds"]), 1)
    return runs


def main() -> None:
    parser = demo_parser()
    parser.add_argument("--student", default="runs/student/checkpoints/best.pt")
    parser.add_argument("--best", type=int, nargs="*", default=[25, 50, 100])
    parser.add_argument("--small-batch", type=int, default=256, help="decode.max_tokens of the small batches")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--output", default=str(RESULTS / "shortlist.json"))
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    models = {"demo": Path(args.checkpoint), "student": Path(args.student)}
    recipe = load_recipe(Path(args.recipe)).decode
    data = {split: [list(read_lines(ROOT / f"data/multi30k/{split}.{lang}.gz")) for lang in ("en", "de")]
            for split in ("train", "val", "test_2016_flickr")}
    scratch = Path(tempfile.mkdtemp(prefix="nmt-shortlist-"))
    result = {"models": {name: str(path) for name, path in models.items()}, "threads": args.threads,
              "recipe": args.recipe, "frequent": 100, "choice_on_val": {}, "test": {}}

    # 1. The shortlists of each model's tokenizers (the demo and the student have their own), compared on val.
    files = {}
    for name, checkpoint in models.items():
        protos = tokenizer_models(load_checkpoint(checkpoint))
        pieces = [load_processor(model_proto=protos[side]).encode(lines, out_type=str)
                  for side, lines in zip(("src", "tgt"), data["train"])]
        links = eflomal_links(*pieces)
        for best in args.best:
            for method, built in (("cooccurrence", cooccurrence_shortlist(*pieces, best=best)),
                                  ("eflomal", aligned_shortlist(*pieces, links, best=best))):
                files[(name, method, best)] = scratch / f"{name}.{method}.{best}.txt"
                write_vocabulary_map(files[(name, method, best)], *built)
    student = load_engine([models["student"]])
    greedy = recipe.model_copy(update={"beam_size": 1})
    val_sources, val_references = data["val"]
    plain, _ = translated(student, val_sources, greedy)
    result["choice_on_val"]["none"] = score(plain, val_references)
    for (name, method, best), path in files.items():
        if name == "student":
            outputs, _ = translated(student, val_sources, greedy.model_copy(update={"shortlist": str(path)}))
            result["choice_on_val"][f"{method}, best {best}"] = (
                score(outputs, val_references) | coverage(path, student, val_sources, val_references))
            print(f"{method} {best}", result["choice_on_val"][f"{method}, best {best}"])
    chosen = max((key for key in files if key[0] == "student"),
                 key=lambda key: (result["choice_on_val"][f"{key[1]}, best {key[2]}"]["bleu"], -key[2]))
    result["chosen"] = {"method": chosen[1], "best": chosen[2]}

    # 2. Speed and BLEU on test, with and without the chosen shortlist, in both engines. Each engine
    # is timed in a process of its own: torch's and CTranslate2's thread pools slow each other down
    # when both have run in one process (CTranslate2 at about 0.6x its own speed after a torch run).
    sources, references = data["test_2016_flickr"]
    for name, checkpoint in models.items():
        shortlist = files[(name, chosen[1], chosen[2])]
        export = scratch / f"{name}.ct2"
        export_ctranslate2(checkpoint, export, shortlist=shortlist)
        search = recipe if name == "demo" else greedy
        configs = {(batch, listed): search.model_copy(update={"max_tokens": batch, "shortlist": listed})
                   for batch in (search.max_tokens, args.small_batch) for listed in (None, str(shortlist))}
        for engine, model in (("nmt", checkpoint), ("ctranslate2", export)):
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
                runs = pool.submit(timed, model, configs, sources, args.threads, args.repeats).result()
            full = {batch: run["outputs"] for (batch, listed), run in runs.items() if not listed}
            for (batch, listed), run in runs.items():
                outputs = run.pop("outputs")
                run |= score(outputs, references)
                if listed:  # the goal: (nearly) the same translations as without the shortlist
                    run["identical_lines"] = round(sum(a == b for a, b in zip(outputs, full[batch])) / len(outputs), 4)
                key = (f"{name}, {engine}, beam {search.beam_size}, max_tokens {batch}, "
                       f"{'shortlist' if listed else 'full vocabulary'}")
                result["test"][key] = run
                print(key, run["bleu"], run["sentences_per_second"])
    write_json(Path(args.output), result)


if __name__ == "__main__":
    main()
