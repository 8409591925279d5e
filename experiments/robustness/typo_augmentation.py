"""Does training with typos (data.augment.typos) pay? Each pair of runs trained alike but for the
augmentation (the same recipe, seeds and minutes), on test_2016_flickr as shipped and with one typo
in every line (nmt.data.augment's, seed 1), with the recipe's decode settings; plain decoding time
beside each. Writes experiments/robustness/results/typo_augmentation.json.

    python -m experiments.robustness.typo_augmentation --pair runs/aug_off/checkpoints/best.pt runs/aug_typos/checkpoints/best.pt \
                                      --pair runs/aug_off2/checkpoints/best.pt runs/aug_typos2/checkpoints/best.pt

Decoding times come from alternated runs (without, with, without, with) of the same lines.
"""

from __future__ import annotations

import random
from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_test_set, score, translated
from nmt.config import load_recipe
from nmt.data.augment import with_typo
from nmt.decode.engines.engine import load_engine
from nmt.info import checkpoint_info
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    parser = demo_parser()
    parser.add_argument("--pair", nargs=2, action="append", required=True, metavar=("WITHOUT", "WITH"),
                        help="Checkpoints trained without and with data.augment.typos.")
    parser.add_argument("--repeats", type=int, default=2, help="Timed decodings of the plain input per model.")
    args = parser.parse_args()
    _, sources, references = demo_test_set(args)
    cfg = load_recipe(Path(args.recipe)).decode
    rng = random.Random(1)
    with_typos = [with_typo(s, rng) for s in sources]
    pairs = []
    for checkpoints in args.pair:
        engines = [load_engine([Path(c)]) for c in checkpoints]
        seconds: list[list[float]] = [[], []]
        outputs: list[list[str]] = [[], []]
        for _ in range(args.repeats):
            for k, engine in enumerate(engines):
                outputs[k], took = translated(engine, sources, cfg)
                seconds[k].append(round(took, 2))
        models = []
        for k, (checkpoint, engine) in enumerate(zip(checkpoints, engines)):
            typo_outputs, _ = translated(engine, with_typos, cfg)
            info = checkpoint_info(Path(checkpoint))
            models.append({"checkpoint": checkpoint, "augment": engine.recipe.data.augment.model_dump(),
                           "train_seed": engine.recipe.train.seed, "updates": info["step"],
                           "training_minutes": info["training_minutes"],
                           "plain": score(outputs[k], references) | {"seconds": seconds[k]},
                           "typos": score(typo_outputs, references)})
        pairs.append(models)
    result = {"test": args.test, "recipe": args.recipe, "threads": args.threads, "sentences": len(sources),
              "pairs": pairs}
    print(result)
    write_json(RESULTS / "typo_augmentation.json", result)


if __name__ == "__main__":
    main()
