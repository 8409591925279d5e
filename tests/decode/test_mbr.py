"""Minimum-Bayes-risk decoding (nmt.decode.mbr, decode.mbr): the chrF utility equal to sacrebleu's,
the choice on a case worked by hand, one candidate giving itself, epsilon sampling's floor, and
one output per line whatever the lines around it: in one process or two, and through `nmt serve`."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import torch
from sacrebleu import sentence_bleu, sentence_chrf
from typer.testing import CliRunner

from nmt.cli import app
from nmt.config import MbrConfig
from nmt.decode.mbr import mbr_order, utility_matrices
from nmt.decode.search import _sampler
from nmt.decode.selection import line_seed
from nmt.decode.translate import decode_settings, translate_lines
from nmt.metrics.chrf import chrf_matrix
from nmt.data.tokenizer import output_text
from tests.conftest import TINY_DATA, one_line_error

runner = CliRunner()


def test_chrf_matrix_equals_sacrebleu_sentence_chrf():
    lines = (TINY_DATA / "train.de").read_text().splitlines()[:12] + ["", "  ", "a", "ab", "Ein Hund.", "ein hund ."]
    random.seed(0)
    for _ in range(20):
        chosen = random.sample(lines, 5)
        matrix = chrf_matrix(chosen, chosen)
        for i, hyp in enumerate(chosen):
            for j, ref in enumerate(chosen):
                assert matrix[i][j] == pytest.approx(sentence_chrf(hyp, [ref]).score, abs=1e-9)
    other = ["Ein Hund läuft.", "Zwei Männer"]
    assert chrf_matrix(lines[:3], other)[2][1] == pytest.approx(sentence_chrf(lines[2], [other[1]]).score, abs=1e-9)
    # chrF++ (word unigrams and bigrams), with punctuation at a word's start and end and alone
    lines += ["(Ein) Hund, läuft!", "„Ein Hund“ läuft ...", "- Ein - Hund -"]
    for _ in range(20):
        chosen = random.sample(lines, 5)
        matrix = chrf_matrix(chosen, chosen, word_order=2)
        for i, hyp in enumerate(chosen):
            for j, ref in enumerate(chosen):
                assert matrix[i][j] == pytest.approx(sentence_chrf(hyp, [ref], word_order=2).score, abs=1e-9)
    assert chrf_matrix(["(Ein) Hund, läuft!"], ["Ein Hund läuft"], word_order=2)[0][0] != \
        chrf_matrix(["(Ein) Hund, läuft!"], ["Ein Hund läuft"])[0][0]


def test_chrf_choice_worked_by_hand():
    """"aa", "ab", "bb": whitespace-free 2-character strings, so only 1- and 2-grams count.
    chrF(aa, ab): unigrams match 1 of 2 each way (P = R = 1/2), bigrams none; averaged over the two
    orders P = R = 1/4, and F2 = 5·P·R / (4P + R) = 25. Likewise chrF(ab, bb) = 25, chrF(aa, bb) = 0,
    and each against itself 100. Expected utilities: aa (100 + 25 + 0) / 3 = 41.67, ab 50, bb 41.67:
    MBR picks "ab", the middle one, which neither the first nor the last candidate is."""
    candidates = ["aa", "ab", "bb"]
    matrix = utility_matrices(MbrConfig(candidates=3), ["src"], [candidates])[0]
    assert matrix == [[pytest.approx(v) for v in row] for row in [[100, 25, 0], [25, 100, 25], [0, 25, 100]]]
    order = mbr_order(matrix)
    assert order[0][0] == 1 and order[0][1] == pytest.approx(50.0)
    assert [i for i, _ in order] == [1, 0, 2]  # ties keep the candidates' order


def test_bleu_utility_is_sacrebleu_sentence_bleu():
    candidates = ["a dog runs on the grass", "a dog runs in the grass", "the cat sleeps"]
    matrix = utility_matrices(MbrConfig(candidates=3, utility="bleu"), ["src"], [candidates])[0]
    assert matrix[0][1] == pytest.approx(sentence_bleu(candidates[0], [candidates[1]]).score)
    assert mbr_order(matrix)[0][0] in (0, 1) and mbr_order([[7.0]]) == [(0, 7.0)]
    chinese = ["我是学生。", "我是一个学生。", "他是老师。"]  # BLEU tokenized for the target, as sacrebleu -l en-zh
    matrix = utility_matrices(MbrConfig(candidates=3, utility="bleu"), ["src"], [chinese], "zho_Hans")[0]
    assert matrix[0][1] == pytest.approx(sentence_bleu(chinese[0], [chinese[1]], tokenize="zh").score)
    assert matrix[0][1] > 0
    assert sentence_bleu(chinese[0], [chinese[1]]).score == 0  # 13a: one word each
    plus = utility_matrices(MbrConfig(candidates=3, utility="chrf++"), ["src"], [candidates])[0]  # decode.mbr.utility chrf++
    assert plus[0][1] == pytest.approx(sentence_chrf(candidates[0], [candidates[1]], word_order=2).score, abs=1e-9)


def test_epsilon_sampling_never_draws_below_the_floor():
    log_probs = torch.tensor([[0.5, 0.44, 0.05, 0.01]]).log().repeat(4000, 1)
    generator = torch.Generator().manual_seed(0)
    drawn = _sampler(1.0, 0, 1.0, generator, epsilon=0.06)(log_probs)
    assert set(drawn.tolist()) == {0, 1}
    plain = _sampler(1.0, 0, 1.0, torch.Generator().manual_seed(0))(log_probs)
    assert {2, 3} <= set(plain.tolist())
    # a floor above every token keeps the most probable one
    assert set(_sampler(1.0, 0, 1.0, generator, epsilon=0.9)(log_probs[:50]).tolist()) == {0}


@pytest.fixture(scope="module")
def model(trained_tiny):
    from nmt.decode.engines.engine import load_engine

    return load_engine([trained_tiny.out / "checkpoints" / "best.pt"])


def lines_of(n: int) -> list[str]:
    return (TINY_DATA / "valid.en").read_text().splitlines()[:n]


def test_one_candidate_is_the_output(model):
    lines = lines_of(6)
    beam = translate_lines(model, lines, decode_settings(model.recipe, None, {}, []))
    one = translate_lines(model, lines, decode_settings(model.recipe, None, {}, [
        "decode.mbr.candidates=1", "decode.mbr.source=beam"]))
    assert [h[0].tokens for h in one] == [h[0].tokens for h in beam]
    assert all(h[0].selection == pytest.approx(100.0) for h in one if h[0].tokens)  # chrF of itself


def test_mbr_chooses_among_the_samples_by_expected_utility(model):
    """The output is the sample with the highest mean chrF against all the line's samples, and the
    samples are the line's own: drawn with the line's seed, whatever batch it is in."""
    cfg = decode_settings(model.recipe, None, {}, ["decode.mbr.candidates=6", "decode.epsilon=0.02", "decode.nbest=6"])
    lines = lines_of(5)
    results = translate_lines(model, lines, cfg)
    for line, hyps in zip(lines, results):
        texts = [output_text(model.tgt_tokenizer, h.tokens) for h in hyps]
        assert len(hyps) == 6
        utilities = [sum(row) / 6 for row in chrf_matrix(texts, texts)]
        assert [h.selection for h in hyps] == pytest.approx(sorted(utilities, reverse=True))
    alone = translate_lines(model, lines[2:3], cfg)
    assert [h.tokens for h in alone[0]] == [h.tokens for h in results[2]]
    assert line_seed(1, [5, 6]) == line_seed(1, [5, 6]) != line_seed(2, [5, 6])


def test_unset_epsilon_samples_mbrs_candidates_at_0_02_and_leaves_plain_sampling_alone(model):
    """decode.epsilon unset: MBR's samples are those of epsilon 0.02 (Freitag et al.'s, which beat
    plain sampling on Multi30k), plain --sampling draws as with epsilon 0, and an explicit 0 turns
    MBR's off; an engine without epsilon sampling (CTranslate2) samples plainly."""
    from types import SimpleNamespace

    from nmt.decode.selection import MBR_EPSILON, candidates_epsilon

    lines = lines_of(6)

    def tokens(*settings):
        return [[h.tokens for h in hyps] for hyps in translate_lines(model, lines, decode_settings(
            model.recipe, None, {}, [*settings, "decode.precision=fp32"]))]

    mbr = ["decode.mbr.candidates=8", "decode.nbest=8"]
    assert MBR_EPSILON == 0.02
    assert tokens(*mbr) == tokens(*mbr, "decode.epsilon=0.02") != tokens(*mbr, "decode.epsilon=0")
    assert tokens("decode.sampling=true") == tokens("decode.sampling=true", "decode.epsilon=0")
    unset = decode_settings(model.recipe, None, {}, mbr)
    ctranslate2 = SimpleNamespace(capabilities=SimpleNamespace(epsilon=False))
    assert unset.epsilon is None and candidates_epsilon(ctranslate2, unset) == 0.0


def test_mbr_the_same_in_one_process_two_and_through_serve(trained_tiny, tmp_path):
    from fastapi.testclient import TestClient

    from nmt.serve.app import create_app
    from nmt.serve.models import load_served

    ckpt = str(trained_tiny.out / "checkpoints" / "best.pt")
    lines = lines_of(8)
    source = tmp_path / "in.en"
    source.write_text("\n".join(lines) + "\n")
    flags = ["--mbr", "5", "--epsilon", "0.02", "--set", "decode.precision=fp32"]
    one = runner.invoke(app, ["translate", "-c", ckpt, "-i", str(source), "-o", str(tmp_path / "one"), *flags])
    two = runner.invoke(app, ["translate", "-c", ckpt, "-i", str(source), "-o", str(tmp_path / "two"), *flags,
                              "--nproc", "2"])
    assert one.exit_code == 0 and two.exit_code == 0, one.output + two.output
    assert (tmp_path / "one").read_text() == (tmp_path / "two").read_text()
    served = load_served([Path(ckpt)], overrides=["decode.mbr.candidates=5", "decode.epsilon=0.02",
                                                  "decode.precision=fp32"])
    with TestClient(create_app(served)) as client:  # the app of `nmt serve --set ...`, in this process
        response = client.post("/translate", json={"text": lines})
    status, reply = response.status_code, response.json()
    assert status == 200, reply
    assert reply["translations"] == (tmp_path / "one").read_text().splitlines()
    assert len(reply["selection"]) == len(lines) and all(s is not None for s in reply["selection"])


def test_bad_mbr_settings_are_one_line_errors(trained_tiny, tmp_path):
    ckpt = str(trained_tiny.out / "checkpoints" / "best.pt")
    source = tmp_path / "in.en"
    source.write_text("A dog.\n")
    base = ["translate", "-c", ckpt, "-i", str(source)]
    one_line_error(runner.invoke(app, [*base, "--mbr", "8", "--set", "decode.mbr.source=beam"]),
                   "mbr.candidates (8) must not exceed beam_size (4)")
    one_line_error(runner.invoke(app, [*base, "--mbr", "4", "--set", "decode.mbr.utility=comet"]),
                   "mbr.comet_model")
    one_line_error(runner.invoke(app, [*base, "--mbr", "4", "--set", "decode.mbr.utility=meteor"]), "decode.mbr.utility")
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text(json.dumps({"text": "A dog.", "constraints": ["Hund"]}) + "\n")
    result = runner.invoke(app, ["translate", "-c", ckpt, "-i", str(jsonl), "--input-format", "jsonl", "--mbr", "4"])
    assert "lexical constraints need beam search" in result.output
