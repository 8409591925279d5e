"""The demo model through Hugging Face transformers (`make bench-huggingface`).

Exports the demo checkpoint (or -c CKPT) with `nmt export --format huggingface` (a pre-LN model:
PegasusForConditionalGeneration) and translates test_2016_flickr three ways: nmt with the recipe's
decode settings; nmt with patience 1 and no n-gram blocking (the search the exported defaults
express exactly); and transformers' `generate` with the exported generation_config, in batches of
sorted sentences, which is what `pipeline("translation")` does. Reports BLEU and chrF of each,
how many lines transformers' output shares with each nmt run, and decoding time. Writes
experiments/exports/results/huggingface.json.

    python -m experiments.exports.huggingface [-c runs/demo/checkpoints/best.pt] [--recipe recipes/multi30k_en_de.yaml]
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import sacrebleu
import torch

from experiments.shared.demo_model import demo_parser, demo_test_set
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import translate_lines
from nmt.export.huggingface import export_huggingface, require_transformers
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"


def generate_texts(directory: Path, lines: list[str], batch_size: int, **settings) -> list[str]:
    """transformers' generate with the directory's defaults (and `settings` over them), length-sorted
    batches, input order kept."""
    transformers = require_transformers()
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(directory).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    order = sorted(range(len(lines)), key=lambda i: len(lines[i]))
    texts = [""] * len(lines)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            batch = tokenizer([lines[i] for i in chunk], return_tensors="pt", padding=True)
            for i, text in zip(chunk, tokenizer.batch_decode(model.generate(**batch, **settings), skip_special_tokens=True)):
                texts[i] = text
    return texts


def scores(hypotheses: list[str], references: list[str]) -> dict:
    bleu, chrf = sacrebleu.BLEU(), sacrebleu.CHRF()
    return {"bleu": round(bleu.corpus_score(hypotheses, [references]).score, 2),
            "chrf": round(chrf.corpus_score(hypotheses, [references]).score, 2),
            "bleu_signature": str(bleu.get_signature()), "chrf_signature": str(chrf.get_signature())}


def main() -> None:
    parser = demo_parser()
    parser.add_argument("--batch-size", type=int, default=32, help="Sentences per transformers generate call.")
    args = parser.parse_args()
    ckpt, sources, references = demo_test_set(args)
    recipe_decode = load_recipe(Path(args.recipe)).decode
    translator = load_engine([ckpt])

    runs, outputs = {}, {}
    patience_1 = recipe_decode.model_copy(update={"patience": 1.0})
    exact = patience_1.model_copy(update={"no_repeat_ngram_size": 0})
    nmt_runs = {"nmt, recipe settings": recipe_decode, "nmt, patience 1": patience_1,
                "nmt, patience 1, no n-gram blocking": exact}
    for name, cfg in nmt_runs.items():
        start = time.perf_counter()
        hyps = translate_lines(translator, sources, cfg)
        seconds = time.perf_counter() - start
        outputs[name] = [translator.tgt_tokenizer.decode(h[0].tokens) for h in hyps]
        runs[name] = scores(outputs[name], references) | {"seconds": round(seconds, 2), "decode": cfg.model_dump()}

    # transformers' runs, each beside the nmt run that searches as it does (n-gram blocking aside)
    hf_runs = {"transformers generate, exported defaults": ({}, "nmt, patience 1"),
               "transformers generate, no n-gram blocking": ({"no_repeat_ngram_size": 0},
                                                             "nmt, patience 1, no n-gram blocking")}
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "model"
        # the recipe's decode settings, as a user's export of this checkpoint would carry them
        summary = export_huggingface(ckpt, directory, decode=recipe_decode)
        for name, (settings, counterpart) in hf_runs.items():
            start = time.perf_counter()
            texts = generate_texts(directory, sources, args.batch_size, **settings)
            seconds = time.perf_counter() - start
            runs[name] = scores(texts, references) | {
                "seconds": round(seconds, 2), "batch_size": args.batch_size, "settings_over_defaults": settings,
                "architecture": summary["architecture"], "same_search_as": counterpart,
                "identical_lines": {other: sum(a == b for a, b in zip(texts, outputs[other])) for other in outputs}}
    result = {"checkpoint": str(ckpt), "test": args.test, "sentences": len(sources), "threads": args.threads,
              "transformers": require_transformers().__version__, "runs": runs,
              "generation_differences": summary["generation_differences"]}
    write_json(RESULTS / "huggingface.json", result)
    for run, figures in runs.items():
        print(f"{run:45s} BLEU {figures['bleu']:6.2f} chrF {figures['chrf']:6.2f} {figures['seconds']:7.2f} s")
    for name, (_, counterpart) in hf_runs.items():
        print(f"{name}: {runs[name]['identical_lines'][counterpart]} of {len(sources)} lines identical to {counterpart}")


if __name__ == "__main__":
    main()
