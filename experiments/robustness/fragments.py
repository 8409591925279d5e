"""Sentences typed as in a chat (`make bench-fragments`): the demo model with
decode.complete_sentences on (the default: a sentence given to the model with a capital first
letter and a full stop, the stop taken off its output again) and off, on test_2016_flickr as
shipped, with each line's first letter in lower case, without its final full stop, and both.

BLEU against the references as they are, and, for the forms' own comparison, lowercased with the
final full stops taken off both outputs and references (a typed line's translation has no stop,
and its first letter is the model's to choose). Writes experiments/robustness/results/fragments.json.

    python -m experiments.robustness.fragments [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_test_set, score, translated
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine
from nmt.info import checkpoint_info
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"


def lower_first(line: str) -> str:
    return line[:1].lower() + line[1:]


def without_stop(line: str) -> str:
    return line[:-1].rstrip() if line.endswith(".") else line


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    engine = load_engine([checkpoint])
    recipe = load_recipe(args.recipe).decode
    settings = {"complete_sentences_on": recipe.model_copy(update={"complete_sentences": True}),
                "complete_sentences_off": recipe.model_copy(update={"complete_sentences": False})}
    forms = {"as_shipped": sources, "first_letter_lowered": [lower_first(s) for s in sources],
             "final_stop_removed": [without_stop(s) for s in sources],
             "both": [lower_first(without_stop(s)) for s in sources]}
    stopless_references = [without_stop(r) for r in references]
    result: dict = {"lines": len(sources), "lines_shipped_without_a_final_stop": sum(not s.endswith(".") for s in sources)}
    for form, lines in forms.items():
        result[form] = {}
        for name, cfg in settings.items():
            outputs, seconds = translated(engine, lines, cfg)
            result[form][name] = {
                "bleu": score(outputs, references),
                "bleu_lowercased_without_final_stops": score([without_stop(o) for o in outputs], stopless_references,
                                                             lowercase=True),
                "seconds": round(seconds, 2),
                "examples": [{"source": s, "output": o} for s, o in zip(lines[:3], outputs[:3])]}
            print(form, name, result[form][name]["bleu"]["bleu"],
                  result[form][name]["bleu_lowercased_without_final_stops"]["bleu"], flush=True)
    write_json(RESULTS / "fragments.json", {"checkpoint": str(checkpoint), "updates": checkpoint_info(checkpoint)["step"],
                                            "test": args.test, **result})


if __name__ == "__main__":
    main()
