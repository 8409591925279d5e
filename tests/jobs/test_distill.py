"""Sequence-level distillation (`nmt distill`, nmt.jobs.distill): the teacher's translations as a
corpus aligned line for line with its source, empty lines left out, and cross-entropy filtering
dropping exactly the stated share, the pairs `nmt likelihood` scores worst."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from nmt.cli import app
from nmt.data.corpus import read_lines
from tests.conftest import TINY_DATA, one_line_error

runner = CliRunner()


def test_distilled_corpus_is_the_teachers_translations_line_for_line(trained_tiny, tmp_path):
    ckpt = str(trained_tiny.out / "checkpoints" / "best.pt")
    lines = list(read_lines(TINY_DATA / "train.en"))[:10]
    lines[4:4] = ["", "  "]
    source = tmp_path / "train.en"
    source.write_text("\n".join(lines) + "\n")
    assert runner.invoke(app, ["translate", "-c", ckpt, "-i", str(source), "-o", str(tmp_path / "plain.de")]).exit_code == 0
    translations = (tmp_path / "plain.de").read_text().splitlines()

    result = runner.invoke(app, ["distill", "-c", ckpt, "-i", str(source), "-o", str(tmp_path / "all" / "train")])
    assert result.exit_code == 0, result.output
    kept = [i for i, line in enumerate(lines) if line.strip()]
    assert (tmp_path / "all" / "train.en").read_text().splitlines() == [lines[i] for i in kept]
    assert (tmp_path / "all" / "train.de").read_text().splitlines() == [translations[i] for i in kept]
    report = json.loads((tmp_path / "all" / "train.json").read_text())
    assert (report["read"], report["written"], report["empty"], report["dropped"]) == (12, 10, 2, 0)
    assert report["teacher"] == [ckpt] and report["decode"]["beam_size"] == trained_tiny.decode.beam_size

    # Dropping 30 %: exactly 3 of the 10 pairs, those nmt likelihood scores worst per token.
    result = runner.invoke(app, ["distill", "-c", ckpt, "-i", str(source), "-o", str(tmp_path / "some" / "train"),
                                 "--drop-worst", "0.3"])
    assert result.exit_code == 0, result.output
    pairs = list(zip([lines[i] for i in kept], [translations[i] for i in kept]))
    (tmp_path / "src").write_text("".join(s + "\n" for s, _ in pairs))
    (tmp_path / "tgt").write_text("".join(t + "\n" for _, t in pairs))
    scored = runner.invoke(app, ["likelihood", "-c", ckpt, "--source", str(tmp_path / "src"), "--target", str(tmp_path / "tgt"),
                                 "--output-format", "jsonl"])
    per_token = []
    for line in scored.stdout.splitlines():
        tokens = json.loads(line)["token_log_probs"][:-1]  # without EOS, as distill counts
        per_token.append(-sum(tokens) / len(tokens))
    survivors = (tmp_path / "some" / "train.en").read_text().splitlines()
    assert len(survivors) == 7
    dropped = [e for (s, _), e in zip(pairs, per_token) if s not in survivors]
    remaining = [e for (s, _), e in zip(pairs, per_token) if s in survivors]
    assert len(dropped) == 3 and min(dropped) >= max(remaining) - 2e-4  # both rounded to 4 decimals a token
    one_line_error(runner.invoke(app, ["distill", "-c", ckpt, "-i", str(source), "-o", str(tmp_path / "x"),
                                       "--drop-worst", "1.5"]), "--drop-worst 1.5")


def test_with_the_reference_each_line_is_the_n_best_translation_closest_to_it(trained_tiny, tmp_path):
    ckpt = str(trained_tiny.out / "checkpoints" / "best.pt")
    lines = list(read_lines(TINY_DATA / "train.en"))[:8] + [""]
    source = tmp_path / "train.en"
    source.write_text("\n".join(lines) + "\n")
    beam = trained_tiny.decode.beam_size
    assert beam > 1
    result = runner.invoke(app, ["translate", "-c", ckpt, "-i", str(source), "-o", str(tmp_path / "nbest.jsonl"),
                                 "--output-format", "jsonl", "--set", f"decode.nbest={beam}"])
    assert result.exit_code == 0, result.output
    nbest = [[h["text"] for h in json.loads(line)["hypotheses"]] for line in (tmp_path / "nbest.jsonl").open()]
    # A reference that is the teacher's last candidate: sentence BLEU 100 picks exactly it.
    references = [texts[-1] for texts in nbest]
    (tmp_path / "train.de").write_text("\n".join(references) + "\n")

    result = runner.invoke(app, ["distill", "-c", ckpt, "-i", str(source), "-o", str(tmp_path / "inter" / "train"),
                                 "-r", str(tmp_path / "train.de")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "inter" / "train.en").read_text().splitlines() == lines[:8]
    assert (tmp_path / "inter" / "train.de").read_text().splitlines() == references[:8]
    report = json.loads((tmp_path / "inter" / "train.json").read_text())
    assert report["decode"]["nbest"] == beam and report["reference_file"] == str(tmp_path / "train.de")
    assert report["not_first"] == sum(texts[-1] != texts[0] for texts in nbest[:8]) > 0

    (tmp_path / "short.de").write_text("\n".join(references[:3]) + "\n")
    one_line_error(runner.invoke(app, ["distill", "-c", ckpt, "-i", str(source), "-o", str(tmp_path / "x"),
                                       "-r", str(tmp_path / "short.de")]), "short.de: 3 lines, but")
