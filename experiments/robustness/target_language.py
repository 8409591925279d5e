"""Sentences already in the target language (`make bench-target-language`): the demo model with
decode.keep_target_language on (the default: such a sentence copied as it is) and off.

- The identifier alone: how many of Multi30k's English training, val and test lines it takes for
  German (each one would be copied untranslated), how many German val and test lines it finds,
  and how many French test lines it takes for German.
- German lines given to the English-German model (test_2016_flickr's references): BLEU against
  the lines themselves, which a copy scores 100.
- Paragraphs mixing the two: each of the first 500 test lines followed by the next line's German
  reference, against that line's reference and the same German sentence.
- The test set as shipped: BLEU, and seconds on and off in turns, three times each; and the
  seconds the identifier takes to load, once per process.
Writes experiments/robustness/results/target_language.json.

    python -m experiments.robustness.target_language [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import time
from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_test_set, score, translated
from nmt.config import load_recipe
from nmt.data import language_filter
from nmt.data.corpus import read_lines
from nmt.decode.engines.engine import load_engine
from nmt.decode.text.target_language import THRESHOLD, in_target_language
from nmt.info import checkpoint_info
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"


def lines_of(split: str, lang: str) -> list[str]:
    return list(read_lines(Path(f"data/multi30k/{split}.{lang}.gz")))


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    engine = load_engine([checkpoint])
    on = load_recipe(args.recipe).decode
    off = on.model_copy(update={"keep_target_language": False})
    language_filter._loaded.cache_clear()
    start = time.perf_counter()
    in_target_language(["A dog runs."], [("en", "de")])
    load_seconds = round(time.perf_counter() - start, 2)
    english = {split: lines_of(split, "en") for split in ("train", "val", "test_2016_flickr")}
    german = lines_of("val", "de") + references
    result: dict = {"threshold": THRESHOLD, "identifier_load_seconds": load_seconds, "identifier": {
        **{f"english_{split}_lines_found_german": [sum(in_target_language(lines, [("en", "de")] * len(lines))), len(lines)]
           for split, lines in english.items()},
        "german_val_and_test_lines_found_german": [sum(in_target_language(german, [("en", "de")] * len(german))),
                                                  len(german)],
        "french_test_lines_found_german": [sum(in_target_language(french := lines_of("test_2016_flickr", "fr"),
                                                                  [("en", "de")] * len(french))), len(french)]}}
    print(result, flush=True)
    mixed = [f"{s} {references[i + 1]}" for i, s in enumerate(sources[:500])]
    mixed_references = [f"{references[i]} {references[i + 1]}" for i in range(500)]
    for name, cfg in (("keep_target_language_on", on), ("keep_target_language_off", off)):
        copies, _ = translated(engine, references, cfg)
        paragraphs, _ = translated(engine, mixed, cfg)
        plain, _ = translated(engine, sources, cfg)
        result[name] = {
            "german_lines_given": {"bleu_against_themselves": score(copies, references),
                                   "copied_unchanged": sum(c == r for c, r in zip(copies, references)),
                                   "examples": [{"source": r, "output": c} for r, c in zip(references[:5], copies[:5])]},
            "paragraphs_of_english_then_german": {"bleu": score(paragraphs, mixed_references),
                                                  "german_sentence_kept": sum(p.endswith(references[i + 1])
                                                                              for i, p in enumerate(paragraphs))},
            "test_set": {"bleu": score(plain, references)}}
        print(name, {k: v.get("bleu_against_themselves", v.get("bleu"))["bleu"] for k, v in result[name].items()},
              flush=True)
    for _ in range(3):  # the cost on the test set, on and off in turns
        for name, cfg in (("keep_target_language_off", off), ("keep_target_language_on", on)):
            result[name]["test_set"].setdefault("seconds_in_turns", []).append(round(translated(engine, sources, cfg)[1], 2))
    print({name: result[name]["test_set"]["seconds_in_turns"] for name in ("keep_target_language_on", "keep_target_language_off")})
    write_json(RESULTS / "target_language.json", {"checkpoint": str(checkpoint),
                                                  "updates": checkpoint_info(checkpoint)["step"], "test": args.test, **result})


if __name__ == "__main__":
    main()
