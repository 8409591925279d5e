"""Names copied as written (`make bench-names`): the demo model with decode.copy_names on (the
default: a capitalized word inside a sentence that the vocabulary spells in pieces stays in the
sentence, and the doubtful output words aligned to it are replaced by it) and off.

- On val, the lines with names: BLEU, chrF and the names the reference has as written that the
  output has too, at several thresholds of doubt (names.DOUBTFUL), the one shipped among them.
- On the test set: the same for its lines with names, and the whole test set, on and off, with
  the seconds the whole test set took, on and off in turns.
Writes experiments/robustness/results/names.json.

    python -m experiments.robustness.names [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path

import sacrebleu

import nmt.decode.text.names as names
from experiments.shared.demo_model import demo_parser, demo_test_set, score, translated
from nmt.config import load_recipe
from nmt.data.corpus import read_lines
from nmt.decode.engines.engine import load_engine
from nmt.info import checkpoint_info
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
THRESHOLDS = (math.exp(-1.0), math.exp(-1.5), names.DOUBTFUL, math.exp(-2.0), math.exp(-2.5))


def names_written(sources: list[str], outputs: list[str], references: list[str], pieces) -> tuple[int, int]:
    """(names the references have as written, and of those the outputs have too)."""
    def has(text: str, name: str) -> bool:
        return re.search(rf"(?<![^\W_]){re.escape(name)}(?![^\W_])", text) is not None

    wanted = [(s[a:b], out) for s, out, ref in zip(sources, outputs, references)
              for a, b in names.name_spans(s, pieces) if has(ref, s[a:b])]
    return len(wanted), sum(has(out, name) for name, out in wanted)


def measured(engine, sources: list[str], references: list[str], cfg, pieces) -> dict:
    outputs, seconds = translated(engine, sources, cfg)
    in_references, written = names_written(sources, outputs, references, pieces)
    return {"bleu": score(outputs, references), "chrf": round(sacrebleu.corpus_chrf(outputs, [references]).score, 2),
            "names_in_references": in_references, "of_them_in_outputs": written, "seconds": round(seconds, 2),
            "examples": [{"source": s, "output": o} for s, o in zip(sources[:8], outputs[:8])]}


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    engine = load_engine([checkpoint])
    on = load_recipe(args.recipe).decode
    off = on.model_copy(update={"copy_names": False})
    pieces = functools.cache(lambda word: len(engine.src_tokenizer.encode(word)))
    val = [list(read_lines(Path(f"data/multi30k/val.{lang}.gz"))) for lang in ("en", "de")]
    val_named = [(en, de) for en, de in zip(*val) if names.name_spans(en, pieces)]
    shipped = names.DOUBTFUL
    sweep = {"lines": len(val_named), "off": measured(engine, *map(list, zip(*val_named)), off, pieces)}
    for threshold in THRESHOLDS:
        names.DOUBTFUL = threshold
        sweep[f"doubtful_below_{threshold:.3f}"] = measured(engine, *map(list, zip(*val_named)), on, pieces)
        print("val, doubtful below", round(threshold, 3), sweep[f"doubtful_below_{threshold:.3f}"]["bleu"]["bleu"],
              flush=True)
    names.DOUBTFUL = shipped
    test_named = [(en, de) for en, de in zip(sources, references) if names.name_spans(en, pieces)]
    result = {"doubtful_below": shipped, "val_lines_with_names": sweep,
              "test_lines_with_names": {"lines": len(test_named)}, "test_set": {"lines": len(sources)}}
    for name, cfg in (("copy_names_on", on), ("copy_names_off", off)):
        result["test_lines_with_names"][name] = measured(engine, *map(list, zip(*test_named)), cfg, pieces)
        result["test_set"][name] = measured(engine, sources, references, cfg, pieces)
        print(name, "test lines with names:", result["test_lines_with_names"][name]["bleu"]["bleu"],
              "test set:", result["test_set"][name]["bleu"]["bleu"], flush=True)
    # the rule's cost: the whole test set, on and off in turns, three times each
    for _ in range(3):
        for name, cfg in (("copy_names_off", off), ("copy_names_on", on)):
            result["test_set"][name].setdefault("seconds_in_turns", []).append(round(translated(engine, sources, cfg)[1], 2))
    print({name: result["test_set"][name]["seconds_in_turns"] for name in ("copy_names_on", "copy_names_off")})
    write_json(RESULTS / "names.json", {"checkpoint": str(checkpoint), "updates": checkpoint_info(checkpoint)["step"],
                                        "test": args.test, **result})


if __name__ == "__main__":
    main()
