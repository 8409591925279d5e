"""Markdown's inline marks (`make bench-markdown`): the demo model with decode.markdown on (the
default: marks put back around the output words aligned to theirs, code spans copied) and off, on
three forms of test_2016_flickr (seeded, as experiments.robustness.stress_forms draws them):
one word in `**…**`, two words in a link `[…](https://example.org/a?b=1)`, and a code span
`` `config.yaml` `` inserted between two words. For each: the outputs that keep the marks, and
the BLEU of the outputs with them taken out. Writes experiments/robustness/results/markdown.json.

    python -m experiments.robustness.markdown [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import random
from pathlib import Path

from experiments.robustness.stress_forms import ONE_WORD, TWO_WORDS, tagged
from experiments.shared.demo_model import demo_parser, demo_test_set, score, translated
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine
from nmt.info import checkpoint_info
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
URL = "https://example.org/a?b=1"
CODE = "`config.yaml`"


def with_code(sources: list[str], seed: int = 1) -> list[str]:
    rng, lines = random.Random(seed), []
    for source in sources:
        words = source.split()
        at = rng.randrange(1, len(words)) if len(words) > 1 else 1
        lines.append(" ".join(words[:at] + [CODE] + words[at:]))
    return lines


def forms(sources: list[str]) -> dict:
    """Each form: (lines, whether an output keeps its marks, the output with its marks taken out)."""
    strong = [line.replace(ONE_WORD[0], "**").replace(ONE_WORD[1], "**") for line in tagged(sources, 1)[0]]
    link = [line.replace(TWO_WORDS[0], "[").replace(TWO_WORDS[1], f"]({URL})") for line in tagged(sources, 2)[0]]
    return {
        "one_word_strong": (strong, lambda out: out.count("**") == 2 and "****" not in out,
                            lambda out: " ".join(out.replace("**", "").split())),
        "two_words_linked": (link, lambda out: out.count(f"]({URL})") == 1 and out.count("[") == 1,
                             lambda out: " ".join(out.replace(f"]({URL})", "").replace("[", "").split())),
        "code_span_inserted": (with_code(sources), lambda out: out.count(CODE) == 1,
                               lambda out: " ".join(out.replace(CODE, "").split()))}


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    engine = load_engine([checkpoint])
    on = load_recipe(args.recipe).decode.model_copy(update={"markdown": True})
    settings = {"markdown_on": on, "markdown_off": on.model_copy(update={"markdown": False})}
    result: dict = {"lines": len(sources)}
    for form, (lines, kept, plain) in forms(sources).items():
        result[form] = {}
        for name, cfg in settings.items():
            outputs, seconds = translated(engine, lines, cfg)
            result[form][name] = {"outputs_keeping_the_marks": sum(map(kept, outputs)),
                                  "bleu_without_the_marks": score([plain(o) for o in outputs], references),
                                  "seconds": round(seconds, 2),
                                  "examples": [{"source": s, "output": o} for s, o in zip(lines[:3], outputs[:3])]}
            print(form, name, result[form][name]["outputs_keeping_the_marks"],
                  result[form][name]["bleu_without_the_marks"]["bleu"], flush=True)
    plain_outputs, _ = translated(engine, sources, on)
    result["as_shipped"] = {"bleu": score(plain_outputs, references)}
    write_json(RESULTS / "markdown.json", {"checkpoint": str(checkpoint), "updates": checkpoint_info(checkpoint)["step"],
                                           "test": args.test, **result})


if __name__ == "__main__":
    main()
