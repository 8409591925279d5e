"""Text as users have it (`make bench-robustness`): the demo model (or -c CKPT) on test_2016_flickr
in the forms real input comes in, with the recipe's decode settings. Writes results/robustness.json.

    python -m bench.robustness [-c runs/demo/checkpoints/best.pt] [--recipe recipes/multi30k_en_de.yaml]

Forms, each scored with sacreBLEU against the reference (case forms lowercased, as their
translations cannot be expected to restore the reference's case):
- plain: the test set as shipped, with sentence splitting on and off (clean input must not pay:
  BLEU and decoding time of both);
- paragraphs: every three consecutive lines joined by a space into one line, their references
  likewise, translated with splitting on and off, against the same sentences translated one per
  line and joined in threes (the fair comparison: the same references, the same joining);
- upper and title case: every source line in str.upper() / str.title(), with decode.normalize_case
  on and off.
"""

from __future__ import annotations

import time
from pathlib import Path

import sacrebleu

from bench.report import demo_parser, demo_test_set, write_json
from nmt.config import load_recipe
from nmt.decode.casing import hypothesis_text
from nmt.decode.paragraphs import sentences_of
from nmt.decode.translate import load_translator, translate_lines
from nmt.info import checkpoint_info

ROOT = Path(__file__).resolve().parent.parent


def in_threes(lines: list[str]) -> list[str]:
    return [" ".join(lines[i:i + 3]) for i in range(0, len(lines), 3)]


def score(hypotheses: list[str], references: list[str], lowercase: bool = False) -> dict:
    bleu = sacrebleu.metrics.BLEU(lowercase=lowercase)
    result = bleu.corpus_score(hypotheses, [references])
    return {"bleu": round(result.score, 2), "length_ratio": round(result.sys_len / result.ref_len, 4),
            "signature": str(bleu.get_signature())}


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    translator = load_translator([checkpoint])
    on = load_recipe(Path(args.recipe)).decode
    off = on.model_copy(update={"split_sentences": False})

    def translate(lines: list[str], cfg) -> tuple[list[str], float]:
        start = time.perf_counter()
        out = [hypothesis_text(translator.tgt_tokenizer, h[0]) for h in translate_lines(translator, lines, cfg)]
        return out, time.perf_counter() - start

    forms: dict = {}
    plain = {}
    for name, cfg in (("split_off", off), ("split_on", on), ("split_off_again", off), ("split_on_again", on)):
        hypotheses, seconds = translate(sources, cfg)
        plain[name] = {"seconds": round(seconds, 1), **score(hypotheses, references)}
        if name == "split_on":
            one_per_line = hypotheses
    forms["plain"] = plain | {"lines_of_several_sentences": sum(len(sentences_of(s, "en")) > 1 for s in sources)}
    paragraphs, paragraph_refs = in_threes(sources), in_threes(references)
    forms["paragraphs_of_3"] = {"lines": len(paragraphs),
                                "one_per_line_joined": score(in_threes(one_per_line), paragraph_refs)}
    for name, cfg in (("split_on", on), ("split_off", off)):
        hypotheses, seconds = translate(paragraphs, cfg)
        forms["paragraphs_of_3"][name] = {"seconds": round(seconds, 1), **score(hypotheses, paragraph_refs)}
    as_is = on.model_copy(update={"normalize_case": False})
    for name, change in (("uppercase", str.upper), ("title_case", str.title)):
        forms[name] = {}
        for setting, cfg in (("normalize_case_on", on), ("normalize_case_off", as_is)):
            hypotheses, _ = translate([change(s) for s in sources], cfg)
            forms[name][setting] = score(hypotheses, references, lowercase=True)
            forms[name][setting]["all_caps_outputs"] = sum(h.isupper() for h in hypotheses)
    forms["plain_lowercased"] = score(one_per_line, references, lowercase=True)
    info = checkpoint_info(checkpoint)
    result = {"checkpoint": str(checkpoint), "updates": info["step"], "training_minutes": info["training_minutes"],
              "recipe": args.recipe, "test": args.test, "threads": args.threads, "sentences": len(sources),
              "forms": forms}
    print(result)
    write_json(ROOT / "results" / "robustness.json", result)


if __name__ == "__main__":
    main()
