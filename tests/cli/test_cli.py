"""The command line, through Typer's CliRunner and (for the console script) a subprocess."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from tests.conftest import TINY, TINY_DATA

runner = CliRunner()
SACREBLEU = Path(sys.executable).parent / "sacrebleu"


def nmt(*args, **kwargs):
    return runner.invoke(app, [str(a) for a in args], **kwargs)


def test_help_lists_every_verb():
    result = nmt("--help")
    assert result.exit_code == 0
    for verb in ("tokenizer", "prepare", "train", "translate", "likelihood", "filter", "score", "average", "export", "import", "serve", "info"):
        assert verb in result.output
    assert "--beam-size" in nmt("translate", "--help").output


def test_help_gives_each_paragraph_of_a_verbs_docstring_as_one_line():
    """A docstring wrapped over lines in cli.py is one line of text per paragraph, in `nmt --help`'s
    list and in the verb's own help, for the terminal to wrap (Typer's rich help kept the line
    breaks, so the text broke mid-sentence)."""
    import inspect

    import typer.main

    listed = nmt("--help", env={"COLUMNS": "1000"}).output
    for name, command in typer.main.get_command(app).commands.items():
        paragraphs = [" ".join(p.split()).replace("\\[", "[")
                      for p in inspect.cleandoc(command.callback.__doc__).split("\n\n")]
        assert paragraphs[0] in listed, f"nmt --help: {name}'s summary is not one line"
        own = nmt(name, "--help", env={"COLUMNS": "1000"}).output
        for paragraph in paragraphs:
            assert paragraph in own, f"nmt {name} --help: a paragraph is not one line"


def test_console_script_and_module_run():
    for command in ([str(Path(sys.executable).parent / "nmt"), "--help"], [sys.executable, "-m", "nmt", "--help"]):
        assert "translate" in subprocess.run(command, capture_output=True, text=True, check=True).stdout


def test_translate_starts_without_the_compiler(trained_tiny, tmp_path):
    """`nmt translate` in a fresh process never imports torch._dynamo, about 1.5 seconds of every
    start: building the model on the meta device once did (its sinusoid tables' arithmetic there)."""
    out = tmp_path / "out.de"
    script = ("import sys; from typer.testing import CliRunner; from nmt.cli import app; "
              f"result = CliRunner().invoke(app, ['translate', '-c', {str(trained_tiny.out / 'checkpoints' / 'best.pt')!r}, "
              f"'-i', {str(TINY_DATA / 'valid.en')!r}, '-o', {str(out)!r}]); "
              "print(result.exit_code, 'torch._dynamo' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.stdout.split() == ["0", "False"], run.stdout + run.stderr
    assert out.read_text().count("\n") == (TINY_DATA / "valid.en").read_text().count("\n")


@pytest.mark.parametrize("capabilities, warned", [({}, True), ({"avx512_bf16": True}, False), ({"amx_bf16": True}, False)])
def test_bf16_translation_on_a_cpu_without_bf16_arithmetic_is_warned_of(trained_tiny, tmp_path, monkeypatch,
                                                                        capabilities, warned):
    """decode.precision=bf16 on a CPU that would emulate bf16 (slower than fp32) translates all the
    same, with a warning that says so; on a CPU with AVX512-BF16 or AMX, and with fp32, no warning."""
    import torch

    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: capabilities)
    out = tmp_path / "out.de"
    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    for precision in ("bf16", "fp32"):
        result = nmt("translate", "-c", ckpt, "-i", TINY_DATA / "valid.en", "-o", out, "--set", f"decode.precision={precision}")
        assert result.exit_code == 0, result.output
        shown = "warning: decode.precision=bf16 on a CPU without bf16 arithmetic: slower than fp32" in result.output
        assert shown == (warned and precision == "bf16"), result.output
        assert out.read_text().count("\n") == (TINY_DATA / "valid.en").read_text().count("\n")


def test_translate_keeps_one_line_per_input_line(trained_tiny, tmp_path):
    lines = ["Asian man sweeping the walkway.", "", "A black dog leaps over a log.", "   ", "", "Two young toddlers outside on the grass."]
    source = tmp_path / "in.en"
    source.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.de"
    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    result = nmt("translate", "-c", ckpt, "-i", source, "-o", out)
    assert result.exit_code == 0, result.output
    translated = out.read_text().split("\n")[:-1]
    assert len(translated) == len(lines)
    assert [bool(t) for t in translated] == [True, False, True, False, False, True]
    assert translated[0] == "Ein asiatischer Mann kehrt den Gehweg."
    streamed = nmt("translate", "-c", ckpt, input="\n".join(lines) + "\n")
    assert streamed.exit_code == 0 and streamed.stdout.split("\n")[:-1] == translated


def test_translate_nbest_jsonl_and_overrides(trained_tiny):
    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    result = nmt("translate", "-c", ckpt, "--nbest", "3", "--output-format", "jsonl", "--set", "decode.beam_size=5",
                 input="A black dog leaps over a log.\n")
    assert result.exit_code == 0, result.output
    hyps = json.loads(result.stdout)["hypotheses"]
    assert len(hyps) == 3 and hyps[0]["score"] >= hyps[1]["score"] >= hyps[2]["score"]
    assert "".join(hyps[0]["tokens"]).replace("▁", " ").strip() == hyps[0]["text"]
    bad = nmt("translate", "-c", ckpt, "--set", "decode.beam=5", input="x\n")
    assert bad.exit_code == 2 and "decode.beam: unknown key" in bad.output


def test_nmt_score_equals_sacrebleu_command_line(tmp_path):
    hyp, ref = tmp_path / "hyp.de", TINY_DATA / "valid.de"
    refs = ref.read_text().splitlines()
    hyp.write_text("\n".join(r.replace("Ein", "Der").replace("dem", "einem") for r in refs) + "\n")
    ours = json.loads(nmt("score", hyp, "-r", ref, "-m", "bleu", "-m", "chrf", "-m", "ter", "--json").stdout)
    theirs = json.loads(subprocess.run([SACREBLEU, ref, "-i", hyp, "-m", "bleu", "chrf", "ter", "-w", "4"],
                                       capture_output=True, text=True, check=True).stdout)
    assert 0 < ours[0]["score"] < 100
    for a, b in zip(ours, theirs):
        assert (a["name"], a["score"], a["signature"]) == (b["name"], b["score"], b["signature"])
    ours = json.loads(nmt("score", hyp, "-r", ref, "-m", "chrf++", "--json").stdout)  # chrF with word bigrams
    theirs = json.loads(subprocess.run([SACREBLEU, ref, "-i", hyp, "-m", "chrf", "--chrf-word-order", "2", "-w", "4"],
                                       capture_output=True, text=True, check=True).stdout)
    assert (ours["name"], ours["score"], ours["signature"]) == (theirs["name"], theirs["score"], theirs["signature"])
    assert ours["name"] == "chrF2++" and "nw:2" in ours["signature"]
    lowercase = json.loads(nmt("score", hyp, "-r", ref, "--lowercase", "--tokenize", "intl", "--json").stdout)
    theirs = json.loads(subprocess.run([SACREBLEU, ref, "-i", hyp, "-lc", "-tok", "intl", "-w", "4"],
                                       capture_output=True, text=True, check=True).stdout)
    assert (lowercase["score"], lowercase["signature"]) == (theirs["score"], theirs["signature"])
    hyp_zh, ref_zh = tmp_path / "hyp.zh", tmp_path / "ref.zh"  # -l: the tokenizer for the target, as sacrebleu's
    hyp_zh.write_text("我是学生。\n他是老师。\n", encoding="utf-8")
    ref_zh.write_text("我是一个学生。\n他是老师。\n", encoding="utf-8")
    chinese = json.loads(nmt("score", hyp_zh, "-r", ref_zh, "-l", "en-zh", "--json").stdout)
    theirs = json.loads(subprocess.run([SACREBLEU, ref_zh, "-i", hyp_zh, "-l", "en-zh", "-w", "4"],
                                       capture_output=True, text=True, check=True).stdout)
    assert (chinese["score"], chinese["signature"]) == (theirs["score"], theirs["signature"]) and chinese["score"] > 50
    assert "tok:zh" in chinese["signature"]


def test_score_plot_and_prepare_do_not_import_torch(tmp_path):
    """Scoring with sacrebleu's metrics and plotting a log need no torch, whose import costs a
    second: a script that scores each checkpoint's output pays it for nothing. Nor do training a
    tokenizer and preparing the data, word alignments included, where torch's import would be
    most of the process's memory (200 MB)."""
    hyp, log = TINY_DATA / "valid.de", tmp_path / "metrics.jsonl"
    log.write_text("".join(json.dumps({"kind": "train", "step": s, "loss": 5.0 / s}) + "\n" for s in (1, 2, 3)))
    recipe = [str(TINY), "--set", f"output_dir={tmp_path / 'run'}", "--set", f"data.train={TINY_DATA / 'train'}",
              "--set", f"data.valid={TINY_DATA / 'valid'}", "--set", "data.test=null", "--set", "data.word_alignments=dice"]
    code = ("import sys; from typer.testing import CliRunner; from nmt.cli import app; run = CliRunner().invoke;"
            f"assert run(app, ['score', {str(hyp)!r}, '-r', {str(hyp)!r}, '-m', 'chrf', '--threads', '1']).exit_code == 0;"
            f"assert run(app, ['plot', {str(log)!r}, '-o', {str(tmp_path / 'curve.png')!r}]).exit_code == 0;"
            f"assert run(app, ['tokenizer', *{recipe!r}]).exit_code == 0;"
            f"result = run(app, ['prepare', *{recipe!r}, '--threads', '1']); assert result.exit_code == 0, result.output;"
            "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert shown.strip() == "[]" and (tmp_path / "curve.png").is_file()
    assert (tmp_path / "run" / "data" / "train.align.bin").stat().st_size > 0  # the links were written


def test_bleu_reports_the_length_ratio(tmp_path):
    ref, hyp, short = tmp_path / "ref", tmp_path / "hyp", tmp_path / "short"
    ref.write_text("a b c d\ne f g h\n")
    hyp.write_text("a b c d\ne f\n")  # 6 words for 8: ratio 0.75 (13a leaves these words alone)
    short.write_text("a b\ne f\n")  # 4 for 8
    assert json.loads(nmt("score", hyp, "-r", ref, "--json").stdout)["length_ratio"] == 0.75
    rows = json.loads(nmt("score", hyp, short, "-r", ref, "--samples", "100", "--json").stdout)
    assert [row["length_ratio"] for row in rows] == [0.75, 0.5]
    assert "length ratio 0.500" in nmt("score", hyp, short, "-r", ref, "--samples", "100").stdout


def test_paired_bootstrap_between_two_systems(tmp_path):
    ref = TINY_DATA / "train.de"
    refs = ref.read_text().splitlines()
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.write_text("\n".join(refs) + "\n")
    bad.write_text("\n".join(" ".join(r.split()[::-1]) for r in refs) + "\n")
    result = nmt("score", bad, good, "-r", ref, "--samples", "200", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert rows[0]["baseline"] and rows[1]["BLEU"]["score"] == 100.0
    assert rows[1]["BLEU"]["p_value"] < 0.05
    assert not rows[1]["identical_to_baseline"]


def test_paired_test_of_a_copy_of_the_baseline_finds_no_difference(tmp_path):
    ref = TINY_DATA / "train.de"
    hyp, copy = tmp_path / "hyp", tmp_path / "copy"
    hyp.write_text("\n".join(" ".join(r.split()[::-1]) for r in ref.read_text().splitlines()) + "\n")
    copy.write_text(hyp.read_text())
    for test in ("bs", "ar"):
        rows = json.loads(nmt("score", hyp, copy, "-r", ref, "--paired-test", test, "--samples", "100",
                              "-m", "bleu", "-m", "chrf", "--json").stdout)
        assert rows[1]["identical_to_baseline"]
        assert rows[1]["BLEU"]["p_value"] == rows[1]["chrF2"]["p_value"] == 1.0
    assert "(identical to the baseline)" in nmt("score", hyp, copy, "-r", ref, "--samples", "100").stdout


@pytest.mark.parametrize("args, message", [
    (["score", "{tmp}/none.de", "-r", str(TINY_DATA / "valid.de")], "none.de: file not found"),
    (["score", str(TINY_DATA / "train.de"), "-r", str(TINY_DATA / "valid.de")], "train.de has 48 lines but"),
    (["score", "{tmp}/empty.de", "-r", str(TINY_DATA / "valid.de")], "empty.de: empty file"),
    (["translate", "-c", "{tmp}/none.pt"], "none.pt: checkpoint not found"),
    (["train", str(TINY), "--set", "train.max_stepz=1"], "train.max_stepz: unknown key"),
    (["tokenizer", str(TINY), "--set", "output_dir={tmp}/o", "--set", "data.train={tmp}/missing"], "missing.en: file not found"),
    (["tokenizer", str(TINY), "--set", "output_dir={tmp}/o", "--set", f"data.train={TINY_DATA / 'train.en'}"],
     "train.en.en: file not found (also tried it with .gz, .xz, .bz2); a split is the stem its two files "
     f"share: {TINY_DATA / 'train'}, not {TINY_DATA / 'train.en'}"),
    (["tokenizer", str(TINY), "--set", "output_dir={tmp}/empty.de"], "empty.de: exists and is not a directory"),
    (["score", "{tmp}", "-r", str(TINY_DATA / "valid.de")], ": is a directory; name a file"),
    (["average", "--last", "3", "--dir", "{tmp}"], "0 step checkpoints, 3 asked for"),
    (["train", str(TINY), "--set", "train.max_steps=0"], "train.max_steps: Input should be greater than or equal to 1"),
    (["train", str(TINY), "--set", "model.max_positions=1"], "model.max_positions: Input should be greater than or equal to 2"),
    (["train", "{tmp}"], "a directory, not a recipe file"),
    (["info", "{tmp}"], "a directory, not a checkpoint file"),
    (["plot", "{tmp}/empty.de"], "empty.de: no metrics yet"),
    (["plot", str(TINY_DATA / "valid.de")], "valid.de:1: not a metrics record (invalid JSON"),
    (["score", str(TINY_DATA / "valid.de"), "-r", str(TINY_DATA / "valid.de"), "--tokenize", "bogus"],
     "--tokenize bogus: not one of sacrebleu's (none, zh, 13a"),
    (["score", str(TINY_DATA / "valid.de"), str(TINY_DATA / "valid.de"), "-r", str(TINY_DATA / "valid.de"),
      "--samples", "-1"], "--samples -1: a number of resamples"),
    (["score", str(TINY_DATA / "valid.de"), "-r", str(TINY_DATA / "valid.de"), "-l", "ende"],
     "--language-pair ende: SRC-TGT, e.g. en-zh"),
    (["train", str(TINY), "--set", "train.freeze=[encoder"], "the value is not valid YAML"),
    (["train", str(TINY), "--set", "decode.length_penalty=-1"], "decode.length_penalty: Input should be greater than or equal to 0"),
    (["rerank-tune", "-c", "{tmp}/none.pt", "--source", "{tmp}/empty.de", "--reference", "{tmp}/empty.de",
      "--grid", "0,half,1"], "--grid 0,half,1: expected weights"),
])
def test_errors_are_one_line_with_exit_code_2(tmp_path, args, message):
    (tmp_path / "empty.de").write_text("")
    result = nmt(*[a.replace("{tmp}", str(tmp_path)) for a in args], input="")
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_average_command_writes_a_usable_checkpoint(trained_tiny, tmp_path):
    ckpts = trained_tiny.out / "checkpoints"
    out = tmp_path / "avg.pt"
    result = nmt("average", ckpts / "best.pt", ckpts / "last.pt", "-o", out)
    assert result.exit_code == 0 and "averaged 1 checkpoint" in result.output and "counted once" in result.output
    translated = nmt("translate", "-c", out, input="Asian man sweeping the walkway.\n")
    assert translated.stdout.strip() == "Ein asiatischer Mann kehrt den Gehweg."
    refused = nmt("average", ckpts / "best.pt", "-o", ckpts / "best.pt")
    assert refused.exit_code == 2 and "would overwrite" in refused.output
    run_folder = nmt("info", trained_tiny.out)  # a run's folder where a checkpoint belongs: its checkpoints named
    assert run_folder.exit_code == 2 and "a directory, not a checkpoint file (it holds checkpoints/best.pt" in run_folder.output
    recipe = nmt("info", trained_tiny.out / "recipe.yaml")  # the recipe where its checkpoint belongs
    assert recipe.exit_code == 2 and "recipe.yaml: a recipe, not a checkpoint; its run's best is " in recipe.output
    assert str(ckpts / "best.pt") in recipe.output.replace("\n", "")


def test_interrupted_training_saves_a_checkpoint_and_resumes(tmp_path):
    import signal

    from nmt.checkpoint import load_checkpoint
    from tests.conftest import prepared_tiny

    out = tmp_path / "run [en-de]"  # brackets, which rich markup would take for a tag, and a space
    recipe = prepared_tiny(out, "train.max_steps=100000", "train.valid_every=100000")
    sets = [f"--set=output_dir={out}", f"--set=data.train={TINY_DATA / 'train'}",
            f"--set=data.valid={TINY_DATA / 'valid'}", f"--set=data.test={TINY_DATA / 'valid'}",
            "--set=train.valid_every=100000", "--set=train.log_every=1"]
    command = [str(Path(sys.executable).parent / "nmt"), "train", str(TINY), "--no-progress"]
    process = subprocess.Popen(command + sets + ["--set=train.max_steps=100000"],
                               stderr=subprocess.PIPE, text=True)
    for line in process.stderr:  # wait until it is really training
        if line.startswith("step 3:"):
            break
    process.send_signal(signal.SIGINT)
    rest = process.communicate(timeout=60)[1]
    assert process.returncode == 130, rest
    assert "run the same command again to resume" in rest and "Traceback" not in rest
    stopped_at = load_checkpoint(recipe.out / "checkpoints" / "last.pt")["progress"]["step"]
    assert stopped_at >= 3
    resumed = nmt("train", TINY, "--no-progress", *sets, f"--set=train.max_steps={stopped_at + 2}")  # in this process
    assert resumed.exit_code == 0, resumed.output
    assert f"nmt train {out}: " in resumed.output and f"resumed at step {stopped_at}" in resumed.output
    assert f"resumed with the recipe changed: train.max_steps 100000 -> {stopped_at + 2}\n" in resumed.output
    assert load_checkpoint(recipe.out / "checkpoints" / "last.pt")["progress"]["step"] == stopped_at + 2


def test_very_long_input_is_translated_in_parts_or_truncated_with_a_warning_and_checkpoints_average_on_the_fly(
        trained_tiny, tmp_path):
    ckpts = trained_tiny.out / "checkpoints"
    source = tmp_path / "long.en"
    source.write_text("A dog runs.\n" + "dog " * 400 + "\nTwo young toddlers outside on the grass.\n")
    out = tmp_path / "out.de"
    for split, warning in (("true", "line 2: a sentence of 400 tokens, more than the model's 127 (model.max_positions): "
                                    "translated in 4 parts"), ("false", "line 2: 400 tokens, truncated to 127")):
        result = nmt("translate", "-c", ckpts / "best.pt", "-c", ckpts / "last.pt", "-i", source, "-o", out,
                     "--beam-size", "2", "--set", f"decode.split_sentences={split}")
        assert result.exit_code == 0, result.output
        assert warning in " ".join(result.output.split()), result.output
        lines = out.read_text().split("\n")[:-1]
        assert len(lines) == 3 and lines[2] == "Zwei Kleinkinder im Freien auf dem Gras."


def test_plot_draws_the_learning_curve(trained_tiny, tmp_path):
    out = tmp_path / "curve.png"
    result = nmt("plot", trained_tiny.out, "-o", out)
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
    missing = nmt("plot", tmp_path / "nothing.jsonl")
    assert missing.exit_code == 2 and "metrics log not found" in missing.output


def test_plot_writes_only_a_format_it_names(trained_tiny, tmp_path):
    """The format follows the suffix (.png added where there is none, and said); a directory or a
    suffix matplotlib cannot draw is an error that leaves the file named there as it was."""
    bare = nmt("plot", trained_tiny.out, "-o", tmp_path / "curve")
    assert bare.exit_code == 0 and f"wrote {tmp_path / 'curve.png'}" in bare.output
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG" and not (tmp_path / "curve").exists()
    assert nmt("plot", trained_tiny.out, "-o", tmp_path / "curve.svg").exit_code == 0
    assert b"<svg" in (tmp_path / "curve.svg").read_bytes()[:1000]
    text = tmp_path / "notes.txt"
    text.write_text("mine\n")
    wrong = nmt("plot", trained_tiny.out, "-o", text)
    assert wrong.exit_code == 2 and "cannot draw a .txt file; name one of" in wrong.output and "png" in wrong.output
    assert text.read_text() == "mine\n"
    folder = nmt("plot", trained_tiny.out, "-o", tmp_path)
    assert folder.exit_code == 2 and "is a directory" in folder.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curve.png", "curve.svg", "notes.txt"]


def test_run_summary_names_scores_checkpoint_and_training(trained_tiny, tmp_path):
    from nmt.model.transformer import Transformer
    from tools.run_summary import summarize
    from nmt.score import score_file
    from nmt.checkpoint import load_checkpoint

    best = trained_tiny.out / "checkpoints" / "best.pt"
    hyp, ref = tmp_path / "valid.hyp", TINY_DATA / "valid.de"
    assert nmt("translate", "-c", str(best), "-i", str(TINY_DATA / "valid.en"), "-o", str(hyp)).exit_code == 0
    summary = summarize(trained_tiny.out, best, hyp, ref)
    assert summary["bleu"] == score_file(hyp, [ref])[0]["score"]
    assert summary["length_ratio"] == score_file(hyp, [ref])[0]["length_ratio"] > 0
    assert summary["bleu_signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a")
    assert summary["direction"] == "en-de" and summary["decode"]["beam_size"] == trained_tiny.decode.beam_size
    assert summary["parameters"] == Transformer(trained_tiny.model, 160, 160).num_parameters()
    progress = load_checkpoint(trained_tiny.out / "checkpoints" / "last.pt")["progress"]
    assert summary["training"]["updates"] == progress["step"] == trained_tiny.train.max_steps
    assert [p["step"] for p in summary["dev_bleu_greedy"]] == list(
        range(trained_tiny.train.valid_every, trained_tiny.train.max_steps + 1, trained_tiny.train.valid_every))


def test_ensemble_summary_scores_members_ensemble_and_paired_bootstrap(trained_tiny, tmp_path):
    from tools.run_summary import main as write_results
    from nmt.score import score_file

    best = trained_tiny.out / "checkpoints" / "best.pt"
    last = trained_tiny.out / "checkpoints" / "last.pt"
    src, ref = TINY_DATA / "valid.en", TINY_DATA / "valid.de"
    member_hyp, ensemble_hyp = trained_tiny.out / "valid.member.hyp", tmp_path / "ensemble.hyp"
    assert nmt("translate", "-c", str(best), "-i", str(src), "-o", str(member_hyp)).exit_code == 0
    ensembled = nmt("translate", "--ensemble", "-c", str(best), "-c", str(last), "-i", str(src), "-o", str(ensemble_hyp))
    assert ensembled.exit_code == 0, ensembled.output
    out = tmp_path / "results" / "summary.json"
    # The same run twice stands in for two seeds: both members translate identically.
    write_results([str(trained_tiny.out), str(trained_tiny.out), "--checkpoint", "checkpoints/best.pt",
                   "--hypotheses", "valid.member.hyp", "--reference", str(ref), "--ensemble", str(ensemble_hyp),
                   "-o", str(out)])
    summary = json.loads(out.read_text())
    cased, = score_file(ensemble_hyp, [ref])
    lowercased, = score_file(ensemble_hyp, [ref], lowercase=True)
    assert summary["bleu"] == cased["score"] and summary["length_ratio"] == cased["length_ratio"]
    assert summary["bleu_lowercased"] == lowercased["score"]
    assert "case:lc" in summary["bleu_lowercased_signature"] and "case:mixed" in summary["bleu_signature"]
    member_bleu = score_file(member_hyp, [ref])[0]["score"]
    assert [m["bleu"] for m in summary["members"]] == [member_bleu, member_bleu]
    assert summary["members_bleu_mean"] == round(member_bleu, 2)
    assert summary["members_bleu_range"] == [member_bleu, member_bleu]
    assert len(summary["paired_bootstrap"]) == 2
    for pair in summary["paired_bootstrap"]:
        assert pair["baseline_bleu"] == round(member_bleu, 4) and pair["ensemble_bleu"] == summary["bleu"]
        assert 0 < pair["p_value"] <= 1


def test_decode_settings_from_another_recipe(trained_tiny, tmp_path):
    tuned = tmp_path / "tuned.yaml"
    tuned.write_text(TINY.read_text().replace("  beam_size: 4\n", "  beam_size: 4\n  nbest: 3\n"))
    source = "Asian man sweeping the walkway.\n"
    ckpt = str(trained_tiny.out / "checkpoints" / "best.pt")
    plain = nmt("translate", "-c", ckpt, "--output-format", "jsonl", input=source)
    tuned_run = nmt("translate", "-c", ckpt, "--decode-from", str(tuned), "--output-format", "jsonl", input=source)
    assert plain.exit_code == 0 and tuned_run.exit_code == 0, tuned_run.output
    assert len(json.loads(plain.stdout)["hypotheses"]) == 1
    assert len(json.loads(tuned_run.stdout)["hypotheses"]) == 3  # the tuned recipe's nbest
    missing = nmt("translate", "-c", ckpt, "--decode-from", str(tmp_path / "nope.yaml"), input=source)
    assert missing.exit_code == 2 and "nope.yaml" in missing.output


def test_a_bad_decode_setting_names_where_it_came_from(trained_tiny, tmp_path):
    """A decode value out of range is one line naming what set it, the flag, the --set or the
    --decode-from recipe's line, and nothing is written."""
    ckpt, out = str(trained_tiny.out / "checkpoints" / "best.pt"), tmp_path / "out.de"
    lines = TINY.read_text().splitlines()
    at = lines.index("  length_penalty: 0.6")
    tuned = tmp_path / "tuned.yaml"
    tuned.write_text("\n".join([*lines[:at], "  length_penalty: -2", *lines[at + 1:]]) + "\n")
    for options, place in ((["--beam-size", "0"], "--beam-size 0: decode.beam_size"),
                           (["--set", "decode.beam_size=0"], "--set decode.beam_size=0: decode.beam_size"),
                           (["--beam-size", "2", "--set", "decode.beam_size=0"], "--set decode.beam_size=0:"),
                           (["--mbr", "-1"], "--mbr -1: decode.mbr.candidates"),  # a key of a section
                           (["--decode-from", str(tuned)], f"{tuned}: line {at + 1}: decode.length_penalty")):
        result = nmt("translate", "-c", ckpt, "-o", out, *options, input="A dog runs.\n")
        assert result.exit_code == 2 and place in result.output, (options, result.output)
        assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
        assert not out.exists()


def test_jsonl_input_forces_prefixes_and_a_bad_line_fails_alone(trained_tiny, tmp_path):
    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    requests = [{"text": "A dog runs on the beach.", "prefix": "Zwei Katzen"}, {"text": "A dog runs on the beach."},
                "not json", {"prefix": "Ein"}, {"text": "A dog.", "constraints": ["Hund", ""]}, {"text": 3},
                {"text": "A dog.", "colour": "red"}, [1, 2], {"text": ""}]
    source = tmp_path / "in.jsonl"
    source.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in requests))
    out = tmp_path / "out.de"
    result = nmt("translate", "-c", ckpt, "-i", source, "-o", out, "--input-format", "jsonl")
    assert result.exit_code == 1
    for fragment in ("line 3: not JSON", "line 4: text: missing", "line 5: constraints: an empty constraint", "line 6: text: a string is expected", "line 7: colour: unknown field",
                     "line 8: a JSON object is expected", "6 line(s) could not be translated"):
        assert fragment in result.output
    assert "Traceback" not in result.output
    lines = out.read_text().split("\n")[:-1]
    assert len(lines) == len(requests)
    assert lines[0].startswith("Zwei Katzen") and lines[1] == "Ein Hund rennt am Strand."
    assert lines[2:] == [""] * 7
    jsonl = nmt("translate", "-c", ckpt, "-i", source, "--input-format", "jsonl", "--output-format", "jsonl")
    rows = [json.loads(line) for line in jsonl.stdout.splitlines()]
    assert rows[3] == {"error": "line 4: text: missing"} and rows[0]["hypotheses"][0]["text"].startswith("Zwei Katzen")


def test_token_scores_and_alignments_in_jsonl(trained_tiny, tmp_path):
    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    lines = "A black dog leaps over a log.\n\nTwo young toddlers outside on the grass.\n"
    result = nmt("translate", "-c", ckpt, "--output-format", "jsonl", "--token-scores", "--alignments",
                 "--beam-size", "1", input=lines)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line)["hypotheses"][0] for line in result.stdout.splitlines()]
    assert len(rows) == 3 and rows[1]["tokens"] == [] and rows[1].get("alignment", "") == ""
    for row, source in zip(rows[::2], lines.split("\n")[::2]):
        assert len(row["token_log_probs"]) == len(row["tokens"])
        assert sum(row["token_log_probs"]) >= row["log_prob"] - 1e-3  # the log_prob adds the EOS step
        pairs = [tuple(map(int, p.split("-"))) for p in row["alignment"].split()]
        # every word of both sides is linked, in output order
        assert sorted(set(t for _, t in pairs)) == list(range(len(row["text"].split())))
        assert [t for _, t in pairs] == sorted(t for _, t in pairs)
        assert sorted(set(s for s, _ in pairs)) == list(range(len(source.split())))
    plain = nmt("translate", "-c", ckpt, "--alignments", input=lines)
    assert plain.exit_code == 2 and "--token-scores and --alignments need --output-format jsonl" in plain.output


def test_jsonl_constraints_are_placed_and_a_misfit_is_a_warning(trained_tiny, tmp_path):
    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    requests = [{"text": "A black dog leaps over a log.", "constraints": ["Katze"]},
                {"text": "A black dog leaps over a log.", "constraints": ["weißer Hund", "springt"]},
                {"text": "A dog.", "constraints": ["sehr " * 30]}, {"text": "A dog."}]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in requests), encoding="utf-8")
    result = nmt("translate", "-c", ckpt, "-i", source, "--input-format", "jsonl")
    assert result.exit_code == 0, result.output
    lines = result.stdout.split("\n")[:-1]
    assert "Katze" in lines[0] and "weißer Hund" in lines[1] and "springt" in lines[1]
    assert "line 3: constraints:" in result.output and "more than the output limit" in result.output
    assert lines[2] and lines[3]
    export = tmp_path / "ct2"
    assert nmt("export", ckpt, "-o", export).exit_code == 0
    result = nmt("translate", "-c", export, "-i", source, "--input-format", "jsonl")
    assert result.exit_code == 1 and "line 1: constraints: CTranslate2 has no lexical constraints" in result.output
    assert result.stdout.split("\n")[3]  # the line without constraints is translated


def test_a_short_option_means_one_thing_on_every_verb():
    """-s is --set wherever a verb has it, -c the checkpoint, -i the input, -o the output."""
    import typer.main

    meanings: dict[str, set[str]] = {}
    for name, command in typer.main.get_command(app).commands.items():
        for param in command.params:
            if param.param_type_name == "option":
                for short in (o for o in param.opts if len(o) == 2):
                    meanings.setdefault(short, set()).add(max(param.opts, key=len))
    assert meanings["-s"] == {"--set"} and meanings["-c"] == {"--checkpoint"}
    assert all(len(longs) == 1 for longs in meanings.values()), meanings


def test_square_brackets_in_help_are_printed_not_taken_for_markup():
    """Typer renders help as rich markup, where `[comet]` is a style tag that vanishes: every
    bracketed word in a verb's help (an extra's name, say) must reach the printed help."""
    import re

    import typer.main

    for name, command in typer.main.get_command(app).commands.items():
        texts = [command.help or "", *(getattr(param, "help", None) or "" for param in command.params)]
        words = {word for text in texts for word in re.findall(r"\[([a-z_]+)\]", text)}
        printed = nmt(name, "--help", terminal_width=400).output
        for word in words:
            assert f"[{word}]" in printed, f"nmt {name} --help lost [{word}]"


def test_an_output_that_is_an_input_is_refused_and_the_input_kept(trained_tiny, tmp_path):
    """-o naming the input file (or a link to it) would replace the user's text with its
    translation (or, for a corpus stem, rewrite it as the corpus's copy): a one-line error before
    any work, and the file as it was."""
    from tests.conftest import one_line_error

    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    source, target = tmp_path / "text.en", tmp_path / "text.de"
    source.write_text("a small dog .\n", encoding="utf-8")
    target.write_text("ein kleiner hund .\n", encoding="utf-8")
    (tmp_path / "link.de").symlink_to(source)
    for output in (source, tmp_path / "link.de"):
        one_line_error(nmt("translate", "-c", ckpt, "-i", source, "-o", output), f"{output}: is the input {source}")
    one_line_error(nmt("likelihood", "-c", ckpt, "--source", source, "--target", target, "-o", target),
                   f"{target}: is the input {target}")
    one_line_error(nmt("distill", "-c", ckpt, "-i", source, "-o", tmp_path / "text"), f"{source}: is the input")
    one_line_error(nmt("back-translate", "-c", ckpt, "-i", source, "-o", tmp_path / "text"), f"{source}: is the input")
    assert source.read_text(encoding="utf-8") == "a small dog .\n" and target.read_text(encoding="utf-8") == "ein kleiner hund .\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.de", "text.de", "text.en"]


def test_a_corpus_stem_ending_in_gz_writes_each_side_compressed_as_a_recipe_reads_it(trained_tiny, tmp_path):
    """back-translate and distill -o STEM.gz (.xz, .bz2): STEM.en.gz and STEM.de.gz, which
    `data.train: STEM` reads; distill's report STEM.json."""
    import bz2
    import gzip

    from nmt.data.corpus import read_parallel, split_file

    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    source = tmp_path / "mono.en"
    source.write_text("a small dog .\ntwo men sit .\n", encoding="utf-8")
    assert nmt("back-translate", "-c", ckpt, "-i", source, "-o", tmp_path / "bt" / "syn.gz").exit_code == 0
    assert nmt("distill", "-c", ckpt, "-i", source, "-o", tmp_path / "kd" / "dist.bz2").exit_code == 0
    assert sorted(p.name for p in (tmp_path / "bt").iterdir()) == ["syn.de.gz", "syn.en.gz"]
    assert sorted(p.name for p in (tmp_path / "kd").iterdir()) == ["dist.de.bz2", "dist.en.bz2", "dist.json"]
    assert gzip.decompress((tmp_path / "bt" / "syn.en.gz").read_bytes()) == source.read_bytes()
    assert bz2.decompress((tmp_path / "kd" / "dist.en.bz2").read_bytes()) == source.read_bytes()
    stem = str(tmp_path / "bt" / "syn")
    pairs = list(read_parallel(split_file(stem, "en"), split_file(stem, "de")))
    assert [s for s, _ in pairs] == ["a small dog .", "two men sit ."] and all(t for _, t in pairs)


def test_an_output_that_cannot_be_written_is_a_one_line_error_and_a_device_stays_one(trained_tiny, tmp_path):
    """A folder, a path under a file, a full disk: one-line errors (no traceback, no hidden
    leftovers). /dev/null is written to, never replaced by a regular file (as root it could be)."""
    import stat

    from tests.conftest import one_line_error

    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    source = tmp_path / "text.en"
    source.write_text("a small dog .\n", encoding="utf-8")
    one_line_error(nmt("translate", "-c", ckpt, "-i", source, "-o", tmp_path), f"{tmp_path}: is a directory")
    one_line_error(nmt("translate", "-c", ckpt, "-i", source, "-o", source / "out.de"), f"{source / 'out.de'}: cannot write there")
    if Path("/dev/full").exists():
        one_line_error(nmt("translate", "-c", ckpt, "-i", source, "-o", "/dev/full"), "/dev/full: cannot write there (No space")
    assert nmt("translate", "-c", ckpt, "-i", source, "-o", "/dev/null").exit_code == 0
    assert all(stat.S_ISCHR(Path(device).stat().st_mode) for device in ("/dev/null", "/dev/full") if Path(device).exists())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["text.en"]


def test_a_path_the_system_refuses_is_a_one_line_error_in_any_verb(tmp_path):
    """Where no check of nmt's foresaw it (an output_dir that is a file, say), the system's refusal
    still comes as one line naming the path, exit code 2, no traceback."""
    from tests.conftest import one_line_error

    in_the_way = tmp_path / "runs"
    in_the_way.write_text("a file where the run's folder would go")
    sets = [f"--set=output_dir={in_the_way / 'tiny'}", f"--set=data.train={TINY_DATA / 'train'}",
            f"--set=data.valid={TINY_DATA / 'valid'}"]
    one_line_error(nmt("tokenizer", TINY, *sets), f"{in_the_way / 'tiny'}: ")
    assert in_the_way.read_text() == "a file where the run's folder would go"


def test_devices_and_threads_this_machine_cannot_use_are_one_line_errors(trained_tiny, tmp_path):
    """A device torch cannot read or this machine lacks, or a negative thread count: one line
    naming the option, as written (":x:" is not turned into an emoji), before anything loads."""
    import torch

    from tests.conftest import one_line_error

    ckpt, source = trained_tiny.out / "checkpoints" / "best.pt", TINY_DATA / "valid.en"
    out = tmp_path / "out.de"
    lacking = "cuda:99" if torch.cuda.is_available() else "cuda"
    for options, fragment in ((["--device", "tpu"], "--device tpu: not a device"),
                              (["--device", "cuda:x"], "--device cuda:x: not a device"),
                              (["--device", lacking], f"--device {lacking}: "),
                              (["--threads", "-1"], "--threads -1: a number of threads")):
        one_line_error(nmt("translate", "-c", ckpt, "-i", source, "-o", out, *options), fragment)
    one_line_error(nmt("score", source, "-r", source, "--threads", "-2"), "--threads -2")
    assert not out.exists()
