"""Several corpora and languages on Multi30k (`make multilingual`, `make zero-shot`, `make back-translation`).

Each experiment trains with the shipped recipes under a budget of updates (not minutes, so that
a busy host changes how long it takes, not what it measures), two trainings at a time on one CPU
thread each, translates test_2016_flickr with each model's best checkpoint and the recipe's beam
search, and writes its figures with sacreBLEU signatures, updates and minutes:

- multilingual: one en→{de,fr,cs} model (3·U updates) against three bilingual en→X models of U
  updates each (recipes/multi30k_en_de.yaml with the target language changed): results/multilingual.json
- zero-shot: models trained on en↔de and en↔fr (4·U updates each; one per setup of
  ZERO_SHOT_SETUPS) asked for de→fr and fr→de, beside pivoting through English with the same
  model; how often the output is in the wrong language (py3langid): results/zero_shot.json
- back-translation: en→de on half the training pairs; + the other half's German back-translated
  by a de→en model trained on the first half with beam search, sampling and noised beam search
  (Edunov et al. 2018), each untagged and tagged <BT>; all pairs (the upper bound); U updates
  each, paired bootstrap against the half and tagged against untagged: results/back_translation.json

    python -m bench.languages {multilingual,zero-shot,back-translation} [--updates U] [--setups a,b]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import sacrebleu

from nmt.data.corpus import read_lines
from nmt.data.noise import FILLER
from nmt.score import compare_systems

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "multi30k"
NMT = [sys.executable, "-m", "nmt"]
TEST = "test_2016_flickr"

def environment(threads: int) -> dict:
    return {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONPATH": str(ROOT)}


def nmt(*args: str, threads: int = 1) -> None:
    subprocess.run([*NMT, *args], check=True, cwd=ROOT, env=environment(threads))


def train_run(recipe: str, out: str, updates: int, *overrides: str) -> list[str]:
    """The command lines of one training run, all under `out`, one thread."""
    sets = [f"output_dir={out}", f"train.max_steps={updates}", "train.max_minutes=0", "train.threads=1",
            "train.valid_every=1000", "train.valid_bleu_sentences=500", *overrides]
    flags = [arg for s in sets for arg in ("--set", s)]
    return [["tokenizer", recipe, *flags], ["prepare", recipe, *flags], ["train", recipe, *flags, "--no-progress"]]


def run_lanes(lanes: list[list[list[str]]]) -> None:
    """Each lane's commands in order; the lanes side by side (one CPU thread each)."""
    processes: list[tuple[subprocess.Popen | None, list[list[str]]]] = [(None, list(lane)) for lane in lanes]
    while any(p is not None or rest for p, rest in processes):
        for i, (process, rest) in enumerate(processes):
            if process is not None and process.poll() is not None:
                if process.returncode:
                    raise SystemExit(f"failed: {' '.join(process.args)}")
                process = None
            if process is None and rest:
                command = rest.pop(0)
                print("$ nmt", " ".join(command), flush=True)
                process = subprocess.Popen([*NMT, *command], cwd=ROOT, env=environment(1))
            processes[i] = (process, rest)
        time.sleep(2)


def translate(checkpoint: str, source: Path, output: Path, *flags: str) -> float:
    start = time.perf_counter()
    nmt("translate", "-c", checkpoint, "-i", str(source), "-o", str(output), "--threads", "2", *flags, threads=2)
    return round(time.perf_counter() - start, 1)


def scores(hypotheses: Path, reference: Path) -> dict:
    hyps, refs = list(read_lines(hypotheses)), list(read_lines(reference))
    bleu, chrf = sacrebleu.BLEU(), sacrebleu.CHRF()
    return {"bleu": round(bleu.corpus_score(hyps, [refs]).score, 2), "chrf": round(chrf.corpus_score(hyps, [refs]).score, 2),
            "bleu_signature": str(bleu.get_signature()), "chrf_signature": str(chrf.get_signature())}


def training(run: Path) -> dict:
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    train = [r for r in records if r["kind"] == "train"]
    last = train[-1] if train else {}
    valid = [r for r in records if r["kind"] == "valid"]
    seconds = max((r["time"] for r in records), default=0) - min((r["time"] for r in records), default=0)
    return {"updates": last.get("step"), "minutes": round(seconds / 60, 1), "threads": 1,
            "mean_tgt_tokens_per_s": round(sum(r["tgt_tokens_per_s"] for r in train) / max(len(train), 1), 1),
            "dev": valid[-1] if valid else None}


def write(name: str, result: dict) -> None:
    path = ROOT / "results" / name
    path.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1, ensure_ascii=False))


# --- the experiments ---------------------------------------------------------------------------

def multilingual(updates: int) -> None:
    targets = ("de", "fr", "cs")
    bilingual = [train_run("recipes/multi30k_en_de.yaml", f"runs/lang_en_{t}", updates, f"data.tgt_lang={t}")
                 for t in targets]
    many = train_run("recipes/multi30k_en_many.yaml", "runs/lang_en_many", 3 * updates)
    run_lanes([many, [c for run in bilingual for c in run]])
    result = {"test": TEST, "updates_per_bilingual_model": updates, "updates_multilingual": 3 * updates,
              "multilingual": training(ROOT / "runs/lang_en_many"), "directions": {}}
    for t in targets:
        bi, multi = ROOT / f"runs/lang_en_{t}", ROOT / "runs/lang_en_many"
        seconds_bi = translate(str(bi / "checkpoints/best.pt"), DATA / f"{TEST}.en.gz", bi / f"test.{t}.hyp")
        seconds_multi = translate(str(multi / "checkpoints/best.pt"), DATA / f"{TEST}.en.gz", multi / f"test.{t}.hyp",
                                  "--tgt-lang", t)
        reference = DATA / f"{TEST}.{t}.gz"
        result["directions"][f"en-{t}"] = {
            "bilingual": scores(bi / f"test.{t}.hyp", reference) | {"training": training(bi), "decode_seconds": seconds_bi},
            "multilingual": scores(multi / f"test.{t}.hyp", reference) | {"decode_seconds": seconds_multi},
        }
    write("multilingual.json", result)


# Zero-shot setups: recipes/multi30k_zero_shot.yaml with these overrides. source: the target's
# token in front of the source (Johnson et al. 2017); target: forced first in the output (decoder
# side); residual_free: source tokens and no residual connection around the self-attention of the
# third of the four encoder layers (Liu et al. 2021).
ZERO_SHOT_SETUPS = {
    "source": (),
    "target": ("data.language_token=target",),
    "both": ("data.language_token=both",),
    "residual_free": ("model.residual_free_encoder_layer=2",),
}


def language_check(lines: list[str], expected: str) -> dict:
    """py3langid's verdict on the output lines (nmt.language_id): the share in another language."""
    from nmt.language_id import language_shares

    found = language_shares(lines, expected)
    return {"output_languages": found["languages"], "wrong_language_share": round(1 - found["share"], 4)}


def zero_shot_directions(ckpt: str, run: Path, split: str) -> dict:
    """de→fr and fr→de on `split`: zero-shot and pivoting through English, each scored and checked."""
    directions = {}
    for src, tgt in (("de", "fr"), ("fr", "de")):
        source, reference = DATA / f"{split}.{src}.gz", DATA / f"{split}.{tgt}.gz"
        direct, pivot_en, pivot = (run / f"{split}.zero.{src}-{tgt}", run / f"{split}.pivot.{src}-en",
                                   run / f"{split}.pivot.{src}-{tgt}")
        seconds = translate(ckpt, source, direct, "--src-lang", src, "--tgt-lang", tgt, "--zero-shot")
        seconds_pivot = translate(ckpt, source, pivot_en, "--src-lang", src, "--tgt-lang", "en")
        seconds_pivot += translate(ckpt, pivot_en, pivot, "--src-lang", "en", "--tgt-lang", tgt)
        entry = {}
        for name, hyps, secs in (("zero_shot", direct, seconds), ("pivot_through_en", pivot, seconds_pivot)):
            entry[name] = scores(hyps, reference) | {"decode_seconds": round(secs, 1)} | language_check(
                list(read_lines(hyps)), tgt)
        entry["reference_check"] = round(1 - language_check(list(read_lines(reference)), tgt)["wrong_language_share"], 4)
        directions[f"{src}-{tgt}"] = entry
    return directions


def english_centric(ckpt: str, run: Path) -> dict:
    """Test BLEU of the four trained directions."""
    out = {}
    for src, tgt in (("en", "de"), ("de", "en"), ("en", "fr"), ("fr", "en")):
        hyps = run / f"test.{src}-{tgt}"
        translate(ckpt, DATA / f"{TEST}.{src}.gz", hyps, "--src-lang", src, "--tgt-lang", tgt)
        out[f"{src}-{tgt}"] = scores(hyps, DATA / f"{TEST}.{tgt}.gz")["bleu"]
    return out


def zero_shot(updates: int, setups: list[str]) -> None:
    """Train each setup (two at a time), choose the one with the best mean zero-shot BLEU on val,
    and report every setup on test; the chosen one's figures also at the top level."""
    runs = {name: f"runs/lang_zero_shot_{name}" for name in setups}
    lanes = [train_run("recipes/multi30k_zero_shot.yaml", runs[name], 4 * updates, *ZERO_SHOT_SETUPS[name])
             for name in setups]
    run_lanes([[c for lane in lanes[i::2] for c in lane] for i in range(min(2, len(lanes)))])
    report = {}
    for name in setups:
        run = ROOT / runs[name]
        ckpt = str(run / "checkpoints/best.pt")
        valid = zero_shot_directions(ckpt, run, "val")
        report[name] = {"overrides": list(ZERO_SHOT_SETUPS[name]), "training": training(run),
                        "val_zero_shot_bleu": round(sum(d["zero_shot"]["bleu"] for d in valid.values()) / 2, 2),
                        "directions": zero_shot_directions(ckpt, run, TEST), "english_centric": english_centric(ckpt, run)}
    chosen = max(setups, key=lambda name: report[name]["val_zero_shot_bleu"])
    result = {"test": TEST, "updates": 4 * updates, "chosen_on_val": chosen, "training": report[chosen]["training"],
              "directions": report[chosen]["directions"],
              "language_check": "py3langid (nmt score --langid): wrong_language_share is the share of non-empty "
                                "output lines identified as another language than the target",
              "setups": report}
    write("zero_shot.json", result)


# Back-translation methods (Edunov et al. 2018): `nmt back-translate` flags, and the run names' word.
BT_METHODS = {"beam": [], "sampled": ["--sampling"], "noised": ["--noise"]}
BT_NAMES = {"beam": "bt", "sampled": "sampled_bt", "noised": "noised_bt"}


def back_translation(updates: int) -> None:
    work = ROOT / "runs/lang_bt"
    work.mkdir(parents=True, exist_ok=True)
    en, de = list(read_lines(DATA / "train.en.gz")), list(read_lines(DATA / "train.de.gz"))
    half = len(en) // 2
    for name, part in (("half_a", slice(0, half)), ("half_b", slice(half, None))):
        for lang, lines in (("en", en), ("de", de)):
            (work / f"{name}.{lang}").write_text("\n".join(lines[part]) + "\n", encoding="utf-8")
    a, b = str(work / "half_a"), str(work / "half_b")
    genuine = {"path": a}
    runs = {"parallel_half": [genuine]}
    for method in BT_METHODS:  # each synthetic corpus beside the genuine half, untagged and tagged
        synthetic = str(work / f"synthetic_{method}")
        runs[f"plus_{BT_NAMES[method]}_untagged"] = [genuine, {"path": synthetic}]
        runs[f"plus_{BT_NAMES[method]}_tagged"] = [genuine, {"path": synthetic, "tag": "<BT>"}]
    runs["parallel_all"] = [genuine, {"path": b}]
    recipe = "recipes/multi30k_en_de.yaml"
    reverse = train_run(recipe, "runs/lang_bt_reverse", updates, "data.src_lang=de", "data.tgt_lang=en", f"data.train={a}")
    # Every en→de run reads the noise's filler as one piece, so that all of them share one tokenizer setting.
    filler = f"tokenizer.user_defined_symbols={json.dumps([FILLER])}"
    first = train_run(recipe, "runs/lang_bt_parallel_half", updates, f"data.train={json.dumps(runs['parallel_half'])}", filler)
    run_lanes([reverse, first])
    seconds = {}
    for method, flags in BT_METHODS.items():
        start = time.perf_counter()
        nmt("back-translate", "-c", "runs/lang_bt_reverse/checkpoints/best.pt", "-i", f"{b}.de", "-o",
            str(work / f"synthetic_{method}"), "--threads", "2", *flags, threads=2)
        seconds[method] = round(time.perf_counter() - start, 1)
    lanes = [train_run(recipe, f"runs/lang_bt_{name}", updates, f"data.train={json.dumps(corpora)}", filler)
             for name, corpora in runs.items() if name != "parallel_half"]
    run_lanes([[c for lane in lanes[i::2] for c in lane] for i in range(2)])
    reference = DATA / f"{TEST}.de.gz"
    result = {"test": TEST, "updates_each": updates, "pairs": {"half": half, "all": len(en)},
              "reverse_model": training(ROOT / "runs/lang_bt_reverse") | scores(*_decode_reverse()),
              "back_translation": {method: {"flags": flags, "seconds": seconds[method], "lines": len(en) - half}
                                   for method, flags in BT_METHODS.items()},
              "runs": {}}
    hyps = {}
    for name in runs:
        run = ROOT / f"runs/lang_bt_{name}"
        hyps[name] = run / "test.de.hyp"
        seconds_decode = translate(str(run / "checkpoints/best.pt"), DATA / f"{TEST}.en.gz", hyps[name])
        result["runs"][name] = scores(hyps[name], reference) | {"training": training(run), "decode_seconds": seconds_decode}
    synthetic_runs = [name for name in runs if name.startswith("plus_")]
    result["paired_bootstrap_vs_parallel_half"] = compare_systems([hyps[n] for n in ["parallel_half", *synthetic_runs]],
                                                                  [reference])
    result["paired_bootstrap_tagged_vs_untagged"] = {
        BT_NAMES[method]: compare_systems([hyps[f"plus_{BT_NAMES[method]}_untagged"], hyps[f"plus_{BT_NAMES[method]}_tagged"]],
                                          [reference]) for method in BT_METHODS}
    write("back_translation.json", result)


def _decode_reverse() -> tuple[Path, Path]:
    run = ROOT / "runs/lang_bt_reverse"
    translate(str(run / "checkpoints/best.pt"), DATA / f"{TEST}.de.gz", run / "test.en.hyp")
    return run / "test.en.hyp", DATA / f"{TEST}.en.gz"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("experiment", choices=["multilingual", "zero-shot", "back-translation"])
    parser.add_argument("--updates", type=int, default=2000, help="U: updates of one bilingual model (see above).")
    parser.add_argument("--setups", default="source,residual_free",
                        help=f"zero-shot: comma-separated setups of {', '.join(ZERO_SHOT_SETUPS)}")
    args = parser.parse_args()
    if args.experiment == "zero-shot":
        unknown = set(args.setups.split(",")) - set(ZERO_SHOT_SETUPS)
        if unknown:
            parser.error(f"--setups: unknown {', '.join(sorted(unknown))} (choose from {', '.join(ZERO_SHOT_SETUPS)})")
        zero_shot(args.updates, args.setups.split(","))
        return
    {"multilingual": multilingual, "back-translation": back_translation}[args.experiment](args.updates)


if __name__ == "__main__":
    main()
