"""What does a corpus escaped by the Moses tokenizer (`it &apos;s`, `&quot;`, `&amp;`: the escaping
of fairseq's and Moses's preprocessing scripts) cost a model, and what does `nmt prepare`'s
data.unescape (on by default) win back?

    python -m experiments.cleaning.escaped_corpus [--updates 1500] [--seed 1] [--trained]

Multi30k's en→de training corpus (29,000 pairs) with both sides escaped as Moses's
`escape-special-chars.perl` writes them (& ' " < > | [ ]), without its tokenization. The demo's
settings for a fixed number of updates on that corpus, prepared with data.unescape off (the
references learned as written) and on, side by side, one CPU thread each (the demo's tokenizer;
runs/demo: `make demo` makes it); then test_2016_flickr, as shipped (unescaped text, as users
type it), translated from last.pt: sacreBLEU and chrF, BLEU of the test lines that hold a mark
Moses escapes, and the outputs that hold a reference. Results:
experiments/cleaning/results/escaped_corpus.json (escaped_corpus_seed2.json for --seed 2, ...).
"""

from __future__ import annotations

import argparse
import json

import sacrebleu

from experiments.cleaning.copies import runs_of
from experiments.cleaning.language_filter import RESULTS, RUNS, lines, trained_on
from experiments.shared.runs import DEMO_RUN
from nmt.data.escapes import REFERENCE
from tools.results import write_json

RUNS_OF = {"escaped_as_written": ["data.unescape=false"], "escaped_unescaped": []}
MOSES_ESCAPES = {"&": "&amp;", "|": "&#124;", "<": "&lt;", ">": "&gt;", "'": "&apos;", '"': "&quot;",
                 "[": "&#91;", "]": "&#93;"}


def moses_escaped(line: str) -> str:
    """`line` as Moses's escape-special-chars.perl writes it ("&" first, as it does)."""
    return "".join(MOSES_ESCAPES.get(char, char) for char in line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=1, help="train.seed of both runs")
    parser.add_argument("--trained", action="store_true", help="score the runs already trained in runs/cleaning")
    args = parser.parse_args()
    if not (DEMO_RUN / "spm.model").is_file():
        raise SystemExit("runs/demo: no tokenizer (run `make demo` first)")
    corpus = list(zip(lines("train", "en"), lines("train", "de")))
    pairs = [(moses_escaped(s), moses_escaped(t)) for s, t in corpus]
    sources, references = lines("test_2016_flickr", "en"), lines("test_2016_flickr", "de")
    marked = [i for i, (s, r) in enumerate(zip(sources, references)) if any(c in MOSES_ESCAPES for c in s + r)]
    result = {"updates": args.updates, "seed": args.seed,
              "escaped_training_lines": sum(p != q for p, q in zip(pairs, corpus)),
              "test_lines_with_escaped_marks": len(marked)}
    print(json.dumps(result), flush=True)
    result["training"] = trained_on(pairs, RUNS / "escaped", runs_of(args.seed, RUNS_OF), args.updates, args.trained)
    for record in result["training"]:
        outputs = (RUNS / record["name"] / "test.de").read_text(encoding="utf-8").splitlines()
        record["test_lines_with_escaped_marks_bleu"] = round(sacrebleu.corpus_bleu(
            [outputs[i] for i in marked], [[references[i] for i in marked]]).score, 2)
        record["outputs_with_a_reference"] = sum(bool(REFERENCE.search(o)) for o in outputs)
        print(json.dumps({"name": record["name"], "marked_bleu": record["test_lines_with_escaped_marks_bleu"],
                          "outputs_with_a_reference": record["outputs_with_a_reference"]}), flush=True)
    write_json(RESULTS / ("escaped_corpus.json" if args.seed == 1 else f"escaped_corpus_seed{args.seed}.json"), result)


if __name__ == "__main__":
    main()
