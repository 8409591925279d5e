"""Quotation marks (`make bench-quotes`): the demo model with decode.quotes on (the marks carried
across as an element around the output words aligned to what they held, nmt.decode.text.quotes)
and off (the model reads them in place), on test_2016_flickr as shipped and in three quoted forms:
- each line in “…” (a caption quoted whole);
- each line in straight double quotes, "…";
- each line in single quotes, '…' and ‘…’ (British style; single marks are apostrophes too);
- the third and fourth words of each line of five words or more in "…" (a phrase quoted
  inside its sentence: A man in "an orange" hat ...), a shorter line whole.
BLEU of the outputs with their quotation marks taken out, against the references as they are,
the length ratio, and how many outputs hold the quote's two marks. Writes
experiments/robustness/results/quotes.json.

    python -m experiments.robustness.quotes [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import re
from pathlib import Path

from experiments.shared.demo_model import compare_settings, demo_parser, demo_study, score, write_study

RESULTS = Path(__file__).resolve().parent / "results"
MARKS = re.compile(r'["“”„«»]')
SINGLE_MARKS = re.compile(r"(?<!\w)['‘’‚]|['‘’‚](?!\w)")  # a single mark that is not an apostrophe


def phrase_quoted(line: str) -> str:
    words = line.split()
    if len(words) < 5:
        return f'"{line}"'
    return " ".join([*words[:2], f'"{words[2]} {words[3]}"', *words[4:]])


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references, cfg, engine = demo_study(args)
    forms = {"as_shipped": (sources, references),
             "whole_line_in_curly_quotes": ([f"“{s}”" for s in sources], references),
             "whole_line_in_straight_quotes": ([f'"{s}"' for s in sources], references),
             "whole_line_in_single_quotes": ([f"'{s}'" for s in sources], references),
             "whole_line_in_curly_single_quotes": ([f"‘{s}’" for s in sources], references),
             "two_words_quoted": ([phrase_quoted(s) for s in sources], references)}

    def measure(outputs: list[str], refs: list[str]) -> dict:
        without = [" ".join(SINGLE_MARKS.sub("", MARKS.sub("", o)).split()) for o in outputs]
        return {**score(without, refs),
                "outputs_with_both_marks": sum(len(MARKS.findall(o)) == 2 or len(SINGLE_MARKS.findall(o)) == 2
                                               for o in outputs)}

    settings = {"quotes_on": cfg, "quotes_off": cfg.model_copy(update={"quotes": False})}
    write_study(RESULTS / "quotes.json", checkpoint, args.test, compare_settings(engine, forms, settings, measure))


if __name__ == "__main__":
    main()
