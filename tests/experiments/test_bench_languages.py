"""experiments/languages/languages.py's bookkeeping: which earlier runs a make target keeps, and the choices on val."""

import json
from pathlib import Path

from experiments.languages import languages
from nmt.config import load_recipe, save_recipe

RECIPE = "recipes/multi30k_en_many.yaml"


def sets(out: Path, updates: int, *overrides: str, threads: int = 1) -> list[str]:
    return [f"output_dir={out}", f"train.max_steps={updates}", "train.max_minutes=0", f"train.threads={threads}",
            "train.valid_every=1000", "train.valid_bleu_sentences=500", *overrides]


def fake_run(out: Path, updates: int, overrides: tuple[str, ...], last_step: int, valid: list[dict] = (),
             threads: int = 1) -> None:
    """A run directory as nmt train leaves it: its resolved recipe and its metrics log."""
    out.mkdir(parents=True)
    save_recipe(load_recipe(languages.ROOT / RECIPE, sets(out, updates, *overrides, threads=threads)), out / "recipe.yaml")
    records = [{"kind": "train", "step": step, "time": float(step), "tgt_tokens_per_s": 1000.0}
               for step in range(500, last_step + 1, 500)]
    records += [{"kind": "valid", "time": float(r["step"]), **r} for r in valid]
    (out / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def test_a_finished_run_of_the_same_recipe_is_kept_and_any_other_is_trained(tmp_path):
    d128 = languages.MULTILINGUAL_MODELS["d128"]
    fake_run(tmp_path / "done", 6000, d128, last_step=6000)
    fake_run(tmp_path / "cut", 6000, d128, last_step=3000)
    assert languages.train_run(RECIPE, str(tmp_path / "done"), 6000, *d128) == []
    # Other settings, another budget, or a run cut short: trained (resumed) again.
    assert [c[0] for c in languages.train_run(RECIPE, str(tmp_path / "done"), 6000, *languages.MULTILINGUAL_MODELS["d192"])] \
        == ["tokenizer", "prepare", "train"]
    assert languages.train_run(RECIPE, str(tmp_path / "done"), 9000, *d128) != []
    assert languages.train_run(RECIPE, str(tmp_path / "cut"), 6000, *d128) != []
    assert languages.train_run(RECIPE, str(tmp_path / "new"), 6000, *d128) != []
    # Trained on two threads: the same run, kept, and the report says how it ran.
    fake_run(tmp_path / "two_threads", 6000, d128, last_step=6000, threads=2)
    assert languages.train_run(RECIPE, str(tmp_path / "two_threads"), 6000, *d128) == []
    assert languages.training(tmp_path / "two_threads")["threads"] == 2


def test_best_val_is_the_validation_with_the_best_mean_bleu(tmp_path):
    valid = [{"step": 1000, "bleu": 30.0, "bleu_en-de": 29.0, "bleu_en-fr": 31.0},
             {"step": 2000, "bleu": 33.333, "bleu_en-de": 32.0, "bleu_en-fr": 34.666},
             {"step": 3000, "bleu": 32.0, "bleu_en-de": 33.0, "bleu_en-fr": 31.0}]
    fake_run(tmp_path / "run", 3000, (), last_step=3000, valid=valid)
    assert languages.best_val(tmp_path / "run") == {"step": 2000, "bleu": 33.33, "bleu_en-de": 32.0, "bleu_en-fr": 34.67}


def setup(zero_shot: float, **english_centric: float) -> dict:
    val = {direction.replace("_", "-"): bleu for direction, bleu in english_centric.items()}
    return {"val_zero_shot_bleu": zero_shot, "val_english_centric": val,
            "val_english_centric_bleu": sum(val.values()) / len(val)}


def test_the_zero_shot_choice_keeps_every_trained_direction_within_the_tolerance():
    source = setup(1.0, en_de=30.0, fr_en=44.0)
    # Best zero-shot, and its mean is above the source's, but fr→en is 0.6 below: not kept.
    one_direction_lost = setup(27.0, en_de=32.0, fr_en=43.4)
    kept = setup(25.0, en_de=29.6, fr_en=43.6)
    earlier = {"val_zero_shot_bleu": 30.0, "val_english_centric_bleu": 40.0}  # no per-direction figures
    report = {"source": source, "lost": one_direction_lost, "kept": kept, "earlier": earlier}
    assert languages.chosen_on_val(report) == "kept"
    assert languages.chosen_on_val({"source": source, "lost": one_direction_lost}) == "source"
    # Without a source setup to compare with: the best zero-shot of the setups with per-direction figures.
    assert languages.chosen_on_val({"lost": one_direction_lost, "kept": kept, "earlier": earlier}) == "lost"


def test_balanced_lanes_put_the_costliest_runs_first_each_into_the_lightest_lane():
    run = lambda name: [[name, "a"], [name, "b"]]  # noqa: E731 — a run's command lines
    lanes = languages.balanced_lanes([(2.0, run("bi_de")), (10.5, run("d192")), (6.0, run("d128")), (2.0, run("bi_fr")),
                                      (6.0, []), (10.5, run("d192_0.1"))])
    # 10.5 | 10.5, then d128 to the first (16.5), the two bilingual runs to the second (12.5, 14.5);
    # the run kept from before (no commands) goes nowhere.
    assert [[c[0] for c in lane[::2]] for lane in lanes] == [["d192", "d128"], ["d192_0.1", "bi_de", "bi_fr"]]
    assert languages.balanced_lanes([(1.0, []), (2.0, [])]) == []
    assert languages.balanced_lanes([(1.0, run("only"))]) == [run("only")]
