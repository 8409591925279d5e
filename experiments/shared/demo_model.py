"""What the studies on a trained model share: the demo checkpoint and test set they read, the
options that name them, translating a list of lines and scoring the outputs."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import sacrebleu

from nmt.decode.text.casing import hypothesis_text
from nmt.decode.translate import translate_lines


def demo_checkpoint(path: str) -> Path:
    """A benchmark's checkpoint (the demo's by default), or a stop saying how to get one."""
    path = Path(path)
    if not path.is_file():
        raise SystemExit(f"{path}: not found (run `make demo` first, or pass -c)")
    return path


def demo_parser() -> argparse.ArgumentParser:
    """The options of a benchmark on the demo model: -c, --recipe (decode settings), --test, --threads."""
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--checkpoint", default="runs/demo/checkpoints/best.pt")
    parser.add_argument("--recipe", default="recipes/multi30k_en_de.yaml", help="Decode settings to use.")
    parser.add_argument("--test", default="data/multi30k/test_2016_flickr")
    parser.add_argument("--threads", type=int, default=2)
    return parser


def directions_parser(results: str) -> argparse.ArgumentParser:
    """demo_parser's options and those of a study of a multilingual model's directions: --directions,
    --quantizations, --out (the results' file name, `results` by default)."""
    parser = demo_parser()
    parser.add_argument("--directions", help="A multilingual model's directions, e.g. en-de,en-fr (default: the recipe's).")
    parser.add_argument("--quantizations", default="float32,int8")
    parser.add_argument("--out", default=results, help="The results' file name in the study's results/.")
    return parser


def chosen_directions(args: argparse.Namespace, checkpoint: Path) -> list[tuple[str, str]]:
    """--directions as (source, target) pairs, or the checkpoint's recipe's direction."""
    from nmt.info import checkpoint_info

    return [tuple(d.split("-")) for d in (args.directions or checkpoint_info(checkpoint)["direction"]).split(",")]


def demo_test_set(args: argparse.Namespace) -> tuple[Path, list[str], list[str]]:
    """(checkpoint, English sources, German references) of `demo_parser`'s arguments; sets the threads."""
    import torch

    from nmt.data.corpus import read_lines

    torch.set_num_threads(args.threads)
    checkpoint = demo_checkpoint(args.checkpoint)
    return (checkpoint, list(read_lines(Path(f"{args.test}.en.gz"))), list(read_lines(Path(f"{args.test}.de.gz"))))


def demo_study(args: argparse.Namespace) -> tuple[Path, list[str], list[str], object, object]:
    """What a study of the demo model starts from (`demo_parser`'s arguments): the checkpoint, the
    test set's sources and references (demo_test_set), the recipe's decode settings and the engine."""
    from nmt.config import load_recipe
    from nmt.decode.engines.engine import load_engine

    checkpoint, sources, references = demo_test_set(args)
    return checkpoint, sources, references, load_recipe(args.recipe).decode, load_engine([checkpoint])


def translated(engine, lines: list[str], cfg, markup: bool = False,
               constraints: list[list[str]] | None = None) -> tuple[list[str], float]:
    """The best output text of each line (with `constraints`: each line's phrases in it), and the
    seconds the translation took."""
    start = time.perf_counter()
    hyps = translate_lines(engine, lines, cfg, markup=markup, constraints=constraints)
    out = [hypothesis_text(engine.tgt_tokenizer, h[0]) for h in hyps]
    return out, time.perf_counter() - start


def score(hypotheses: list[str], references: list[str], lowercase: bool = False) -> dict:
    """sacreBLEU's corpus BLEU, the length ratio and the signature."""
    bleu = sacrebleu.metrics.BLEU(lowercase=lowercase)
    result = bleu.corpus_score(hypotheses, [references])
    return {"bleu": round(result.score, 2), "length_ratio": round(result.sys_len / result.ref_len, 4),
            "signature": str(bleu.get_signature())}


def compare_settings(engine, forms: dict[str, tuple[list[str], list[str]]], settings: dict,
                     measure: Callable[[list[str], list[str]], dict]) -> dict:
    """A study's table: each form of the test set (its source lines and references) translated with
    each decode setting (name -> DecodeConfig), the outputs' `measure` (outputs, references -> a
    dict) with the seconds and the first three lines, each printed as it is done."""
    result: dict = {}
    for form, (lines, refs) in forms.items():
        result[form] = {"lines": len(lines)}
        for name, cfg in settings.items():
            outputs, seconds = translated(engine, lines, cfg)
            measured = measure(outputs, refs)
            result[form][name] = {**measured, "seconds": round(seconds, 2),
                                  "examples": [{"source": s, "output": o} for s, o in zip(lines[:3], outputs[:3])]}
            print(form, name, *(value["bleu"] if isinstance(value, dict) else value for value in measured.values()),
                  flush=True)
    return result


def compare_with_step_bypassed(engine, forms: dict[str, tuple[list[str], list[str]]], cfg,
                               measure: Callable[[list[str], list[str]], dict], step: tuple[object, str, Callable],
                               names: tuple[str, str]) -> dict:
    """compare_settings of `cfg` as translation runs it (`names[0]`) and with one step of it
    patched out (`names[1]`): `step` is (module, attribute, what stands in for it). Each form's
    two results side by side."""
    kept = compare_settings(engine, forms, {names[0]: cfg}, measure)
    owner, attribute, stand_in = step
    with mock.patch.object(owner, attribute, stand_in):
        bypassed = compare_settings(engine, forms, {names[1]: cfg}, measure)
    return {form: {**kept[form], **bypassed[form]} for form in forms}


def write_study(path: Path, checkpoint: Path, test: str, result: dict) -> None:
    """A study's results as JSON: its provenance (tools.results), the model and test set, `result`."""
    from nmt.info import checkpoint_info
    from tools.results import write_json

    write_json(path, {"checkpoint": str(checkpoint), "updates": checkpoint_info(checkpoint)["step"], "test": test,
                      **result})
