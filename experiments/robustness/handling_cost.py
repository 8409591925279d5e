"""What the handling of text as users have it costs on clean input: the demo model (or -c CKPT)
translates test_2016_flickr as shipped with decode.split_sentences, normalize_case and
copy_verbatim all on (the default) and all off, alternately, `--repeats` times each; the BLEU of
both and every time, with the median. Writes experiments/robustness/results/handling_cost.json.

    python -m experiments.robustness.handling_cost [-c runs/demo/checkpoints/best.pt] [--repeats 5]
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
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    checkpoint, sources, references = demo_test_set(args)
    engine = load_engine([checkpoint])
    on = load_recipe(Path(args.recipe)).decode
    off = on.model_copy(update={"split_sentences": False, "normalize_case": False, "copy_verbatim": False})
    runs: dict[str, dict] = {"handling_on": {"seconds": []}, "handling_off": {"seconds": []}}
    for _ in range(args.repeats):
        for name, cfg in (("handling_off", off), ("handling_on", on)):
            outputs, seconds = translated(engine, sources, cfg)
            runs[name]["seconds"].append(round(seconds, 2))
            runs[name] |= score(outputs, references)
    for run in runs.values():
        run["median_seconds"] = statistics.median(run["seconds"])
    info = checkpoint_info(checkpoint)
    result = {"checkpoint": str(checkpoint), "updates": info["step"], "recipe": args.recipe, "test": args.test,
              "threads": args.threads, "sentences": len(sources), **runs,
              "time_ratio_on_to_off": round(runs["handling_on"]["median_seconds"]
                                            / runs["handling_off"]["median_seconds"], 4)}
    print(result)
    write_json(RESULTS / "handling_cost.json", result)


if __name__ == "__main__":
    main()
