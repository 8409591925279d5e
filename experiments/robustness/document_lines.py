"""Lines as documents have them (`make bench-document-lines`): list items and lines without a
letter, through the demo model.

- List items: each test_2016_flickr line behind a list marker, the markers in turn ("- ", "* ",
  "• ", "1. ", "2) ", "(a) ", "> "), translated with decode.copy_verbatim on (the default: the
  marker written in front of the line's translation) and off (the marker given to the model).
  Outputs that start with their marker, and BLEU of the outputs with it taken off, against the
  references (the lines without markers are the target: BLEU of the test set as shipped).
- Lines without a letter ("...", bullets, separators, "1."): how many come back as written, and
  what the model writes when its search is given them (what nmt translate wrote before it copied
  such lines).
Writes experiments/robustness/results/document_lines.json.

    python -m experiments.robustness.document_lines [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_test_set, score, translated
from nmt.config import load_recipe
from nmt.data.tokenizer import encode_lines, output_text
from nmt.decode.engines.engine import load_engine
from nmt.info import checkpoint_info
from tools.results import write_json

RESULTS = Path(__file__).resolve().parent / "results"
MARKERS = ["- ", "* ", "• ", "1. ", "2) ", "(a) ", "> "]
LETTERLESS = ["...", "-", "*", "•", "---", "***", "—", "?", "!!!", ":)", "(1)", "1.", "2)", "#", "=", "→", "$",
              "%", "&", '"']


def list_items(engine, cfg, sources: list[str], references: list[str]) -> dict:
    markers = [MARKERS[i % len(MARKERS)] for i in range(len(sources))]
    lines = [marker + source for marker, source in zip(markers, sources)]
    plain, _ = translated(engine, sources, cfg)
    result: dict = {"lines": len(lines), "markers": MARKERS, "without_markers": score(plain, references)}
    for name, settings in (("copy_verbatim_on", cfg), ("copy_verbatim_off", cfg.model_copy(update={"copy_verbatim": False}))):
        outputs, seconds = translated(engine, lines, settings)
        kept = [out.startswith(marker) for out, marker in zip(outputs, markers)]
        taken_off = [out[len(marker):] if keeps else out for out, marker, keeps in zip(outputs, markers, kept)]
        result[name] = {"seconds": round(seconds, 1), "outputs_starting_with_their_marker": sum(kept),
                        "marker_taken_off": score(taken_off, references),
                        "examples": [{"source": line, "output": out} for line, out in zip(lines[:7], outputs[:7])]}
        print(name, {k: v for k, v in result[name].items() if k != "examples"}, flush=True)
    return result


def letterless(engine, cfg) -> dict:
    outputs, _ = translated(engine, LETTERLESS, cfg)
    searched = engine.translate_batch(encode_lines(engine.src_tokenizer, LETTERLESS), cfg)
    return {"lines": len(LETTERLESS), "returned_as_written": sum(o == line for o, line in zip(outputs, LETTERLESS)),
            "lines_translated": [{"source": line, "output": out, "the_search_given_it": output_text(engine.tgt_tokenizer, h[0].tokens)}
                                 for line, out, h in zip(LETTERLESS, outputs, searched)]}


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    engine = load_engine([checkpoint])
    cfg = load_recipe(args.recipe).decode
    results = {"list_items": list_items(engine, cfg, sources, references), "letterless": letterless(engine, cfg)}
    print("letterless", results["letterless"]["returned_as_written"], "of", results["letterless"]["lines"])
    write_json(RESULTS / "document_lines.json", {"checkpoint": str(checkpoint), "updates": checkpoint_info(checkpoint)["step"],
                                                 "test": args.test, **results})


if __name__ == "__main__":
    main()
