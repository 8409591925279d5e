"""The WMT14 en-de base recipe through every step at full size, on this machine's CPU.

    python -m bench.wmt14_scale            (make bench-wmt14-scale)

Builds the 4.5M-pair stand-in (bench/wmt14_standin.py), exports it with the same code as
`make data/wmt14`, then runs `recipes/wmt14_en_de_base.yaml` through tokenizer → prepare →
train (5 updates of the real base model at 2 × 12,500 tokens, fp32, a checkpoint after each) →
average (the 5 checkpoints) → translate (the 3,003-line test set, beam 4) → score. Each step is a
separate process; its wall time and peak RSS (from wait4's rusage, taken by a bare launcher) go to
bench/results/wmt14_scale.json, with seconds per update and the fraction of the fp32 matmul
ceiling for training.

    python -m bench.wmt14_scale --data-only

stops after prepare (about 8 minutes on 2 cores): the data steps' time and memory, in
bench/results/wmt14_scale_data.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import torch

from tools.results import write_json

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
STANDIN = "data/wmt14_standin"
TEXT = "data/wmt14_standin_text"
RUN = "runs/wmt14_scale"
RECIPE = "recipes/wmt14_en_de_base.yaml"
UPDATES = 5


def recipe_overrides(threads: int) -> list[str]:
    sets = [
        f"output_dir={RUN}", f"data.train={TEXT}/train", f"data.valid={TEXT}/valid", f"data.test={TEXT}/test",
        # 5 updates, each followed by a validation (dev loss on the 3,000 lines; greedy BLEU of an
        # untrained model would only measure how long it babbles) and a checkpoint to average.
        f"train.max_steps={UPDATES}", "train.valid_every=1", "train.log_every=1",
        "train.valid_bleu_sentences=0", f"train.keep_last={UPDATES}",
        # A CPU has no fast bf16 matmul: fp32, as the trainer itself advises.
        "train.precision=fp32", "train.device=cpu", f"train.threads={threads}",
    ]
    return [arg for s in sets for arg in ("--set", s)]


# Linux counts in a child's peak resident memory (wait4's ru_maxrss) the memory its parent held
# when it forked: a step started from this process, which holds torch (and later a model), would
# report at least this process's own peak. So each step is started by a bare Python of a few MB,
# which waits for it and writes its exit code and peak to a file.
_LAUNCHER = ("import json, os, subprocess, sys; child = subprocess.Popen(sys.argv[2:]); "
             "_, status, usage = os.wait4(child.pid, 0); "
             "open(sys.argv[1], 'w').write(json.dumps([os.waitstatus_to_exitcode(status), usage.ru_maxrss]))")


def run_step(name: str, argv: list[str], log: Path) -> dict:
    """Run one step as a child process; its wall time and peak resident memory."""
    print(f"[{time.strftime('%H:%M:%S')}] {name}: {' '.join(argv)}", flush=True)
    measured = log.with_name(f".{name}.rusage")
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"\n### {name}: {' '.join(argv)}\n")
        out.flush()
        start = time.perf_counter()
        subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, str(measured), *argv], cwd=ROOT,
                       stdout=out, stderr=subprocess.STDOUT)
        seconds = time.perf_counter() - start
    returncode, peak_kb = json.loads(measured.read_text())
    measured.unlink()
    if returncode != 0:
        sys.exit(f"error: step {name} failed with exit code {returncode}; see {log}")
    result = {"seconds": round(seconds, 1), "peak_rss_mb": round(peak_kb / 1024)}
    print(f"    {result}", flush=True)
    return result


def training_figures(ceiling_gflops: float) -> dict:
    """Seconds per update and FLOP rate from the metrics log and the exact batches trained on."""
    from nmt.model.flops import training_flops
    from nmt.config import load_recipe
    from nmt.data.batching import epoch_batches
    from nmt.data.shards import ParallelShards
    from nmt.data.tokenizer import load_processor
    from nmt.model.transformer import Transformer

    recipe = load_recipe(ROOT / RECIPE, recipe_overrides(2)[1::2])
    out = ROOT / RUN
    records = [json.loads(line) for line in open(out / "metrics.jsonl", encoding="utf-8")]
    train = [r for r in records if r["kind"] == "train"][-UPDATES:]
    data = ParallelShards(out / "data", "train")
    batches = epoch_batches(data, recipe.train.max_tokens, recipe.train.seed, 0)
    vocab = load_processor(out / "spm.model").get_piece_size()
    updates = []
    for record, start in zip(train, range(0, UPDATES * recipe.train.update_freq, recipe.train.update_freq)):
        group = batches[start:start + recipe.train.update_freq]
        src = sum(int(data.src.lengths[i].sum()) + len(i) for i in group)
        tgt = sum(int(data.tgt.lengths[i].sum()) + len(i) for i in group)
        padded_src = sum(len(i) * (int(data.src.lengths[i].max()) + 1) for i in group)
        padded_tgt = sum(len(i) * (int(data.tgt.lengths[i].max()) + 1) for i in group)
        seconds = tgt / record["tgt_tokens_per_s"]
        flops = training_flops(recipe.model, vocab, src, tgt)
        updates.append({"step": record["step"], "seconds": round(seconds, 1), "source_tokens": src,
                        "target_tokens": tgt, "padded_source_tokens": padded_src, "padded_target_tokens": padded_tgt,
                        "loss": record["loss"], "tflop": round(flops / 1e12, 2),
                        "matmul_gflop_per_s": round(flops / seconds / 1e9, 1)})
    steady = updates[1:]  # the first update also pays for allocation and warm-up
    mean_seconds = sum(u["seconds"] for u in steady) / len(steady)
    mean_gflops = sum(u["matmul_gflop_per_s"] for u in steady) / len(steady)
    return {"updates": updates, "seconds_per_update_after_the_first": round(mean_seconds, 1),
            "matmul_gflop_per_s_after_the_first": round(mean_gflops, 1),
            "fraction_of_matmul_ceiling": round(mean_gflops / ceiling_gflops, 3),
            "parameters": Transformer(recipe.model, vocab, vocab).num_parameters()}


def decoding_figures(hypotheses: Path, seconds: float, ceiling_gflops: float, beam: int = 4) -> dict:
    """Decoder matmul work, approximated as beam × (output pieces + EOS) × decoder FLOPs per token
    (exact when every hypothesis runs to the length limit, as an untrained model's do)."""
    from nmt.model.flops import decoder_flops_per_target_token
    from nmt.config import load_recipe
    from nmt.data.tokenizer import load_processor

    recipe = load_recipe(ROOT / RECIPE)
    sp = load_processor(ROOT / RUN / "spm.model")
    lines = hypotheses.read_text(encoding="utf-8").splitlines()
    pieces = sum(len(ids) + 1 for ids in sp.encode(lines))
    gflops = beam * pieces * decoder_flops_per_target_token(recipe.model, sp.get_piece_size()) / seconds / 1e9
    return {"output_pieces": pieces, "beam_tokens_per_s": round(beam * pieces / seconds),
            "approx_matmul_gflop_per_s": round(gflops, 1), "approx_fraction_of_matmul_ceiling": round(gflops / ceiling_gflops, 3)}


def main() -> None:
    from bench.run import matmul_ceiling
    from bench.wmt14_standin import describe

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--train-rows", type=int, default=0, help="fewer stand-in rows (a quick try); 0 = WMT14's")
    parser.add_argument("--data-only", action="store_true", help="stop after prepare (wmt14_scale_data.json)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    py, nmt = sys.executable, str(Path(sys.executable).with_name("nmt"))
    log = ROOT / RUN / "steps.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    sets = recipe_overrides(args.threads)
    standin = [py, "-m", "bench.wmt14_standin", "data/multi30k", STANDIN]
    if args.train_rows:
        standin += ["--train-rows", str(args.train_rows)]

    steps = {}
    steps["standin"] = run_step("standin", standin, log)
    steps["export"] = run_step("export", [py, "-m", "tools.export_hf", STANDIN, TEXT, "--src", "en", "--tgt", "de"], log)
    steps["tokenizer"] = run_step("tokenizer", [nmt, "tokenizer", RECIPE, *sets], log)
    steps["prepare"] = run_step("prepare", [nmt, "prepare", RECIPE, *sets], log)
    data_report = {"corpus": describe(ROOT / STANDIN), "tokenizer_summary": json.loads((ROOT / RUN / "tokenizer.json").read_text()),
                   "prepare_report": json.loads((ROOT / RUN / "data" / "report.json").read_text())}
    if args.data_only:
        RESULTS.mkdir(parents=True, exist_ok=True)
        write_json(RESULTS / "wmt14_scale_data.json", {
            "benchmark": "recipes/wmt14_en_de_base.yaml's data steps on the 4.5M-pair WMT14 stand-in",
            **data_report, "steps": steps, "peak_rss_mb_of_any_step": max(s["peak_rss_mb"] for s in steps.values())})
        print(json.dumps(steps, indent=1))
        return
    ceiling_before = matmul_ceiling()
    steps["train"] = run_step("train", [nmt, "train", RECIPE, *sets], log)
    ceiling_after = matmul_ceiling()
    ceiling = (ceiling_before + ceiling_after) / 2
    steps["train"].update(training_figures(ceiling))
    ckpts = ROOT / RUN / "checkpoints"
    steps["average"] = run_step("average", [nmt, "average", "--last", str(UPDATES), "--dir", str(ckpts),
                                            "-o", str(ckpts / "averaged.pt")], log)
    hyp = f"{RUN}/test.de.hyp"
    steps["translate"] = run_step("translate", [nmt, "translate", "-c", str(ckpts / "averaged.pt"),
                                                "--decode-from", RECIPE, "-i", f"{TEXT}/test.en.gz", "-o", hyp,
                                                "--threads", str(args.threads)], log)
    hyp_lines = sum(1 for _ in open(ROOT / hyp, encoding="utf-8"))
    hyp_words = sum(len(line.split()) for line in open(ROOT / hyp, encoding="utf-8"))
    steps["translate"].update({"lines": hyp_lines, "output_words": hyp_words,
                               "lines_per_s": round(hyp_lines / steps["translate"]["seconds"], 2)})
    steps["translate"].update(decoding_figures(ROOT / hyp, steps["translate"]["seconds"], ceiling))
    score_json = ROOT / RUN / "test.score.json"
    with open(score_json, "w", encoding="utf-8") as f:
        subprocess.run([nmt, "score", hyp, "-r", f"{TEXT}/test.de.gz", "-m", "bleu", "--json"],
                       cwd=ROOT, stdout=f, check=True)
    steps["score"] = run_step("score", [nmt, "score", hyp, "-r", f"{TEXT}/test.de.gz", "-m", "bleu", "-m", "chrf"], log)
    steps["score"]["bleu_after_5_updates"] = json.loads(score_json.read_text())["score"]

    report = {
        "benchmark": "recipes/wmt14_en_de_base.yaml through every step on the 4.5M-pair WMT14 stand-in",
        "host": {"cpu_threads": args.threads, "machine": platform.machine(), "torch": torch.__version__,
                 "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)},
        "matmul_ceiling_gflop_per_s": round(ceiling, 1),
        "matmul_ceiling_before_after_training": [round(ceiling_before, 1), round(ceiling_after, 1)],
        "overrides": sets[1::2],
        **data_report,
        "steps": steps,
        "peak_rss_mb_of_any_step": max(s["peak_rss_mb"] for s in steps.values()),
        "total_seconds": round(sum(s["seconds"] for s in steps.values()), 1),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_json(RESULTS / "wmt14_scale.json", report)
    print(json.dumps({k: v for k, v in report.items() if k != "prepare_report"}, indent=1))


if __name__ == "__main__":
    main()
