"""Several corpora and languages on Multi30k (`make multilingual`, `make zero-shot`, `make back-translation`).

Each experiment trains with the shipped recipes under a budget of updates (not minutes, so that
a busy host changes how long it takes, not what it measures), two trainings at a time on one CPU
thread each, translates test_2016_flickr with each model's best checkpoint and the recipe's beam
search, and writes its figures with sacreBLEU signatures, updates and minutes:

- multilingual: one en→{de,fr,cs} model (3·U updates) against three bilingual en→X models of U
  updates each (recipes/multi30k_en_de.yaml with the target language changed): results/multilingual.json
- zero-shot: a model trained on en↔de and en↔fr (4·U updates) asked for de→fr and fr→de, beside
  pivoting through English with the same model; how often the output is in the wrong language
  (`guess_language`): results/zero_shot.json
- back-translation: en→de on half the training pairs; + the other half's German back-translated
  by a de→en model trained on the first half, untagged and tagged <BT>; all pairs (the upper
  bound); U updates each, paired bootstrap among the first three: results/back_translation.json

    python -m bench.languages {multilingual,zero-shot,back-translation} [--updates U]
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
from nmt.score import compare_systems

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "multi30k"
NMT = [sys.executable, "-m", "nmt"]
TEST = "test_2016_flickr"

# Frequent function words: a sentence is in the language whose list it hits most (ties: unknown).
STOP_WORDS = {
    "en": {"a", "an", "the", "is", "are", "of", "in", "on", "with", "and", "his", "her", "while", "at", "to"},
    "de": {"ein", "eine", "einer", "einem", "einen", "der", "die", "das", "ist", "sind", "mit", "und", "auf", "im", "in", "sein", "ihr"},
    "fr": {"un", "une", "le", "la", "les", "des", "est", "sont", "avec", "et", "sur", "dans", "du", "de", "en", "son", "sa"},
    "cs": {"a", "na", "se", "v", "s", "ve", "je", "jsou", "muž", "žena", "do", "při", "který", "která", "své"},
}


def guess_language(line: str) -> str | None:
    words = [w.strip(".,!?;:\"'()").lower() for w in line.split()]
    hits = {lang: sum(w in stop for w in words) for lang, stop in STOP_WORDS.items()}
    best = max(hits.values())
    winners = [lang for lang, n in hits.items() if n == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


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


def zero_shot(updates: int) -> None:
    run = ROOT / "runs/lang_zero_shot"
    run_lanes([train_run("recipes/multi30k_zero_shot.yaml", "runs/lang_zero_shot", 4 * updates)])
    ckpt = str(run / "checkpoints/best.pt")
    result = {"test": TEST, "updates": 4 * updates, "training": training(run), "directions": {},
              "language_check": "the language whose frequent function words (bench/languages.py STOP_WORDS) the "
                                "output line hits most; ties and no hits: unknown"}
    for src, tgt in (("de", "fr"), ("fr", "de")):
        source, reference = DATA / f"{TEST}.{src}.gz", DATA / f"{TEST}.{tgt}.gz"
        direct, pivot_en, pivot = run / f"zero.{src}-{tgt}", run / f"pivot.{src}-en", run / f"pivot.{src}-{tgt}"
        seconds = translate(ckpt, source, direct, "--src-lang", src, "--tgt-lang", tgt, "--zero-shot")
        seconds_pivot = translate(ckpt, source, pivot_en, "--src-lang", src, "--tgt-lang", "en")
        seconds_pivot += translate(ckpt, pivot_en, pivot, "--src-lang", "en", "--tgt-lang", tgt)
        entry = {}
        for name, hyps, secs in (("zero_shot", direct, seconds), ("pivot_through_en", pivot, seconds_pivot)):
            lines = list(read_lines(hyps))
            guesses = [guess_language(line) for line in lines]
            entry[name] = scores(hyps, reference) | {
                "decode_seconds": round(secs, 1),
                "output_languages": {lang or "unknown": guesses.count(lang) for lang in dict.fromkeys(guesses)},
                "wrong_language_share": round(sum(g is not None and g != tgt for g in guesses) / len(lines), 4)}
        reference_guesses = [guess_language(line) for line in read_lines(reference)]
        entry["reference_check"] = round(sum(g == tgt for g in reference_guesses) / len(reference_guesses), 4)
        result["directions"][f"{src}-{tgt}"] = entry
    write("zero_shot.json", result)


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
    runs = {
        "parallel_half": [genuine],
        "plus_bt_untagged": [genuine, {"path": str(work / "synthetic")}],
        "plus_bt_tagged": [genuine, {"path": str(work / "synthetic"), "tag": "<BT>"}],
        "parallel_all": [genuine, {"path": b}],
    }
    recipe = "recipes/multi30k_en_de.yaml"
    reverse = train_run(recipe, "runs/lang_bt_reverse", updates, "data.src_lang=de", "data.tgt_lang=en", f"data.train={a}")
    first = train_run(recipe, "runs/lang_bt_parallel_half", updates, f"data.train={json.dumps(runs['parallel_half'])}")
    run_lanes([reverse, first])
    start = time.perf_counter()
    nmt("back-translate", "-c", "runs/lang_bt_reverse/checkpoints/best.pt", "-i", f"{b}.de", "-o", str(work / "synthetic"),
        "--threads", "2", threads=2)
    bt_seconds = round(time.perf_counter() - start, 1)
    lanes = [train_run(recipe, f"runs/lang_bt_{name}", updates, f"data.train={json.dumps(corpora)}")
             for name, corpora in runs.items() if name != "parallel_half"]
    run_lanes([lanes[0] + lanes[2], lanes[1]])
    reference = DATA / f"{TEST}.de.gz"
    result = {"test": TEST, "updates_each": updates, "pairs": {"half": half, "all": len(en)},
              "reverse_model": training(ROOT / "runs/lang_bt_reverse") | scores(*_decode_reverse()),
              "back_translation": {"search": "beam (recipe settings)", "seconds": bt_seconds, "lines": len(en) - half},
              "runs": {}}
    hyps = {}
    for name in runs:
        run = ROOT / f"runs/lang_bt_{name}"
        hyps[name] = run / "test.de.hyp"
        seconds = translate(str(run / "checkpoints/best.pt"), DATA / f"{TEST}.en.gz", hyps[name])
        result["runs"][name] = scores(hyps[name], reference) | {"training": training(run), "decode_seconds": seconds}
    rows = compare_systems([hyps["parallel_half"], hyps["plus_bt_untagged"], hyps["plus_bt_tagged"]], [reference])
    result["paired_bootstrap_vs_parallel_half"] = rows
    rows = compare_systems([hyps["plus_bt_untagged"], hyps["plus_bt_tagged"]], [reference])
    result["paired_bootstrap_tagged_vs_untagged"] = rows
    write("back_translation.json", result)


def _decode_reverse() -> tuple[Path, Path]:
    run = ROOT / "runs/lang_bt_reverse"
    translate(str(run / "checkpoints/best.pt"), DATA / f"{TEST}.de.gz", run / "test.en.hyp")
    return run / "test.en.hyp", DATA / f"{TEST}.en.gz"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("experiment", choices=["multilingual", "zero-shot", "back-translation"])
    parser.add_argument("--updates", type=int, default=2000, help="U: updates of one bilingual model (see above).")
    args = parser.parse_args()
    {"multilingual": multilingual, "zero-shot": zero_shot, "back-translation": back_translation}[args.experiment](args.updates)


if __name__ == "__main__":
    main()
