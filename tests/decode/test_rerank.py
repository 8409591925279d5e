"""Reranking the beam's n-best list (decode.rerank, nmt.decode.rerank) by a reverse model, and
`nmt rerank-tune`: weight 0 keeps the beam's choice, a weight picks the candidate its own
arithmetic picks from forced-decoding scores computed apart, and the grid search's results."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.translate import decode_settings, translate_lines
from nmt.data.tokenizer import output_text
from tests.conftest import TINY_DATA, one_line_error, trained_once

runner = CliRunner()


@pytest.fixture(scope="module")
def models(trained_tiny, tmp_path_factory):
    from nmt.decode.engines.engine import load_engine

    reverse = trained_once(tmp_path_factory, "data.src_lang=de", "data.tgt_lang=en", "train.max_steps=100")
    return {"forward": load_engine([trained_tiny.out / "checkpoints" / "best.pt"]),
            "forward_path": trained_tiny.out / "checkpoints" / "best.pt",
            "reverse_path": reverse.out / "checkpoints" / "best.pt"}


def lines_of(n: int) -> list[str]:
    return (TINY_DATA / "valid.en").read_text().splitlines()[:n]


def test_weight_zero_is_the_beam_and_a_weight_picks_by_its_arithmetic(models):
    from nmt.decode.engines.engine import load_engine
    from nmt.jobs.likelihood import score_pairs

    forward, lines = models["forward"], lines_of(8)
    beam = translate_lines(forward, lines, decode_settings(forward.recipe, None, {}, ["decode.nbest=4"]))
    rerank = ["decode.rerank.candidates=4", f"decode.rerank.reverse_model={models['reverse_path']}"]
    zero = translate_lines(forward, lines, decode_settings(forward.recipe, None, {}, rerank))
    assert [h[0].tokens for h in zero] == [h[0].tokens for h in beam]
    # The tiny models agree on their own data, so a positive weight never overturns the beam there;
    # a negative one does, which is what tests the arithmetic.
    weight = -20.0
    reranked = translate_lines(forward, lines, decode_settings(forward.recipe, None, {}, [
        *rerank, f"decode.rerank.reverse_weight={weight}", "decode.nbest=4"]))
    reverse = load_engine([models["reverse_path"]])
    assert sum(b[0].tokens != r[0].tokens for b, r in zip(beam, reranked)) >= 2
    for line, candidates, chosen in zip(lines, beam, reranked):
        texts = [output_text(forward.tgt_tokenizer, h.tokens) for h in candidates]
        scores = score_pairs(reverse, [(text, line) for text in texts], 4096)  # log P(source | candidate)
        totals = [h.score + weight * s.log_prob_per_token for h, s in zip(candidates, scores)]
        best = max(range(len(totals)), key=lambda i: (totals[i], -i))
        assert chosen[0].tokens == candidates[best].tokens
        assert [h.selection for h in chosen] == pytest.approx(sorted(totals, reverse=True), abs=1e-4)


def test_rerank_tune_writes_its_grid_and_the_flags(models, tmp_path):
    source, reference = tmp_path / "dev.en", tmp_path / "dev.de"
    source.write_text("\n".join(lines_of(8)) + "\n")
    reference.write_text("\n".join((TINY_DATA / "valid.de").read_text().splitlines()[:8]) + "\n")
    out = tmp_path / "tuning.json"
    result = runner.invoke(app, ["rerank-tune", "-c", str(models["forward_path"]), "--source", str(source), "-r",
                                 str(reference), "--candidates", "4", "--reverse-model", str(models["reverse_path"]),
                                 "--grid", "0,0.5,2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    tuning = json.loads(out.read_text())
    assert [row["reverse_weight"] for row in tuning["grid"]] == [0.0, 0.5, 2.0]
    assert tuning["best"]["bleu"] == max(row["bleu"] for row in tuning["grid"]) >= tuning["beam"]["bleu"]
    assert f"--set decode.rerank.reverse_weight={tuning['best']['reverse_weight']}" in result.output
    # the beam's row is the beam's BLEU, as `nmt score` gives it for `nmt translate`'s output
    runner.invoke(app, ["translate", "-c", str(models["forward_path"]), "-i", str(source), "-o", str(tmp_path / "hyp")])
    scored = runner.invoke(app, ["score", str(tmp_path / "hyp"), "-r", str(reference), "--json"])
    assert tuning["beam"]["bleu"] == json.loads(scored.stdout)["score"]


def test_bad_rerank_settings_are_one_line_errors(models, trained_tiny, tmp_path):
    source = tmp_path / "in.en"
    source.write_text("A dog.\n")
    base = ["translate", "-c", str(models["forward_path"]), "-i", str(source)]
    one_line_error(runner.invoke(app, [*base, "--rerank", "8", "--set",
                                       f"decode.rerank.reverse_model={models['reverse_path']}"]),
                   "rerank.candidates (8) must not exceed beam_size (4)")
    one_line_error(runner.invoke(app, [*base, "--rerank", "4"]), "rerank.reverse_model or rerank.qe_model")
    one_line_error(runner.invoke(app, [*base, "--rerank", "4", "--set",
                                       f"decode.rerank.reverse_model={models['forward_path']}"]),
                   "translates en→de, but reranking needs de→en")
    one_line_error(runner.invoke(app, [*base, "--rerank", "4", "--mbr", "4", "--set",
                                       f"decode.rerank.reverse_model={models['reverse_path']}"]), "choose one")

