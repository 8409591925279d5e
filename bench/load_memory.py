"""`make bench-load-memory`: the memory and time a large model costs where nmt reads it: `nmt import`
of a transformers directory, and `nmt info`, `nmt translate`, `nmt export` and `nmt average` of a
training checkpoint (weights and Adam's state, as `nmt train` writes them).

    python -m bench.load_memory [--d-model 1024 --layers 12 --d-ff 4096] [--out FILE]

The model is the paper's post-LN Transformer at the given width and depth with random weights, on
the demo's 8k joint vocabulary (the layers carry the size): its training checkpoint is written
here, and its `nmt export --format huggingface` directory (a MarianMTModel) is what `nmt import`
reads (needs nmt[huggingface]). Each command runs in a process of its own; its peak anonymous
memory (RssAnon: what the machine must hold; file pages, which the kernel may drop, are not in it)
and peak resident memory are sampled from /proc every 10 ms, beside the model's fp32 size. The
figure to watch is `anonymous_over_model`: about 1 means the command holds the model once (beside
the interpreter's own, `python_with_nmt_imported`).
Linux only (/proc). Results: bench/results/load_memory.json.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import torch

from nmt.checkpoint import save_checkpoint
from nmt.config import load_recipe, recipe_to_dict
from nmt.data.tokenizer import tokenizer_paths, train_tokenizer
from nmt.model.transformer import Transformer
from tools.results import provenance, write_json

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
LINES = ["A man in a blue shirt is standing on a ladder.", "Two dogs play in the snow."]


def sampled_run(command: list[str], env: dict | None = None) -> dict:
    """Run `command`; its seconds and peak RssAnon / VmRSS in MB, sampled every 10 ms."""
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
            "peak_resident_mb": peaks["VmRSS"] // 1024}


def training_checkpoint(recipe, path: Path) -> int:
    """A checkpoint as `nmt train` writes one after an update (weights, Adam's two moments, progress);
    returns the model's fp32 bytes."""
    src_path, _ = tokenizer_paths(recipe.out, recipe.tokenizer.joint)
    proto = torch.frombuffer(bytearray(src_path.read_bytes()), dtype=torch.uint8)
    vocab = _pieces(src_path)
    torch.manual_seed(0)
    model = Transformer(recipe.model, vocab, vocab)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for p in model.parameters():
        p.grad = torch.full_like(p, 1e-3)
    optimizer.step()
    save_checkpoint({"recipe": recipe_to_dict(recipe), "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                     "progress": {"step": 1, "epoch": 1, "batch_in_epoch": 1},
                     "tokenizer": {"src": proto, "tgt": proto}}, path)
    return sum(p.numel() * p.element_size() for p in model.parameters())


def _pieces(model_file: Path) -> int:
    from nmt.data.tokenizer import load_processor

    return load_processor(model_file).get_piece_size()


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d-model", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=12, help="encoder and decoder layers each")
    parser.add_argument("--d-ff", type=int, default=4096)
    parser.add_argument("--out", type=Path, default=RESULTS / "load_memory.json")
    args = parser.parse_args(argv)
    nmt = [sys.executable, "-m", "nmt"]
    report = {"provenance": provenance(), "d_model": args.d_model, "layers": args.layers, "d_ff": args.d_ff, "runs": {}}
    with tempfile.TemporaryDirectory(prefix="nmt-load-memory-") as scratch:
        scratch = Path(scratch)
        recipe = load_recipe(ROOT / "recipes" / "multi30k_en_de.yaml", [
            f"output_dir={scratch / 'run'}", "tokenizer.vocab_size=8000", "tokenizer.joint=true", f"model.d_model={args.d_model}",
            f"model.heads={args.d_model // 64}", f"model.d_ff={args.d_ff}", f"model.encoder_layers={args.layers}",
            f"model.decoder_layers={args.layers}", "model.norm=post"])
        train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
        checkpoint = scratch / "train.pt"
        model_bytes = training_checkpoint(recipe, checkpoint)
        report["model_fp32_mb"] = model_bytes // 2**20
        report["checkpoint_mb"] = checkpoint.stat().st_size // 2**20
        (scratch / "in.txt").write_text("\n".join(LINES) + "\n", encoding="utf-8")
        save_checkpoint({k: v for k, v in torch.load(checkpoint, weights_only=True).items() if k != "optimizer"},
                        scratch / "weights.pt")
        subprocess.run([*nmt, "export", str(scratch / "weights.pt"), "--format", "huggingface", "-o",
                        str(scratch / "hf")], check=True, stdout=subprocess.DEVNULL)
        commands = {
            "python_with_nmt_imported": None,  # what every command holds before it reads a model
            "import": ["import", str(scratch / "hf"), "-o", str(scratch / "imported.pt")],
            "info": ["info", str(checkpoint)],
            "translate": ["translate", "-c", str(checkpoint), "-i", str(scratch / "in.txt"), "-o", str(scratch / "out.txt")],
            "export_ctranslate2": ["export", str(checkpoint), "--format", "ctranslate2", "-o", str(scratch / "ct2")],
            "average": ["average", str(checkpoint), str(checkpoint), "-o", str(scratch / "averaged.pt")],
        }
        for name, command in commands.items():
            argv = [sys.executable, "-c", "import torch, nmt.cli"] if command is None else [*nmt, *command]
            run = sampled_run(argv, env=os.environ.copy())
            run["anonymous_over_model"] = round(run["peak_anonymous_mb"] / report["model_fp32_mb"], 2)
            report["runs"][name] = run
            print(name, run, flush=True)
    write_json(args.out, report)
    return report


if __name__ == "__main__":
    main()
