"""A glossary on Multi30k (`make bench-glossary`).

Builds a glossary of nouns from the val set, as a terminologist would keep the terms its
translators use consistently: for each English word of at least 4 letters in 5 or more val
sentences, the German noun of their references (a word capitalized inside a sentence: German
capitalizes its nouns) with the highest Dice coefficient over the val pairs, in its most frequent
spelling, where at least 80 % of those sentences' references hold it. Translates test_2016_flickr with the demo model (or -c CKPT) and the
recipe's decode settings, without and with the glossary (`decode.glossary`): BLEU, decoding time,
and how often an output holds a term's translation (as a whole word, in any case) where its
sentence holds the term, beside how often the references themselves do, and how many
sentences the glossary changed. Writes experiments/decoding/results/glossary.json.

    python -m experiments.decoding.glossary [-c runs/demo/checkpoints/best.pt] [--recipe recipes/multi30k_en_de.yaml]
"""

from __future__ import annotations

import re
import tempfile
import time
from collections import Counter
from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_test_set, score, write_study
from nmt.config import load_recipe
from nmt.data.corpus import read_lines
from nmt.decode.engines.engine import load_engine
from nmt.decode.glossary import Glossary, read_glossary
from nmt.decode.text.casing import hypothesis_text
from nmt.decode.translate import translate_lines

RESULTS = Path(__file__).resolve().parent / "results"
MIN_SENTENCES, MIN_SHARE = 5, 0.8


def words(text: str) -> list[str]:
    return [w for w in (re.sub(r"^\W+|\W+$", "", token) for token in text.split()) if w]


def build_glossary(sources: list[str], references: list[str]) -> dict[str, str]:
    """English word -> German noun, by Dice over the pairs (see the module's docstring)."""
    english = [{w.lower() for w in words(s) if w.isalpha() and len(w) >= 4} for s in sources]
    german = [{w for w in words(r)[1:] if len(w) >= 4 and w[0].isupper() and w.isalpha()} for r in references]
    spellings = Counter(w for sentence in german for w in sentence)
    source_count = Counter(w for sentence in english for w in sentence)
    german_count = Counter(w.lower() for sentence in german for w in sentence)
    together = Counter((e, g.lower()) for es, gs in zip(english, german) for e in es for g in gs)
    best: dict[str, tuple[float, str]] = {}
    for (e, g), count in together.items():
        if source_count[e] >= MIN_SENTENCES:
            dice = 2 * count / (source_count[e] + german_count[g])
            if dice > best.get(e, (0.0, ""))[0]:
                best[e] = (dice, g)
    glossary = {}
    for e, (_, g) in sorted(best.items()):
        if together[e, g] >= MIN_SHARE * source_count[e]:
            glossary[e] = max((w for w in spellings if w.lower() == g), key=lambda w: spellings[w])
    return glossary


def term_rate(sources: list[str], outputs: list[str], glossary: Glossary) -> dict:
    """How many (sentence, term) occurrences have the term's translation in the output: as a word
    (`as_words`), and as the glossary checks it (a word, a compound's head, or with an ending of up
    to two letters: Glossary.holds)."""
    pairs = [(target, out) for source, out in zip(sources, outputs) for target in glossary.constraints(source)]
    as_words = sum(target.lower() in {w.lower() for w in words(out)} for target, out in pairs)
    held = sum(glossary.holds(out, (target,)) for target, out in pairs)
    return {"occurrences": len(pairs), "as_words": as_words, "held": held, "held_rate": round(held / max(len(pairs), 1), 4)}


def main() -> None:
    parser = demo_parser()
    parser.add_argument("--val", default="data/multi30k/val", help="The pairs the glossary is built from.")
    args = parser.parse_args()
    checkpoint, sources, references = demo_test_set(args)
    glossary = build_glossary(list(read_lines(Path(f"{args.val}.en.gz"))), list(read_lines(Path(f"{args.val}.de.gz"))))
    engine = load_engine([checkpoint])
    cfg = load_recipe(args.recipe).decode
    result: dict = {"glossary_built_from": args.val, "terms": len(glossary), "glossary": glossary}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "glossary.tsv"
        path.write_text("".join(f"{e}\t{g}\n" for e, g in glossary.items()), encoding="utf-8")
        terms = read_glossary(path)  # (as nmt translate --glossary reads it)
        outputs = {}
        for name, settings in (("without", cfg), ("with", cfg.model_copy(update={"glossary": str(path)}))):
            started = time.perf_counter()
            hyps = translate_lines(engine, sources, settings)
            seconds = time.perf_counter() - started
            outputs[name] = [hypothesis_text(engine.tgt_tokenizer, h[0]) for h in hyps]
            result[f"{name}_glossary"] = {"bleu": score(outputs[name], references), "seconds": round(seconds, 2),
                                          "terms": term_rate(sources, outputs[name], terms)}
            print(name, result[f"{name}_glossary"], flush=True)
    result["references_terms"] = term_rate(sources, references, terms)
    changed = [i for i, (a, b) in enumerate(zip(outputs["without"], outputs["with"])) if a != b]
    result["sentences_changed"] = len(changed)
    result["examples"] = [{"source": sources[i], "without": outputs["without"][i], "with": outputs["with"][i],
                           "reference": references[i]} for i in changed[:5]]
    write_study(RESULTS / "glossary.json", checkpoint, args.test, result)


if __name__ == "__main__":
    main()
