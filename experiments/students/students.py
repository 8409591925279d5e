"""Students against their teacher (`python -m experiments.students.students`): test_2016_flickr BLEU and
sentences per second of each model with beam search and greedy, on the recipe's decode settings
otherwise, runs alternated `--repeats` times (the median time kept). Writes experiments/students/results/students.json
(or --output; `--test data/multi30k/val` for choices).

    python -m experiments.students.students --model demo=runs/demo/checkpoints/best.pt \
                             --model student=runs/student/checkpoints/best.pt [--threads 2] [--repeats 3]

A model given as several checkpoints joined by commas (`--model teacher=A.pt,B.pt`) translates as
their ensemble.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_test_set, score, translated
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine
from nmt.info import checkpoint_info
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    parser = demo_parser()
    parser.add_argument("--model", action="append", required=True, metavar="NAME=CHECKPOINT")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", default=str(RESULTS / "students.json"))
    args = parser.parse_args()
    _, sources, references = demo_test_set(args)
    beam = load_recipe(Path(args.recipe)).decode
    searches = {"beam": beam, "greedy": beam.model_copy(update={"beam_size": 1})}
    models = {name: [Path(path) for path in paths.split(",")]
              for name, paths in (spec.split("=", 1) for spec in args.model)}
    engines = {name: load_engine(paths, ensemble=len(paths) > 1) for name, paths in models.items()}
    runs = {(name, search): {"seconds": []} for name in models for search in searches}
    for _ in range(args.repeats):
        for (name, search), run in runs.items():
            outputs, seconds = translated(engines[name], sources, searches[search])
            run["seconds"].append(round(seconds, 2))
            run |= score(outputs, references)
    result = {"test": args.test, "recipe": args.recipe, "threads": args.threads, "sentences": len(sources),
              "beam_size": beam.beam_size, "models": {}}
    for name, paths in models.items():
        infos = [checkpoint_info(path) for path in paths]
        shape = engines[name].recipe.model
        train = engines[name].recipe.data.train
        result["models"][name] = {
            "checkpoint": ",".join(map(str, paths)), "updates": [info["step"] for info in infos],
            "training_minutes": [info["training_minutes"] for info in infos],
            "parameters": infos[0]["parameters"], "layers": [shape.encoder_layers, shape.decoder_layers],
            "train": [f"{c.path} (weight {c.weight:g})" for c in train] if isinstance(train, list) else train,
            "started_from": [_start(engines[name].recipe.train, info) for info in infos]}
        for search in searches:
            run = runs[(name, search)]
            median = statistics.median(run["seconds"])
            result["models"][name][search] = run | {"median_seconds": median,
                                                    "sentences_per_second": round(len(sources) / median, 1)}
    print(result)
    write_json(Path(args.output), result)


def _start(train, info: dict) -> str | None:
    """The parent a model was fine-tuned from, with the layers it took of it; None: from scratch."""
    if not info.get("init_from"):
        return None
    picked = [f"{side} layers {layers}" for side, layers in
              (("encoder", train.init_encoder_layers), ("decoder", train.init_decoder_layers)) if layers is not None]
    return info["init_from"] + (f" ({', '.join(picked)})" if picked else "")


if __name__ == "__main__":
    main()
