"""Words in capitals in ordinary sentences (`make bench-capitals`): emphasis ("an ORANGE hat") and
names in capitals ("an AMC building"), through the demo model with decode.normalize_case on (the
default: such a word translated in lower case, and written in capitals again where the output
copies it) and off.

- Emphasis: one word of 3 or more letters of each test_2016_flickr line written in capitals
  (seeded): BLEU, cased and lowercased, against the references; the test set as shipped beside.
- Names in capitals: the Multi30k training lines holding such a word ("AMC", "DHL", "LUCKY"),
  which the model was trained on: BLEU, and the outputs that hold every such word in capitals.
Writes experiments/robustness/results/capitals.json.

    python -m experiments.robustness.capitals [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import functools
import random
import re
from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_test_set, score, translated
from nmt.config import load_recipe
from nmt.data.corpus import read_lines
from nmt.decode.engines.engine import load_engine
from nmt.decode.text.casing import capitalized_words
from nmt.info import checkpoint_info
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[2]


def one_word_in_capitals(sources: list[str], seed: int = 1) -> list[str]:
    rng, lines = random.Random(seed), []
    for line in sources:
        words = line.split()
        candidates = [i for i, w in enumerate(words) if i > 0 and re.fullmatch(r"[a-z]{3,}[.,!?]?", w)]
        if candidates:
            i = rng.choice(candidates)
            words[i] = words[i].upper()
        lines.append(" ".join(words))
    return lines


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    engine = load_engine([checkpoint])
    on = load_recipe(args.recipe).decode
    settings = {"normalize_case_on": on, "normalize_case_off": on.model_copy(update={"normalize_case": False})}
    emphasised = one_word_in_capitals(sources)
    pieces = functools.cache(lambda word: len(engine.src_tokenizer.encode(word)))
    train = [list(read_lines(ROOT / f"data/multi30k/train.{lang}.gz")) for lang in ("en", "de")]
    named = [(en, de) for en, de in zip(*train) if capitalized_words(en, pieces)]
    result: dict = {"emphasis": {"lines": len(emphasised)}, "names_in_training_lines": {"lines": len(named)}}
    for name, cfg in settings.items():
        plain, _ = translated(engine, sources, cfg)
        outputs, _ = translated(engine, emphasised, cfg)
        result["emphasis"][name] = {"as_shipped": score(plain, references), "cased": score(outputs, references),
                                    "lowercased": score(outputs, references, lowercase=True),
                                    "examples": [{"source": s, "output": o} for s, o in zip(emphasised[:5], outputs[:5])]}
        outputs, _ = translated(engine, [en for en, _ in named], cfg)
        kept = sum(all(en[a:b] in out for a, b in capitalized_words(en, pieces)) for (en, _), out in zip(named, outputs))
        result["names_in_training_lines"][name] = {"bleu": score(outputs, [de for _, de in named]),
                                                   "outputs_with_the_words_in_capitals": kept}
        print(name, "emphasis (lowercased BLEU):", result["emphasis"][name]["lowercased"]["bleu"],
              "names:", result["names_in_training_lines"][name]["bleu"]["bleu"], kept, flush=True)
    write_json(RESULTS / "capitals.json", {"checkpoint": str(checkpoint), "updates": checkpoint_info(checkpoint)["step"],
                                           "test": args.test, **result})


if __name__ == "__main__":
    main()
