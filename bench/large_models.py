"""`make bench-large-models`: what a large model costs where nmt reads it, in memory and time:
`nmt import` of a transformers directory, and `nmt info`, `nmt translate`, `nmt export` and `nmt
average` of a training checkpoint (weights and Adam's state, as `nmt train` writes them), and
fine-tuning from it (`nmt train` with train.init_from: 2 updates of 1,000 target tokens on the
demo's Multi30k), whose peak is set beside the memory estimate `nmt train` prints first, and
whose checkpoint's size beside that of the frozen weights written once beside it (LoRA).

    python -m bench.large_models [--d-model 1024 --layers 12 --d-ff 4096] [--vocabulary 250000] [--out FILE]

Two models with random weights, each written here as a training checkpoint and as its `nmt export
--format huggingface` directory (a MarianMTModel, which `nmt import` reads; needs nmt[huggingface]):
- wide: the paper's post-LN Transformer at the given width and depth on the demo's 8k joint
  vocabulary, the layers carrying the size (350M parameters by default). The figure to watch is
  `anonymous_over_model`: about 1 means a command holds the model once (beside the interpreter's
  own, `python_with_nmt_imported`).
- many_pieces: 1 + 1 layers of width 32 on a vocabulary of NLLB's and MADLAD's size (the demo's
  pieces and unreachable made-up ones), where work per piece shows: the seconds to watch.
Each command runs in a process of its own; its seconds, peak anonymous memory (RssAnon: what the
machine must hold; file pages, which the kernel may drop, are not in it) and peak resident memory
are sampled from /proc every 10 ms. For the fine_tune runs (FINE_TUNES), `estimate_over_peak` is
the memory estimate `nmt train` printed (on a CPU it counts the process's own memory too) over the
peak measured.
Linux only (/proc). Results: bench/results/large_models.json.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import torch

from nmt.checkpoint import load_checkpoint, save_checkpoint
from nmt.config import load_recipe, recipe_to_dict
from nmt.data.tokenizer import tokenizer_paths, train_tokenizer
from nmt.model.transformer import Transformer
from tools.results import provenance, write_json

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
RECIPE = ROOT / "recipes" / "multi30k_en_de.yaml"
NMT = [sys.executable, "-m", "nmt"]
ESTIMATE = re.compile(r"memory estimate: .*; ([\d.]+) (GB|MB) in all")
# Fine-tuning runs: every weight trained, and LoRA; each also with glibc giving blocks of 1 MB or
# more back on free (nmt.host_memory), where the heap otherwise keeps what later blocks do not fit into.
BLOCKS_GIVEN_BACK = {"MALLOC_MMAP_THRESHOLD_": "1048576"}
FINE_TUNES = {
    "fine_tune": ([], {}),
    "fine_tune_blocks_given_back": ([], BLOCKS_GIVEN_BACK),
    "fine_tune_lora": (["train.lora_rank=16"], {}),
    "fine_tune_lora_blocks_given_back": (["train.lora_rank=16"], BLOCKS_GIVEN_BACK),
}
LINES = ["A man in a blue shirt is standing on a ladder.", "Two dogs play in the snow."]


def sampled_run(command: list[str], env: dict | None = None) -> dict:
    """Run `command`; its seconds, peak RssAnon / VmRSS in MB, sampled every 10 ms, and stderr."""
    peaks = {"RssAnon": 0, "VmRSS": 0}
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)

    def sample() -> None:
        while process.poll() is None:
            try:
                for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
                    key = line.split(":")[0]
                    if key in peaks:
                        peaks[key] = max(peaks[key], int(line.split()[1]))
            except (FileNotFoundError, ProcessLookupError, ValueError):
                return
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    _, stderr = process.communicate()
    sampler.join()
    if process.returncode != 0:
        last = (stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        raise SystemExit(f"{' '.join(command)} failed: {last}")
    return {"seconds": round(time.perf_counter() - start, 2), "peak_anonymous_mb": peaks["RssAnon"] // 1024,
            "peak_resident_mb": peaks["VmRSS"] // 1024, "stderr": stderr.decode(errors="replace")}


def training_checkpoint(recipe, proto: bytes, path: Path) -> int:
    """A checkpoint as `nmt train` writes one after an update (weights, Adam's two moments,
    progress), with one joint sentencepiece model `proto`; returns the model's fp32 bytes."""
    from nmt.data.tokenizer import load_processor

    vocab = load_processor(model_proto=proto).get_piece_size()
    torch.manual_seed(0)
    model = Transformer(recipe.model, vocab, vocab)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for p in model.parameters():
        p.grad = torch.full_like(p, 1e-3)
    optimizer.step()
    tokenizer = torch.frombuffer(bytearray(proto), dtype=torch.uint8)
    save_checkpoint({"recipe": recipe_to_dict(recipe), "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                     "progress": {"step": 1, "epoch": 1, "batch_in_epoch": 1},
                     "tokenizer": {"src": tokenizer, "tgt": tokenizer}}, path)
    return sum(p.numel() * p.element_size() for p in model.parameters())


def with_pieces(proto: bytes, size: int) -> bytes:
    """`proto` grown to `size` pieces by made-up ones (▁zq0, ▁zq1, ...) scored below its own."""
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    spec = model_pb2.ModelProto()
    spec.ParseFromString(proto)
    lowest = min(p.score for p in spec.pieces)
    for i in range(size - len(spec.pieces)):
        spec.pieces.add(piece=f"▁zq{i}", score=lowest - 1.0 - i * 1e-4, type=model_pb2.ModelProto.SentencePiece.NORMAL)
    spec.trainer_spec.vocab_size = len(spec.pieces)
    return spec.SerializeToString()


def measure(name: str, folder: Path, recipe_overrides: list[str], pieces: int | None) -> dict:
    """One model's checkpoint and transformers directory under `folder`, and each command run on them."""
    settings = [f"data.train={ROOT / 'data' / 'multi30k' / 'train'}", "tokenizer.vocab_size=8000", "tokenizer.joint=true",
                "model.norm=post", *recipe_overrides]
    recipe = load_recipe(RECIPE, [f"output_dir={folder / 'run'}", *settings])
    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
    proto = tokenizer_paths(recipe.out, True)[0].read_bytes()
    if pieces:
        proto = with_pieces(proto, pieces)
        recipe = recipe.model_copy(update={"tokenizer": recipe.tokenizer.model_copy(update={"vocab_size": pieces})})
        settings.append(f"tokenizer.vocab_size={pieces}")
    checkpoint = folder / "train.pt"
    model_bytes = training_checkpoint(recipe, proto, checkpoint)
    result = {"model": dict(recipe.model), "vocabulary": recipe.tokenizer.vocab_size,
              "model_fp32_mb": model_bytes // 2**20, "checkpoint_mb": checkpoint.stat().st_size // 2**20, "runs": {}}
    (folder / "in.txt").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    save_checkpoint(load_checkpoint(checkpoint, optimizer=False), folder / "weights.pt")
    commands = {
        "python_with_nmt_imported": None,  # what every command holds before it reads a model
        "export_huggingface": ["export", str(folder / "weights.pt"), "--format", "huggingface", "-o", str(folder / "hf")],
        "import": ["import", str(folder / "hf"), "-o", str(folder / "imported.pt")],
        "info": ["info", str(checkpoint)],
        "translate": ["translate", "-c", str(checkpoint), "-i", str(folder / "in.txt"), "-o", str(folder / "out.txt")],
        "export_ctranslate2": ["export", str(checkpoint), "--format", "ctranslate2", "-o", str(folder / "ct2")],
        "average": ["average", str(checkpoint), str(checkpoint), "-o", str(folder / "averaged.pt")],
    }
    for command_name, command in commands.items():
        argv = [sys.executable, "-c", "import torch, nmt.cli"] if command is None else [*NMT, *command]
        run = sampled_run(argv, env=os.environ.copy())
        del run["stderr"]
        run["anonymous_over_model"] = round(run["peak_anonymous_mb"] / max(result["model_fp32_mb"], 1), 2)
        result["runs"][command_name] = run
        print(name, command_name, run, flush=True)
    child = prepared_child(folder, settings, checkpoint)
    for run_name, (extra, env) in FINE_TUNES.items():
        result["runs"][run_name] = fine_tune(folder, child, extra, env)
        print(name, run_name, result["runs"][run_name], flush=True)
    return result


def prepared_child(folder: Path, settings: list[str], parent: Path) -> list[str]:
    """`nmt tokenizer` and `nmt prepare` for fine-tuning from `parent` into folder/child (validated
    on 4 pairs, 2 updates of 1,000 target tokens); returns the --set arguments of that run."""
    valid = folder / "valid"
    for side in ("en", "de"):
        with gzip.open(ROOT / "data" / "multi30k" / f"val.{side}.gz", "rt", encoding="utf-8") as lines:
            valid.with_suffix(f".{side}").write_text("".join(next(lines) for _ in range(4)), encoding="utf-8")
    sets = set_arguments([*settings, f"output_dir={folder / 'child'}", f"train.init_from={parent}", f"data.valid={valid}",
                          "train.valid_bleu_sentences=0", "train.max_steps=2", "train.max_minutes=0",
                          "train.max_tokens=1000", "train.update_freq=1"])
    for verb in ("tokenizer", "prepare"):
        subprocess.run([*NMT, verb, str(RECIPE), *sets], check=True, capture_output=True)
    return sets


def fine_tune(folder: Path, sets: list[str], extra: list[str], env: dict[str, str]) -> dict:
    """`nmt train` of the prepared child run (from scratch each time) with `extra` settings and
    `env`: its time and peak memory beside the memory estimate it printed."""
    shutil.rmtree(folder / "child" / "checkpoints", ignore_errors=True)
    run = sampled_run([*NMT, "train", str(RECIPE), *sets, *set_arguments(extra)], env=os.environ | env)
    said = ESTIMATE.search(run.pop("stderr"))
    if said is None:
        raise SystemExit("nmt train printed no memory estimate")
    estimate_mb = float(said[1]) * (1e9 if said[2] == "GB" else 1e6) / 2**20
    checkpoints = folder / "child" / "checkpoints"
    # what the run wrote: its checkpoint, and the frozen weights beside it (LoRA: written once)
    written = {"checkpoint_mb": round((checkpoints / "last.pt").stat().st_size / 2**20, 1),
               "frozen_weights_mb": round(sum(f.stat().st_size for f in checkpoints.glob("frozen_*.pt")) / 2**20, 1)}
    return run | {"settings": extra, "environment": env, "estimate_mb": round(estimate_mb), "estimate_line": said[0],
                  "estimate_over_peak": round(estimate_mb / run["peak_anonymous_mb"], 3)} | written


def set_arguments(settings: list[str]) -> list[str]:
    """`--set KEY=VALUE` for each setting, as nmt's verbs take them."""
    return [arg for setting in settings for arg in ("--set", setting)]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d-model", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=12, help="encoder and decoder layers each")
    parser.add_argument("--d-ff", type=int, default=4096)
    parser.add_argument("--vocabulary", type=int, default=250_000, help="the many_pieces model's pieces")
    parser.add_argument("--out", type=Path, default=RESULTS / "large_models.json")
    args = parser.parse_args(argv)
    report = {"provenance": provenance(), "models": {}}
    shapes = {
        "wide": ([f"model.d_model={args.d_model}", f"model.heads={args.d_model // 64}", f"model.d_ff={args.d_ff}",
                  f"model.encoder_layers={args.layers}", f"model.decoder_layers={args.layers}"], None),
        "many_pieces": (["model.d_model=32", "model.heads=2", "model.d_ff=64", "model.encoder_layers=1",
                         "model.decoder_layers=1"], args.vocabulary),
    }
    for name, (overrides, pieces) in shapes.items():
        with tempfile.TemporaryDirectory(prefix="nmt-large-models-") as scratch:
            report["models"][name] = measure(name, Path(scratch), overrides, pieces)
    write_json(args.out, report)
    return report

if __name__ == "__main__":
    main()
