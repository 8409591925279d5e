"""Several corpora and languages on Multi30k (`make multilingual`, `make zero-shot`, `make back-translation`).

Each experiment trains with the shipped recipes under a budget of updates (not minutes, so that
a busy host changes how long it takes, not what it measures), two trainings at a time on one CPU
thread each, translates test_2016_flickr with each model's best checkpoint and the recipe's beam
search, and writes its figures with sacreBLEU signatures, updates and minutes:

- multilingual: one en→{de,fr,cs} model (3·U updates) with each of the settings of
  MULTILINGUAL_MODELS, one chosen on val, against three bilingual en→X models of U updates each
  (recipes/multi30k_en_de.yaml with the target language changed; their dropout and vocabulary, of
  BILINGUAL_MODELS, chosen on val in each direction): experiments/languages/results/multilingual.json
- zero-shot: models trained on en↔de and en↔fr (4·U updates each; one per setup of
  ZERO_SHOT_SETUPS, the pivot_bt ones fine-tuned from the source or target setup over the last third of
  that budget) asked for de→fr and fr→de, beside pivoting through English with the same model;
  how often the output is in the wrong language (py3langid): experiments/languages/results/zero_shot.json
- back-translation: en→de on half the training pairs; + the other half's German back-translated
  by a de→en model trained on the first half with beam search, sampling and noised beam search
  (Edunov et al. 2018), each untagged and tagged <BT>; all pairs (the upper bound); U updates
  each, paired bootstrap against the half and tagged against untagged: experiments/languages/results/back_translation.json

    python -m experiments.languages.languages {multilingual,zero-shot,back-translation} [--updates U] [--setups a,b] [--models a,b]

A run whose directory already holds it finished (the same resolved recipe, every update made) is
kept, so an interrupted target goes on from the runs it had not finished.
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
import yaml

from nmt.config import load_recipe, recipe_to_dict
from nmt.data.corpus import read_lines
from nmt.data.noise import FILLER
from nmt.score import compare_systems
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
DATA = ROOT / "data" / "multi30k"
NMT = [sys.executable, "-m", "nmt"]
TEST = "test_2016_flickr"

def environment(threads: int) -> dict:
    return {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONPATH": str(ROOT)}


def nmt(*args: str, threads: int = 1) -> None:
    subprocess.run([*NMT, *args], check=True, cwd=ROOT, env=environment(threads))


def train_run(recipe: str, out: str, updates: int, *overrides: str) -> list[list[str]]:
    """The command lines of one training run, all under `out`, one thread; none where `out` holds
    that run finished already."""
    sets = [f"output_dir={out}", f"train.max_steps={updates}", "train.max_minutes=0", "train.threads=1",
            "train.valid_every=1000", "train.valid_bleu_sentences=500", *overrides]
    if finished(recipe, sets, updates):
        print(f"{out}: this run has made its {updates} updates already; kept", flush=True)
        return []
    flags = [arg for s in sets for arg in ("--set", s)]
    return [["tokenizer", recipe, *flags], ["prepare", recipe, *flags], ["train", recipe, *flags, "--no-progress"]]


def finished(recipe: str, sets: list[str], updates: int) -> bool:
    """Whether the run's directory holds this run (the same resolved recipe, but for the thread
    count) with all its updates made: an interrupted make target then goes on from the runs it has
    not finished."""
    wanted = load_recipe(ROOT / recipe, sets)
    run = ROOT / wanted.output_dir
    if not (run / "recipe.yaml").exists() or not (run / "metrics.jsonl").exists():
        return False
    return (without_threads(yaml.safe_load((run / "recipe.yaml").read_text(encoding="utf-8")))
            == without_threads(yaml.safe_load(yaml.safe_dump(recipe_to_dict(wanted), sort_keys=False)))
            and training(run)["updates"] == updates)


def without_threads(recipe: dict) -> dict:
    """The recipe less train.threads, which changes how long a run takes, not what it trains."""
    return recipe | {"train": {key: value for key, value in recipe["train"].items() if key != "threads"}}


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
    recipe = yaml.safe_load((run / "recipe.yaml").read_text(encoding="utf-8")) if (run / "recipe.yaml").exists() else {}
    return {"updates": last.get("step"), "minutes": round(seconds / 60, 1), "threads": recipe.get("train", {}).get("threads", 1),
            "mean_tgt_tokens_per_s": round(sum(r["tgt_tokens_per_s"] for r in train) / max(len(train), 1), 1),
            "dev": valid[-1] if valid else None}


def write(name: str, result: dict) -> None:
    path = RESULTS / name
    write_json(path, result)
    print(json.dumps(result, indent=1, ensure_ascii=False))


# --- the experiments ---------------------------------------------------------------------------

# The multilingual model's settings, chosen on val (the best mean val BLEU). d128 is the shape of
# recipes/multi30k_en_de.yaml; d192 is 1.5 times as wide, its feed-forward layer four times d_model
# as in the paper (2.4 times the parameters; 1.75 times the time per update on one thread); dropout
# 0.1 is the paper's, 0.3 the demo's (tuned for ~50 epochs, where these budgets make ~8); the four
# languages share 8,000, 12,000 or 16,000 subwords (the bilingual models: 6,000 or 8,000 for two).
MULTILINGUAL_MODELS = {
    "d128": ("model.d_model=128", "model.d_ff=256", "model.dropout=0.3", "tokenizer.vocab_size=8000"),
    "d192": ("model.d_model=192", "model.d_ff=768", "model.dropout=0.3", "tokenizer.vocab_size=8000"),
    "d128_dropout0.1": ("model.d_model=128", "model.d_ff=256", "model.dropout=0.1", "tokenizer.vocab_size=8000"),
    "d192_dropout0.1": ("model.d_model=192", "model.d_ff=768", "model.dropout=0.1", "tokenizer.vocab_size=8000"),
    "d128_dropout0.1_vocab12k": ("model.d_model=128", "model.d_ff=256", "model.dropout=0.1",
                                 "tokenizer.vocab_size=12000"),
    "d128_dropout0.1_vocab16k": ("model.d_model=128", "model.d_ff=256", "model.dropout=0.1",
                                 "tokenizer.vocab_size=16000"),
}
# The bilingual models' settings, chosen on val in each direction as the multilingual model's are: a
# multilingual model that wins only because its dropout or vocabulary suits the budget better wins
# nothing. dropout0.3 is the recipe as it is (its runs keep the directory name runs/lang_en_X).
BILINGUAL_MODELS = {
    "dropout0.3": (),
    "dropout0.1": ("model.dropout=0.1",),
    "dropout0.1_vocab8k": ("model.dropout=0.1", "tokenizer.vocab_size=8000"),  # the larger vocabulary too
}


def relative_time_per_update(overrides: tuple[str, ...]) -> float:
    """An update's time against d128's, measured on one thread (d192: 87 against 50 minutes)."""
    return 1.75 if "model.d_model=192" in overrides else 1.0


def balanced_lanes(runs: list[tuple[float, list[list[str]]]], lanes: int = 2) -> list[list[list[str]]]:
    """The runs' command lines, given with their estimated costs, in `lanes` lanes of about equal
    cost: the costliest first, each into the lane with the least so far. Runs kept from before
    (no command lines) cost nothing; empty lanes are left out."""
    totals, commands = [0.0] * lanes, [[] for _ in range(lanes)]
    for cost, run in sorted((r for r in runs if r[1]), key=lambda r: -r[0]):
        lightest = totals.index(min(totals))
        totals[lightest] += cost
        commands[lightest].extend(run)
    return [lane for lane in commands if lane]


def best_val(run: Path) -> dict:
    """The validation with the best mean BLEU (the one best.pt holds): the mean and each direction's."""
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    best = max((r for r in records if r["kind"] == "valid"), key=lambda r: r["bleu"])
    return {"step": best["step"], "bleu": round(best["bleu"], 2),
            **{key: round(value, 2) for key, value in best.items() if key.startswith("bleu_")}}


def multilingual(updates: int, models: list[str]) -> None:
    """Three bilingual en→X models of `updates` updates each with each of BILINGUAL_MODELS's settings,
    one chosen on val per direction; one en→{de,fr,cs} model of 3·updates with each of the settings
    `models`, one chosen on val; every model scored on test."""
    targets = ("de", "fr", "cs")
    bilingual_runs = {(t, setting): f"runs/lang_en_{t}" + ("" if setting == "dropout0.3" else f"_{setting}")
                      for t in targets for setting in BILINGUAL_MODELS}
    bilingual = [train_run("recipes/multi30k_en_de.yaml", out, updates, f"data.tgt_lang={t}", *BILINGUAL_MODELS[setting])
                 for (t, setting), out in bilingual_runs.items()]
    runs = {model: f"runs/lang_en_many_{model}" for model in models}
    many = {model: train_run("recipes/multi30k_en_many.yaml", runs[model], 3 * updates, *MULTILINGUAL_MODELS[model])
            for model in models}
    costs = [(3 * updates * relative_time_per_update(MULTILINGUAL_MODELS[model]), many[model]) for model in models]
    run_lanes(balanced_lanes(costs + [(updates, run) for run in bilingual]))
    report = {model: {"overrides": list(MULTILINGUAL_MODELS[model]), "training": training(ROOT / runs[model]),
                      "val": best_val(ROOT / runs[model]), "test": {}} for model in models}
    chosen = max(report, key=lambda model: report[model]["val"]["bleu"])
    bilingual_val = {(t, setting): best_val(ROOT / out)["bleu"] for (t, setting), out in bilingual_runs.items()}
    bilingual_chosen = {t: max(BILINGUAL_MODELS, key=lambda setting: bilingual_val[t, setting]) for t in targets}
    result = {"test": TEST, "updates_per_bilingual_model": updates, "updates_multilingual": 3 * updates,
              "chosen_on_val": chosen, "choice": "the model with the best mean val BLEU (500 sentences per direction)",
              "bilingual_chosen_on_val": bilingual_chosen,
              "bilingual_choice": "per direction, the setting with the best val BLEU (the same 500 sentences)",
              "multilingual": report[chosen]["training"], "directions": {}, "models": report}
    for t in targets:
        reference = DATA / f"{TEST}.{t}.gz"
        bilingual_report = {}
        for setting in BILINGUAL_MODELS:
            bi = ROOT / bilingual_runs[t, setting]
            seconds_bi = translate(str(bi / "checkpoints/best.pt"), DATA / f"{TEST}.en.gz", bi / f"test.{t}.hyp")
            bilingual_report[setting] = scores(bi / f"test.{t}.hyp", reference) | {
                "overrides": list(BILINGUAL_MODELS[setting]), "val_bleu": bilingual_val[t, setting],
                "training": training(bi), "decode_seconds": seconds_bi}
        for model in models:
            multi = ROOT / runs[model]
            seconds = translate(str(multi / "checkpoints/best.pt"), DATA / f"{TEST}.en.gz", multi / f"test.{t}.hyp",
                                "--tgt-lang", t)
            report[model]["test"][f"en-{t}"] = scores(multi / f"test.{t}.hyp", reference) | {"decode_seconds": seconds}
        result["directions"][f"en-{t}"] = {
            "bilingual": bilingual_report[bilingual_chosen[t]] | {"setting": bilingual_chosen[t]},
            "multilingual": report[chosen]["test"][f"en-{t}"],
            "bilingual_settings": bilingual_report,
        }
    write("multilingual.json", result)


# Zero-shot setups: recipes/multi30k_zero_shot.yaml with these overrides. source: the target's
# token in front of the source (Johnson et al. 2017); target: forced first in the output (decoder
# side); residual_free: source tokens and no residual connection around the self-attention of the
# third of the four encoder layers (Liu et al. 2021).
ZERO_SHOT_TRAINED = {
    "source": (),
    "target": ("data.language_token=target",),
    "both": ("data.language_token=both",),
    "residual_free": ("model.residual_free_encoder_layer=2",),
}
# pivot_bt*: zero-resource training of the non-English directions (Gu et al. 2019; an offline,
# one-round form of Zhang et al. 2020's online back-translation). The base setup's checkpoint at
# 2/3 of the budget translates the French side of the training data into German through English
# (greedy, two decodes), and the German side into French; the last 1/3 of the budget fine-tunes on
# the four English-centric corpora plus these de'→fr and fr'→de pairs, with the synthetic corpora's
# sampling weight and the peak rate below (fresh optimizer, 100 warm-up updates), or continuing the
# parent's optimizer and schedule. No German-French
# pair of the data is used: each synthetic pair's source is the model's own output. 0.0013 is the
# source setup's inverse-square-root rate at 2/3 of the budget (0.004 · sqrt(400/4000)).
ZERO_SHOT_FINE_TUNED = {
    "pivot_bt": {"base": "source", "synthetic_weight": 1.0, "lr": 0.0013},
    "pivot_bt_light": {"base": "source", "synthetic_weight": 0.25, "lr": 0.0013},
    "pivot_bt_light_fast": {"base": "source", "synthetic_weight": 0.25, "lr": 0.002},
    # continued: the parent's optimizer and schedule go on (train.init_from_continues), so the last
    # third differs from the source setup's only in its data.
    "pivot_bt_continued": {"base": "source", "synthetic_weight": 0.5, "continued": True},
    "pivot_bt_light_continued": {"base": "source", "synthetic_weight": 0.25, "continued": True},
    # The same from the target setup (the language token forced first in the output), whose
    # English-centric directions start higher.
    "target_pivot_bt": {"base": "target", "synthetic_weight": 1.0, "lr": 0.0013},
    "target_pivot_bt_continued": {"base": "target", "synthetic_weight": 0.5, "continued": True},
    # Between those two: the synthetic corpora at full weight, the parent's optimizer and schedule.
    "target_pivot_bt_continued_full": {"base": "target", "synthetic_weight": 1.0, "continued": True},
}
# The choice on val: the best mean zero-shot BLEU among the setups whose English-centric BLEU in
# each direction is within this much of the source setup's (the goal: zero-shot gained, every
# trained direction kept).
ENGLISH_CENTRIC_TOLERANCE = 0.5
# Every setup with its overrides: a fine-tuned one has its base's, since it starts from that checkpoint.
ZERO_SHOT_SETUPS = ZERO_SHOT_TRAINED | {name: ZERO_SHOT_TRAINED[setup["base"]] for name, setup in ZERO_SHOT_FINE_TUNED.items()}


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


def english_centric(ckpt: str, run: Path, split: str = TEST) -> dict:
    """BLEU of the four trained directions on `split`."""
    out = {}
    for src, tgt in (("en", "de"), ("de", "en"), ("en", "fr"), ("fr", "en")):
        hyps = run / f"{'test' if split == TEST else split}.{src}-{tgt}"  # test.en-de: as named before
        translate(ckpt, DATA / f"{split}.{src}.gz", hyps, "--src-lang", src, "--tgt-lang", tgt)
        out[f"{src}-{tgt}"] = scores(hyps, DATA / f"{split}.{tgt}.gz")["bleu"]
    return out


def mean(values) -> float:
    values = list(values)
    return round(sum(values) / len(values), 2)


def keeps_trained_directions(setup: dict, source: dict) -> bool:
    """Every English-centric direction's val BLEU within ENGLISH_CENTRIC_TOLERANCE of the source setup's."""
    return all(setup["val_english_centric"][direction] >= bleu - ENGLISH_CENTRIC_TOLERANCE
               for direction, bleu in source["val_english_centric"].items())


def chosen_on_val(report: dict) -> str:
    """The best val zero-shot BLEU among the setups that keep the trained directions
    (keeps_trained_directions; all setups if none do). A setup without per-direction val figures
    (an earlier run's, whose checkpoint is gone) is not compared."""
    measured = {name: r for name, r in report.items() if "val_english_centric" in r}
    source = measured.get("source")
    kept = [name for name, r in measured.items() if source is None or keeps_trained_directions(r, source)]
    return max(kept or measured, key=lambda name: measured[name]["val_zero_shot_bleu"])


def pivot_back_translation(base: str, work: Path) -> dict:
    """de'→fr and fr'→de training pairs: each target side of the training data translated into the
    other language through English by `base` (greedy); made once, kept in `work` for every setup."""
    record = work / "synthetic.json"
    made = json.loads(record.read_text()) if record.exists() else {}
    if made.get("base_checkpoint") == base:
        return made
    work.mkdir(parents=True, exist_ok=True)
    corpora, seconds = [], 0.0
    for src, tgt in (("de", "fr"), ("fr", "de")):
        stem = work / f"pivot_bt.{src}-{tgt}"
        target = Path(f"{stem}.{tgt}")
        lines = list(read_lines(DATA / f"train.{tgt}.gz"))
        target.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        english = Path(f"{stem}.en")
        seconds += translate(base, target, english, "--src-lang", tgt, "--tgt-lang", "en", "--beam-size", "1")
        seconds += translate(base, english, Path(f"{stem}.{src}"), "--src-lang", "en", "--tgt-lang", src,
                             "--beam-size", "1")
        corpora.append({"path": str(stem), "src_lang": src, "tgt_lang": tgt})
    made = {"base_checkpoint": base, "corpora": corpora, "decode_minutes": round(seconds / 60, 1),
            "search": "greedy, through English", "pairs_per_direction": len(lines),
            # How far the synthetic sources are from the German and French of the same training lines:
            # a model that had learnt its training data by heart would give them back (BLEU near 100).
            "bleu_against_the_same_lines": {
                f"{c['src_lang']}-{c['tgt_lang']}": round(sacrebleu.corpus_bleu(
                    list(read_lines(Path(f"{c['path']}.{c['src_lang']}"))),
                    [list(read_lines(DATA / f"train.{c['src_lang']}.gz"))]).score, 2) for c in corpora}}
    record.write_text(json.dumps(made, indent=1) + "\n")
    return made


def fine_tune_pivot_bt(updates: int, names: list[str], runs: dict[str, str]) -> dict[str, dict]:
    """The pivot_bt setups, side by side: each fine-tunes its base run's checkpoint at 2/3 of the
    budget for the last 1/3."""
    total = 4 * updates
    start = 2 * total // 3
    english_centric_corpora = [{"path": "data/multi30k/train", "src_lang": s, "tgt_lang": t}
                               for s, t in (("en", "de"), ("de", "en"), ("en", "fr"), ("fr", "en"))]
    lanes, found = [], {}
    for name in names:
        setup = ZERO_SHOT_FINE_TUNED[name]
        base = str(ROOT / runs[setup["base"]] / f"checkpoints/step_{start:07d}.pt")
        synthetic = pivot_back_translation(base, ROOT / f"runs/lang_zero_shot_{setup['base']}_synthetic")
        corpora = english_centric_corpora + [c | {"weight": setup["synthetic_weight"]} for c in synthetic["corpora"]]
        schedule = (["train.init_from_continues=true"] if setup.get("continued")
                    else [f"train.lr={setup['lr']}", "train.warmup_steps=100"])
        lanes.append(train_run("recipes/multi30k_zero_shot.yaml", runs[name], total if setup.get("continued") else total - start,
                               *ZERO_SHOT_SETUPS[name], f"train.init_from={base}", f"data.train={json.dumps(corpora)}",
                               *schedule))
        found[name] = setup | {"base_checkpoint": str(Path(base).relative_to(ROOT)), "fine_tuning_updates": total - start,
                               "back_translation": {k: v for k, v in synthetic.items() if k not in ("corpora", "base_checkpoint")}}
    run_lanes(balanced_lanes([(1.0, lane) for lane in lanes]))
    return found


def zero_shot(updates: int, setups: list[str]) -> None:
    """Train each setup (two at a time), choose one on val (chosen_on_val), and report every setup
    on test; the chosen one's figures also at the top level. Setups of an earlier run with the same
    budget stay in the report beside the new ones, but for those fine-tuned from a base setup that
    this run trained again."""
    runs = {name: f"runs/lang_zero_shot_{name}" for name in ZERO_SHOT_SETUPS}
    fine_tuned = [name for name in setups if name in ZERO_SHOT_FINE_TUNED]
    trained = [name for name in setups if name not in ZERO_SHOT_FINE_TUNED]
    for name in fine_tuned:  # a fine-tuned setup's base, unless an earlier run trained it
        base = ZERO_SHOT_FINE_TUNED[name]["base"]
        if base not in trained and not (ROOT / runs[base] / "checkpoints/best.pt").exists():
            trained.append(base)
    lanes = [train_run("recipes/multi30k_zero_shot.yaml", runs[name], 4 * updates, *ZERO_SHOT_SETUPS[name])
             for name in trained]
    run_lanes(balanced_lanes([(1.0, lane) for lane in lanes]))
    fine_tuning = fine_tune_pivot_bt(updates, fine_tuned, runs) if fine_tuned else {}
    previous = json.loads((ROOT / "experiments/languages/results/zero_shot.json").read_text()) if (ROOT / "experiments/languages/results/zero_shot.json").exists() else {}
    report = previous.get("setups", {}) if previous.get("updates") == 4 * updates else {}
    earlier = dict(report)
    for name in setups:
        run = ROOT / runs[name]
        ckpt = str(run / "checkpoints/best.pt")
        valid = zero_shot_directions(ckpt, run, "val")
        english_centric_val = english_centric(ckpt, run, "val")
        report[name] = {"overrides": list(ZERO_SHOT_SETUPS[name]), "training": training(run), **fine_tuning.get(name, {}),
                        "val_zero_shot_bleu": mean(d["zero_shot"]["bleu"] for d in valid.values()),
                        "val_english_centric": english_centric_val,
                        "val_english_centric_bleu": mean(english_centric_val.values()),
                        "directions": zero_shot_directions(ckpt, run, TEST), "english_centric": english_centric(ckpt, run)}
    for name in [n for n in report if n not in setups]:  # from an earlier run
        base = ZERO_SHOT_FINE_TUNED.get(name, {}).get("base")
        if base in setups and earlier.get(base, {}).get("training") != report[base]["training"]:
            del report[name]  # fine-tuned from a base trained again since: its figures belong to weights now gone
            continue
        ckpt = ROOT / runs[name] / "checkpoints/best.pt"
        if "val_english_centric" not in report[name] and ckpt.exists():  # what the choice now also reads
            report[name]["val_english_centric"] = english_centric(str(ckpt), ROOT / runs[name], "val")
            report[name]["val_english_centric_bleu"] = mean(report[name]["val_english_centric"].values())
    chosen = chosen_on_val(report)
    result = {"test": TEST, "updates": 4 * updates, "chosen_on_val": chosen,
              "choice": f"the best val_zero_shot_bleu among the setups whose val BLEU in each English-centric "
                        f"direction (val_english_centric) is within {ENGLISH_CENTRIC_TOLERANCE} of the source setup's",
              "not_compared": sorted(name for name, r in report.items() if "val_english_centric" not in r),
              "training": report[chosen]["training"], "directions": report[chosen]["directions"],
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
    run_lanes(balanced_lanes([(1.0, lane) for lane in lanes]))
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
    parser.add_argument("--setups", default=",".join(ZERO_SHOT_SETUPS),
                        help=f"zero-shot: comma-separated setups of {', '.join(ZERO_SHOT_SETUPS)}")
    parser.add_argument("--models", default=",".join(MULTILINGUAL_MODELS),
                        help=f"multilingual: comma-separated model settings of {', '.join(MULTILINGUAL_MODELS)}")
    args = parser.parse_args()

    def names(flag: str, value: str, known: dict) -> list[str]:
        """The comma-separated names of `value`, each one of `known`'s (else a usage error)."""
        unknown = set(value.split(",")) - set(known)
        if unknown:
            parser.error(f"{flag}: unknown {', '.join(sorted(unknown))} (choose from {', '.join(known)})")
        return value.split(",")

    if args.experiment == "multilingual":
        multilingual(args.updates, names("--models", args.models, MULTILINGUAL_MODELS))
        return
    if args.experiment == "zero-shot":
        zero_shot(args.updates, names("--setups", args.setups, ZERO_SHOT_SETUPS))
        return
    back_translation(args.updates)


if __name__ == "__main__":
    main()
