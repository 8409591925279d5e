"""`make gpu-check`: every check of the GPU path in one command, on a GPU machine (sized for 9 minutes
on one H100). Each check's result goes to bench/results/gpu_check.json as soon as it is known.

    python -m bench.gpu_check [--tiny] [--minutes 2] [--out PATH]

1. cuda_tests: the test suite's CUDA-only tests (`pytest -m cuda`): no host sync in a training
   update (torch.cuda.set_sync_debug_mode), fine-tuning and resuming on the device, translation.
2. bench_gpu: bench/gpu.py (TrainStep, the production update) on base and big, fp32 and bf16,
   eager; bf16 compiled too. Tokens/s, MFU, peak memory.
3. bf16_vs_fp32: 300 updates of the base shape from the same weights and batches, in each
   precision: their mean losses over the last 50 updates within 1 %.
4. compiled_vs_eager: the same weights and batch, the compiled and the eager loss.
5. beam_device_vs_cpu: the tiny recipe trained on the device, then beam search of its dev set on
   the device and on the CPU: the same tokens.
6. multi30k: the Multi30k recipe trained for --minutes on the device in bf16, its last
   checkpoint translated (beam 4) and scored: BLEU of test_2016_flickr, with updates and tokens/s.

--tiny runs every check on the CPU with tiny shapes and few updates (the test suite does, so
that this script cannot rot); the pytest step is left to the suite itself there.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from bench import gpu as bench_gpu
from bench.report import write_json
from nmt.config import load_recipe
from nmt.data.batching import collate, epoch_batches
from nmt.data.prepare import prepare
from nmt.data.tokenizer import train_tokenizer
from nmt.model.transformer import Transformer
from nmt.train.step import TrainStep

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


class Report:
    """The JSON report, rewritten (atomically) after every check, so a cut-off run keeps what it measured."""

    def __init__(self, path: Path, header: dict):
        self.path, self.data = path, header | {"checks": {}}
        self.write()

    def add(self, name: str, result: dict) -> None:
        self.data["checks"][name] = result
        print(json.dumps({name: result}), flush=True)
        self.write()

    def write(self) -> None:
        write_json(self.path, self.data)


def timed(check):
    """Run a check; its result gains `seconds`, and an exception becomes {"ok": false, "error": ...}."""
    start = time.perf_counter()
    try:
        result = check()
    except Exception as e:  # a check that crashes is a finding, not the end of the run
        result = {"ok": False, "error": f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"}
    result["seconds"] = round(time.perf_counter() - start, 1)
    return result


def cuda_tests() -> dict:
    run = subprocess.run([sys.executable, "-m", "pytest", "-m", "cuda", "-q", "-p", "no:cacheprovider", "tests"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    summary = [line for line in run.stdout.splitlines() if " passed" in line or " failed" in line or " error" in line]
    return {"ok": run.returncode == 0, "summary": summary[-1] if summary else run.stdout[-500:],
            "failures": [line for line in run.stdout.splitlines() if line.startswith("FAILED")]}


def losses_over_updates(shape_name: str, precision: str, compiled: bool, device: torch.device, updates: int,
                        data, seed: int = 1) -> list[float]:
    """Per-update mean loss of `updates` TrainStep updates from seed-`seed` weights, on `data`'s batches."""
    spec = bench_gpu.shape(shape_name)
    cfg = spec["train"].model_copy(update={"precision": precision, "compile": compiled})
    torch.manual_seed(seed)
    model = Transformer(spec["model"], spec["vocab"], spec["vocab"]).to(device)
    step = TrainStep(model, cfg, device)
    batches, epoch = [], 0
    while len(batches) < updates * cfg.update_freq:
        batches += epoch_batches(data, cfg.max_tokens, seed, epoch)
        epoch += 1
    results = [step(data, batches[i * cfg.update_freq:(i + 1) * cfg.update_freq]) for i in range(updates)]
    return [float(loss) / tokens for loss, tokens in results]  # read once, at the end


def bf16_vs_fp32(shape_name: str, device: torch.device, updates: int, data) -> dict:
    fp32 = losses_over_updates(shape_name, "fp32", False, device, updates, data)
    bf16 = losses_over_updates(shape_name, "bf16", False, device, updates, data)
    window = max(1, min(50, updates // 6))
    mean_fp32, mean_bf16 = sum(fp32[-window:]) / window, sum(bf16[-window:]) / window
    difference = abs(mean_bf16 - mean_fp32) / mean_fp32
    return {"ok": difference <= 0.01, "shape": shape_name, "updates": updates, "last_updates_averaged": window,
            "first_loss": round(fp32[0], 4), "fp32_loss": round(mean_fp32, 4), "bf16_loss": round(mean_bf16, 4),
            "relative_difference": round(difference, 5)}


def compiled_vs_eager(shape_name: str, device: torch.device, data) -> dict:
    spec = bench_gpu.shape(shape_name)
    torch.manual_seed(1)
    model = Transformer(spec["model"], spec["vocab"], spec["vocab"]).to(device).eval()
    indices = epoch_batches(data, spec["train"].max_tokens, 1, 0)[0]
    batch = collate(data, indices).to(device)
    inputs = (batch.src, batch.tgt_in, batch.out_positions, batch.out_targets, 0.1)
    compiled = torch.compile(model, dynamic=True)
    with torch.no_grad():
        eager_loss, compiled_loss = float(model(*inputs)), float(compiled(*inputs))
    difference = abs(compiled_loss - eager_loss) / abs(eager_loss)
    return {"ok": difference <= 1e-3, "shape": shape_name, "eager_loss": eager_loss, "compiled_loss": compiled_loss,
            "relative_difference": difference}


def in_repository(recipe_path: Path) -> list[str]:
    """Overrides that make a recipe's relative data paths point into this repository, wherever
    the check runs from."""
    recipe = load_recipe(recipe_path)
    return [f"data.{split}={ROOT / path}" for split in ("train", "valid", "test")
            if (path := getattr(recipe.data, split)) and not path.startswith("hf:") and not Path(path).is_absolute()]


def train_and_translate(recipe_path: Path, out: Path, device: torch.device, overrides: list[str]) -> dict:
    """A recipe's tokenizer, data and training into `out` on `device`; its last checkpoint
    translates the test set there, and the BLEU is scored."""
    import sacrebleu

    from nmt.data.corpus import open_corpus
    from nmt.decode.translate import load_translator, translate_lines
    from nmt.train.trainer import train

    recipe = load_recipe(recipe_path, [*in_repository(recipe_path), f"output_dir={out}", f"train.device={device}",
                                       *overrides])
    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
    prepare(recipe.data, recipe.tokenizer, recipe.out)
    result = train(recipe, show_progress=False)
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    speeds = [m["tgt_tokens_per_s"] for m in metrics if m["kind"] == "train"]
    corpus = open_corpus(recipe.data.test, recipe.data.src_lang, recipe.data.tgt_lang)
    sources, references = list(corpus.side("src")), list(corpus.side("tgt"))
    translator = load_translator([result.checkpoint], device=str(device))
    start = time.perf_counter()
    hypotheses = [translator.tgt_tokenizer.decode(h[0].tokens) for h in translate_lines(translator, sources, recipe.decode)]
    seconds = time.perf_counter() - start
    return {"recipe": recipe_path.name, "updates": result.step, "stopped_because": result.stopped_because,
            "mean_target_tokens_per_s": round(sum(speeds) / len(speeds)) if speeds else None,
            "test_bleu": round(sacrebleu.corpus_bleu(hypotheses, [references]).score, 2),
            "test_sentences": len(sources), "translate_seconds": round(seconds, 1), "recipe_overrides": overrides,
            "checkpoint": str(result.checkpoint), "test": recipe.data.test,
            "languages": [recipe.data.src_lang, recipe.data.tgt_lang]}


def beam_device_vs_cpu(device: torch.device, scratch: Path, steps: int) -> dict:
    """The tiny recipe trained on the device; its test set beam-searched there and on the CPU."""
    from nmt.data.corpus import open_corpus
    from nmt.decode.translate import load_translator, translate_lines

    run = train_and_translate(ROOT / "recipes" / "tiny.yaml", scratch / "tiny", device,
                              [f"train.max_steps={steps}", "train.valid_bleu_sentences=0"])
    checkpoint = Path(run["checkpoint"])
    sources = list(open_corpus(run["test"], *run["languages"]).side("src"))
    decode = load_recipe(ROOT / "recipes" / "tiny.yaml").decode.model_copy(update={"precision": "fp32"})
    on_device = translate_lines(load_translator([checkpoint], device=str(device)), sources, decode)
    on_cpu = translate_lines(load_translator([checkpoint], device="cpu"), sources, decode)
    same = sum(a[0].tokens == b[0].tokens for a, b in zip(on_device, on_cpu))
    return {"ok": same == len(sources), "same_outputs": same, "sentences": len(sources), "tiny_training": run}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="tiny shapes on the CPU (what the test suite runs)")
    parser.add_argument("--minutes", type=float, default=2.0, help="Multi30k training minutes on the device")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    on_gpu = torch.cuda.is_available() and not args.tiny
    device = torch.device("cuda" if on_gpu else "cpu")
    if not on_gpu:
        torch.set_num_threads(min(2, torch.get_num_threads()))
    out = args.out or RESULTS / ("gpu_check.json" if on_gpu else "gpu_check_cpu_tiny.json")
    header = {"torch": torch.__version__, "device": torch.cuda.get_device_name(device) if on_gpu else "cpu",
              "tiny": not on_gpu, "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    report = Report(out, header)
    scratch_dir = tempfile.TemporaryDirectory(prefix="nmt-gpu-check-")
    scratch = Path(scratch_dir.name)

    if on_gpu:
        report.add("cuda_tests", timed(cuda_tests))
    shapes = ["base", "big"] if on_gpu else ["tiny"]
    steps, warmup = (20, 5) if on_gpu else (2, 1)

    def bench() -> dict:
        runs = []
        for name in shapes:
            spec = bench_gpu.shape(name)
            needed = (steps + warmup) * spec["train"].update_freq * spec["train"].max_tokens
            data = bench_gpu.synthetic_shards(scratch / f"bench_{name}", spec["vocab"], max(2 * needed // 27, 1000))
            for precision, compiled in (("fp32", False), ("bf16", False), ("bf16", True)):
                runs.append(bench_gpu.bench_one(name, precision, compiled, False, device, steps, warmup, data))
                if on_gpu:
                    torch.cuda.empty_cache()
        return {"ok": True, "runs": runs}

    report.add("bench_gpu", timed(bench))
    shape_name = "base" if on_gpu else "tiny"
    spec = bench_gpu.shape(shape_name)
    updates = 300 if on_gpu else 30
    data = bench_gpu.synthetic_shards(scratch / "precision", spec["vocab"],
                                      max(updates * spec["train"].update_freq * spec["train"].max_tokens // 20, 1000))
    report.add("bf16_vs_fp32", timed(lambda: bf16_vs_fp32(shape_name, device, updates, data)))
    report.add("compiled_vs_eager", timed(lambda: compiled_vs_eager(shape_name, device, data)))
    report.add("beam_device_vs_cpu", timed(lambda: beam_device_vs_cpu(device, scratch, 300 if on_gpu else 20)))

    def multi30k() -> dict:
        if on_gpu:
            overrides = ["train.precision=bf16", f"train.max_minutes={args.minutes}", "train.valid_every=1000000",
                         "train.keep_last=1"]
            return {"ok": True} | train_and_translate(ROOT / "recipes" / "multi30k_en_de.yaml", scratch / "multi30k",
                                                       device, overrides)
        # On the CPU: the tiny recipe stands in (Multi30k's tokenizer alone takes longer than the suite may).
        return {"ok": True} | train_and_translate(ROOT / "recipes" / "tiny.yaml", scratch / "multi30k_stand_in",
                                                   device, ["train.max_steps=10", "train.valid_bleu_sentences=0"])

    report.add("multi30k", timed(multi30k))
    scratch_dir.cleanup()
    report.data["ok"] = all(check.get("ok", False) for check in report.data["checks"].values())
    report.write()
    return report.data


if __name__ == "__main__":
    sys.exit(0 if main()["ok"] else 1)
