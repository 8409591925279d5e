"""The student as deployed (`python -m experiments.students.student_deployment`, after `make student`): its
CTranslate2 int8 export with the lexical shortlist as vocabulary map, translating greedily, against
the demo with its beam in nmt's engine and the student's own fp32 beam.

On test_2016_flickr, 2 threads: BLEU and sentences per second of
- the demo, beam (the recipe's decode settings), nmt's engine;
- the student, greedy and beam, fp32, nmt's engine;
- the student exported to CTranslate2, fp32 and int8, greedy, without and with the shortlist (`use_vmap`);
- the demo's beam, the student's greedy search and its int8 + shortlist export on two single-threaded
  worker processes, each translating half of the test set (what `--nproc 2` does, start-up left out).
Rounds alternate between nmt's runs and CTranslate2's, the latter in a process of their own (the
two thread pools slow each other down in one process); each run's median time is kept.
The shortlist is built from the training corpus with `nmt shortlist`'s defaults. Writes
experiments/students/results/student_deployment.json.

    python -m experiments.students.student_deployment [--student runs/student/checkpoints/best.pt] [--repeats 3]
"""

from __future__ import annotations

import multiprocessing
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_test_set, score, translated
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine
from nmt.jobs.shortlist_build import build_shortlist
from nmt.export.ctranslate2 import export_ctranslate2
from nmt.info import checkpoint_info
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
_ENGINES: dict = {}  # in a worker process: its engines, each loaded once
_WARMED: set = set()  # in a worker process: the (engine, decode settings) already warmed up


def worker_translated(path: Path, threads: int, sources: list[str], cfg) -> tuple[list[str], float]:
    """In a worker process: `sources` translated by the engine of `path` (a checkpoint or an
    export) on `threads` threads, loaded once and warmed up once per search; (outputs, seconds)."""
    if path not in _ENGINES:
        import torch

        torch.set_num_threads(threads)
        _ENGINES[path] = load_engine([path], threads=threads)
    search = (path, cfg.model_dump_json())
    if search not in _WARMED:
        translated(_ENGINES[path], sources[:50], cfg)
        _WARMED.add(search)
    return translated(_ENGINES[path], sources, cfg)


def ctranslate2_round(exports: dict[str, Path], sources: list[str], searches: dict, threads: int) -> dict:
    """One round in the CTranslate2 worker process: each search (name: (export, decode settings))
    once, (outputs, seconds) each."""
    return {name: worker_translated(exports[export], threads, sources, cfg) for name, (export, cfg) in searches.items()}


def two_workers(pools: list[ProcessPoolExecutor], path: Path, sources: list[str], cfg) -> tuple[list[str], float]:
    """The test set split into two contiguous halves, one per single-threaded worker, as two
    processes of one thread each share two cores (`nmt translate --nproc 2`, without the start-up):
    the outputs in order, and the seconds until both halves are done."""
    half = (len(sources) + 1) // 2
    start = time.perf_counter()
    futures = [pool.submit(worker_translated, path, 1, share, cfg) for pool, share in zip(pools, (sources[:half], sources[half:]))]
    outputs = [line for future in futures for line in future.result()[0]]
    return outputs, time.perf_counter() - start


def main() -> None:
    parser = demo_parser()
    parser.add_argument("--student", default="runs/student/checkpoints/best.pt")
    parser.add_argument("--train", default="data/multi30k/train", help="Corpus prefix the shortlist is built from.")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", default=str(RESULTS / "student_deployment.json"))
    args = parser.parse_args()
    demo, sources, references = demo_test_set(args)
    student = Path(args.student)
    beam = load_recipe(Path(args.recipe)).decode  # the demo's decode settings, for both models
    greedy = beam.model_copy(update={"beam_size": 1})
    engines = {"demo": load_engine([demo]), "student": load_engine([student])}
    torch_runs = {"demo, beam, nmt": ("demo", beam), "student, greedy, nmt fp32": ("student", greedy),
                  "student, beam, nmt fp32": ("student", beam)}
    with tempfile.TemporaryDirectory() as scratch:
        shortlist = Path(scratch) / "shortlist.txt"
        built = build_shortlist(student, Path(f"{args.train}.en.gz"), Path(f"{args.train}.de.gz"), shortlist)
        exports = {quantization: Path(scratch) / f"ctranslate2_{quantization}" for quantization in ("float32", "int8")}
        for quantization, export in exports.items():
            export_ctranslate2(student, export, quantization, shortlist=shortlist)
        with_shortlist = greedy.model_copy(update={"shortlist": str(shortlist)})
        ct2_searches = {f"student, greedy, CTranslate2 {q}{' + shortlist' if cfg.shortlist else ''}": (q, cfg)
                        for q in exports for cfg in (greedy, with_shortlist)}
        split_runs = {"demo, beam, nmt, 2 processes x 1 thread": (demo, beam),
                      "student, greedy, nmt fp32, 2 processes x 1 thread": (student, greedy),
                      "student, greedy, CTranslate2 int8 + shortlist, 2 processes x 1 thread": (exports["int8"], with_shortlist)}
        runs: dict[str, dict] = {name: {"seconds": []} for name in [*torch_runs, *ct2_searches, *split_runs]}
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(1, mp_context=spawn) as pool, \
                ProcessPoolExecutor(1, mp_context=spawn) as first, ProcessPoolExecutor(1, mp_context=spawn) as second:
            for name, (model, cfg) in torch_runs.items():  # warm-up
                translated(engines[model], sources[:50], cfg)
            for path, cfg in split_runs.values():  # each worker loads and warms up its engines
                two_workers([first, second], path, sources[:100], cfg)
            for _ in range(args.repeats):
                results = {name: translated(engines[model], sources, cfg) for name, (model, cfg) in torch_runs.items()}
                results |= pool.submit(ctranslate2_round, exports, sources, ct2_searches, args.threads).result()
                results |= {name: two_workers([first, second], path, sources, cfg) for name, (path, cfg) in split_runs.items()}
                for name, (outputs, seconds) in results.items():
                    runs[name]["seconds"].append(round(seconds, 2))
                    runs[name] |= score(outputs, references)
    for run in runs.values():
        run["median_seconds"] = statistics.median(run["seconds"])
        run["sentences_per_second"] = round(len(sources) / run["median_seconds"], 1)
    baseline = runs["demo, beam, nmt"]["median_seconds"]
    for run in runs.values():
        run["speed_vs_demo_beam"] = round(baseline / run["median_seconds"], 2)
    info = checkpoint_info(student)
    result = {"test": args.test, "threads": args.threads, "sentences": len(sources), "repeats": args.repeats,
              "demo": str(demo), "student": str(student), "student_updates": info["step"],
              "shortlist": {"built_from": args.train, "source_pieces": built.source_pieces, "always": built.always}, "runs": runs}
    print(result)
    write_json(Path(args.output), result)


if __name__ == "__main__":
    main()
