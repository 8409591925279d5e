"""Running nmt's commands from a study, as a user types them: the `nmt` of this interpreter's
environment from the repository's root, `--set` overrides, what a run's metrics say, and a
checkpoint's scores on Multi30k's test set."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def nmt_command() -> str:
    """The `nmt` installed beside this interpreter."""
    return str(Path(sys.executable).with_name("nmt"))


def nmt(*args: str) -> None:
    subprocess.run([nmt_command(), *args], cwd=ROOT, check=True)


def sets(settings: list[str]) -> list[str]:
    """["train.seed=2", ...] -> ["--set", "train.seed=2", ...]"""
    return [arg for s in settings for arg in ("--set", s)]


def run_facts(run: Path) -> dict:
    """The mean of a run's logged target tokens/s (its metrics.jsonl)."""
    rates = [r["tgt_tokens_per_s"] for r in map(json.loads, (run / "metrics.jsonl").read_text().splitlines())
             if r.get("kind") == "train" and "tgt_tokens_per_s" in r]
    return {"target_tokens_per_s": round(sum(rates) / len(rates)) if rates else None}


DEMO_RUN = ROOT / "runs" / "demo"
MULTI30K_TEST = ROOT / "data" / "multi30k" / "test_2016_flickr"


def test_set_scores(checkpoint: Path, hypotheses: Path, recipe: str, metrics: str = "bleu",
                    translate_options: tuple[str, ...] = ()) -> list[dict]:
    """`nmt score --json`'s scores (`metrics`, comma-separated) of `checkpoint` on Multi30k's
    test_2016_flickr, translated en→de into `hypotheses` as `recipe` decodes."""
    nmt("translate", "-c", str(checkpoint), "--decode-from", recipe, "-i", f"{MULTI30K_TEST}.en.gz",
        "-o", str(hypotheses), *translate_options)
    return test_translation_scores(hypotheses, metrics)


def test_translation_scores(hypotheses: Path, metrics: str = "bleu") -> list[dict]:
    """`nmt score --json`'s scores (`metrics`, comma-separated) of a translation of Multi30k's test_2016_flickr into German."""
    scored = subprocess.run([nmt_command(), "score", str(hypotheses), "-r", f"{MULTI30K_TEST}.de.gz", "-m", metrics,
                             "--json"], cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(scored.stdout)


def bleu_and_chrf(checkpoint: Path, hypotheses: Path, recipe: str, translate_options: tuple[str, ...] = ()) -> dict[str, float]:
    """{"BLEU": ..., "chrF2": ...} of `checkpoint` on Multi30k's test set, translated on 2 threads as `recipe`
    decodes (then `translate_options`)."""
    return {s["name"]: s["score"] for s in test_set_scores(checkpoint, hypotheses, recipe, "bleu,chrf",
                                                            ("--threads", "2", *translate_options))}


def study_arguments(description: str, schedules: dict, updates: int = 1500, valid_every: int | None = None,
                    default: list[str] | None = None) -> tuple[argparse.Namespace, list[str]]:
    """The command line of a study that trains runs under some of `schedules` (named settings) for
    --updates from --seed (and validates every --valid-every updates, where the study has that
    choice): its arguments, and the schedules chosen (--schedules, comma-separated; `default`, else all)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--updates", type=int, default=updates)
    parser.add_argument("--seed", type=int, default=1)
    if valid_every is not None:
        parser.add_argument("--valid-every", type=int, default=valid_every)
    parser.add_argument("--schedules", default=",".join(default or schedules),
                        help=f"comma-separated: {', '.join(schedules)}")
    args = parser.parse_args()
    return args, args.schedules.split(",")


def on_the_demos_data(out: Path) -> Path:
    """`out` emptied and given the demo's prepared pairs and tokenizer (runs/demo, from `make
    demo`), so that a study's run trains on them without preparing anything; a stop if there are none."""
    if not (DEMO_RUN / "data" / "train.src.idx").is_file():
        raise SystemExit("runs/demo/data: no prepared data (run `make demo` first)")
    with_the_demos_tokenizer(out)
    shutil.copytree(DEMO_RUN / "data", out / "data")
    return out


def with_the_demos_tokenizer(out: Path) -> Path:
    """`out` emptied and given the demo's tokenizer (runs/demo), to prepare other data with it."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for piece in ("spm.model", "spm.vocab", "tokenizer.json"):
        if (DEMO_RUN / piece).is_file():
            shutil.copy(DEMO_RUN / piece, out / piece)
    return out


def last_validation(run: Path) -> dict:
    """A run's updates, its last validation's dev loss and BLEU, its updates per second between its
    first and last logged updates and its mean target tokens/s (metrics.jsonl)."""
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    valid = [r for r in records if r.get("kind") == "valid"][-1]
    trained = [r for r in records if r.get("kind") == "train"]
    seconds = trained[-1]["time"] - trained[0]["time"]
    return {"updates": valid["step"], "dev_nll": valid["nll"], "dev_bleu": round(valid["bleu"], 2),
            "updates_per_s": round((trained[-1]["step"] - trained[0]["step"]) / seconds, 2), **run_facts(run)}


def train_side_by_side(runs: dict[str, list[str]], folder: Path, recipe: str, settings: list[str],
                       on_demo_data: bool = True) -> None:
    """`nmt train recipe` for each run at once, one thread each, in folder/NAME, with `settings`
    and then the run's own; each must end well (its log: folder/NAME/train.log). `on_demo_data`:
    each folder emptied and given the demo's prepared data first, else trained on what it holds."""
    started = []
    for name, extra in runs.items():
        out = on_the_demos_data(folder / name) if on_demo_data else folder / name
        log = open(out / "train.log", "w")
        command = [nmt_command(), "train", recipe, *sets([f"output_dir={out}", *settings, "train.threads=1", *extra]),
                   "--no-progress"]
        started.append((name, log, subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)))
    for name, log, process in started:
        if process.wait() != 0:
            raise SystemExit(f"{name}: nmt train failed ({folder / name / 'train.log'})")
        log.close()
