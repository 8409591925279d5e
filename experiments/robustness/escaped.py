"""Text escaped for a web page (`make bench-escaped`): test_2016_flickr as html.escape writes it
(and most templates and content systems store it: `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#x27;`),
translated by the demo model through `nmt translate`'s own path (nmt.decode.stream.translate_stream)
as plain lines, which read such a line as the text it stands for and escape the output again
(nmt.decode.text.markup.read_as_markup), and as text (--input-format text: the references read
as typed, as every plain line was before). BLEU of the outputs unescaped, on the whole test set
and on the lines the escaping changed, beside the test set as shipped. Writes
experiments/robustness/results/escaped.json.

    python -m experiments.robustness.escaped [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_study, score, write_study
from nmt.decode.stream import translate_stream

RESULTS = Path(__file__).resolve().parent / "results"
BARE = re.compile(r"&(?!#[0-9]+;|#[xX][0-9a-fA-F]+;|[A-Za-z][A-Za-z0-9]*;)|[<>]")  # not a reference, or a bracket


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references, cfg, engine = demo_study(args)
    escaped = [html.escape(line) for line in sources]
    changed = [i for i, (line, original) in enumerate(zip(escaped, sources)) if line != original]

    def measured(outputs: list[str], lines: list[str]) -> dict:
        read = [html.unescape(out) for out in outputs] if lines is escaped else outputs  # as a page shows them
        return {"bleu": score(read, references)["bleu"],
                "bleu_of_the_changed_lines": score([read[i] for i in changed], [references[i] for i in changed])["bleu"],
                # outputs that a page can hold as they are: no bare &, < or >
                "outputs_escaped": sum(BARE.search(out) is None for out in outputs),
                "examples": [{"source": lines[i], "output": outputs[i]} for i in changed[:3]]}

    result = {"lines": len(sources), "lines_the_escaping_changed": len(changed)}
    for lines, input_format, name in ((sources, "plain", "as_shipped"), (escaped, "plain", "escaped_read_as_markup"),
                                      (escaped, "text", "escaped_read_as_typed")):
        result[name] = measured(list(translate_stream(engine, lines, cfg, input_format=input_format)), lines)
        print(name, result[name]["bleu"], result[name]["bleu_of_the_changed_lines"], flush=True)
    write_study(RESULTS / "escaped.json", checkpoint, args.test, result)


if __name__ == "__main__":
    main()
