"""How much faster any lexical shortlist could make nmt's engine on the demo and its student
(`python -m experiments.students.shortlist_bound`, after `make demo` and `make student`).

For each model and batch size, three decodings of test_2016_flickr, alternated `--repeats` times
in one process: the full vocabulary; the shortlist `nmt shortlist` builds from the training
corpus (co-occurrence, its defaults); and an oracle: each batch's candidates are exactly the tokens
of its outputs under the full vocabulary (with UNK, BOS and EOS). The oracle is the smallest
candidate set that still allows every output, so for greedy search, where it changes no line, its
speed is the most any shortlist can give without changing a line. In beam search, renormalizing
over fewer candidates changes the ranking, so even the oracle changes lines there.

Writes experiments/students/results/shortlist_bound.json: seconds (median), speedup over the full vocabulary, the share
of lines identical to the full vocabulary's, BLEU, and the mean candidates per batch; and per
model, how many of its full-vocabulary outputs (at the first batch size) fit their own sentence's
candidates (the case for per-sentence shortlists instead of a batch's union), with 100 and 1,000
frequent pieces always allowed.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from experiments.shared.demo_model import demo_parser
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    parser = demo_parser()
    parser.add_argument("--student", default="runs/student/checkpoints/best.pt")
    parser.add_argument("--batches", type=int, nargs="*", default=[4096, 256], help="decode.max_tokens values")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", default="demo,student", help="which of the two to measure")
    parser.add_argument("--output", default=str(RESULTS / "shortlist_bound.json"))
    args = parser.parse_args()
    import sacrebleu
    import torch

    import nmt.decode.engines.torch_engine as torch_engine
    from nmt.config import load_recipe
    from nmt.data.corpus import read_lines
    from nmt.decode.text.casing import hypothesis_text
    from nmt.decode.engines.engine import load_engine
    from nmt.decode.shortlist import read_shortlist
    from nmt.jobs.shortlist_build import build_shortlist
    from nmt.decode.translate import translate_lines
    from nmt.special_tokens import BOS, EOS, UNK

    torch.set_num_threads(args.threads)
    sources = list(read_lines(ROOT / f"{args.test}.en.gz"))
    references = list(read_lines(ROOT / f"{args.test}.de.gz"))
    searches = {"demo": load_recipe(Path(args.recipe)).decode,
                "student": load_recipe(ROOT / "recipes" / "multi30k_en_de_student.yaml").decode}
    models = {name: path for name, path in (("demo", Path(args.checkpoint)), ("student", Path(args.student)))
              if name in args.models.split(",")}
    scratch = Path(tempfile.mkdtemp(prefix="nmt-shortlist-bound-"))
    result = {"threads": args.threads, "repeats": args.repeats, "test": args.test,
              "models": {name: str(path) for name, path in models.items()}, "runs": {}}

    real_candidates, real_translate_batch = torch_engine._shortlisted, torch_engine.translate_batch
    outputs_of: dict[tuple, list[int]] = {}  # a source's tokens -> its output under the full vocabulary
    sizes: list[int] = []

    def recording_translate_batch(translator, batch_sources, cfg, prefixes=None, constraints=None):
        hypotheses = real_translate_batch(translator, batch_sources, cfg, prefixes, constraints)
        if not cfg.shortlist:
            outputs_of.update((tuple(s), h[0].tokens) for s, h in zip(batch_sources, hypotheses))
        return hypotheses

    def measured_candidates(translator, batch_sources, cfg, prefixes, constraints):
        if cfg.shortlist == "oracle":
            ids = sorted({UNK, BOS, EOS}.union(*(outputs_of[tuple(s)] for s in batch_sources)))
            vocabulary = torch.tensor(ids, dtype=torch.long, device=translator.device)
        else:
            vocabulary = real_candidates(translator, batch_sources, cfg, prefixes, constraints)
        if vocabulary is not None:
            sizes.append(len(vocabulary))
        return vocabulary

    torch_engine.translate_batch, torch_engine._shortlisted = recording_translate_batch, measured_candidates
    result["own_sentence_candidates"] = {}
    corpus = (ROOT / "data/multi30k/train.en.gz", ROOT / "data/multi30k/train.de.gz")
    for name, checkpoint in models.items():
        shortlists = {}  # by the number of frequent pieces always allowed; the timings use nmt shortlist's 100
        for frequent in (100, 1000):
            shortlists[frequent] = scratch / f"{name}.frequent{frequent}.txt"
            build_shortlist(checkpoint, *corpus, shortlists[frequent], frequent=frequent)
        engine = load_engine([checkpoint], threads=args.threads)
        full_outputs = None  # the full vocabulary's outputs at the first batch size
        for batch in args.batches:
            base = searches[name].model_copy(update={"max_tokens": batch})
            configs = {"full vocabulary": base, "shortlist": base.model_copy(update={"shortlist": str(shortlists[100])}),
                       "oracle": base.model_copy(update={"shortlist": "oracle"})}
            translate_lines(engine, sources[:100], base)  # warm-up
            runs = {key: {"seconds": []} for key in configs}
            tokens, texts = {}, {}
            for _ in range(args.repeats):
                for key, cfg in configs.items():  # the full vocabulary first: the oracle reads its outputs
                    sizes.clear()
                    start = time.perf_counter()
                    hypotheses = translate_lines(engine, sources, cfg)
                    runs[key]["seconds"].append(round(time.perf_counter() - start, 3))
                    tokens[key] = [h[0].tokens for h in hypotheses]
                    texts[key] = [hypothesis_text(engine.tgt_tokenizer, h[0]) for h in hypotheses]
                    if sizes:
                        runs[key]["candidates_per_batch"] = round(statistics.mean(sizes))
            full = runs["full vocabulary"]
            full_outputs = full_outputs or tokens["full vocabulary"]
            for key, run in runs.items():
                run["median_seconds"] = statistics.median(run["seconds"])
                run["speedup"] = round(full["median_seconds"] / run["median_seconds"], 3)
                run["identical_lines"] = round(sum(a == b for a, b in zip(tokens[key], tokens["full vocabulary"]))
                                               / len(sources), 4)
                run["bleu"] = round(sacrebleu.corpus_bleu(texts[key], [references]).score, 2)
            label = f"{name}, {'greedy' if base.beam_size <= 1 else f'beam {base.beam_size}'}, max_tokens {batch}"
            result["runs"][label] = runs
            print(label, {key: (run["median_seconds"], run["speedup"], run["identical_lines"],
                                run.get("candidates_per_batch")) for key, run in runs.items()}, flush=True)
            write_json(Path(args.output), result)
        for frequent, path in shortlists.items():
            listed = read_shortlist(path, engine.tgt_tokenizer)
            own = [set(listed.candidates([engine.src_tokenizer.encode(source, out_type=str)])) for source in sources]
            result["own_sentence_candidates"][f"{name}, frequent {frequent}"] = {
                "outputs_within": round(sum(set(out) <= c for out, c in zip(full_outputs, own)) / len(sources), 4),
                "tokens_within": round(sum(t in c for out, c in zip(full_outputs, own) for t in out)
                                       / sum(map(len, full_outputs)), 4),
                "candidates_per_sentence": round(statistics.mean(map(len, own)))}
        print(name, {k: v for k, v in result["own_sentence_candidates"].items() if k.startswith(name)}, flush=True)
        write_json(Path(args.output), result)

if __name__ == "__main__":
    main()
