"""`nmt likelihood`: forced-decoding scores of given translations, against independent truths
(a plain full forward, the scores the search reports for its own outputs, an ensemble's mixing)."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from nmt.cli import app
from nmt.special_tokens import BOS, EOS, PAD
from nmt.decode.engines.ensemble import Ensemble
from nmt.jobs.likelihood import score_pairs
from nmt.decode.engines.torch_engine import Translator, score_batch
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import translate_lines
from tests.conftest import TINY_DATA, one_line_error
from tests.decode.test_search import toy_model

runner = CliRunner()
SOURCES = [line.rstrip("\n") for line in open(TINY_DATA / "valid.en", encoding="utf-8")]


def full_forward_log_probs(model, src: list[int], tgt: list[int]) -> list[float]:
    """Independent of nmt's scoring code: one plain forward pass, softmax written out."""
    logits = model(torch.tensor([src + [EOS]]), torch.tensor([[BOS] + tgt]))[0].float()
    logits[:, [PAD, BOS]] = float("-inf")
    logp = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    return [logp[t, tok].item() for t, tok in enumerate(tgt + [EOS])]


def toy_translator(model) -> Translator:
    return Translator(model, None, None, None, torch.device("cpu"))


def test_scores_are_the_per_step_log_probs_of_a_full_forward_batched_or_alone():
    model = toy_model()
    pairs = [([5, 9, 12, 7], [6, 6, 30, 11, 4]), ([8, 6], []), ([30, 31, 32, 33, 34, 35], [9]), ([], [12, 13])]
    batched = score_batch(toy_translator(model), [s for s, _ in pairs], [t for _, t in pairs])
    for (src, tgt), scores in zip(pairs, batched):
        expected = full_forward_log_probs(model, src, tgt)
        assert len(scores) == len(tgt) + 1
        assert scores == pytest.approx(expected, abs=1e-5)
        assert score_batch(toy_translator(model), [src], [tgt])[0] == pytest.approx(expected, abs=1e-5)


def test_an_ensemble_scores_with_the_mean_of_its_members_probabilities():
    models = [toy_model(seed=1), toy_model(seed=2, d_model=48, heads=6, decoder_layers=1)]
    src, tgt = [5, 9, 12, 7], [6, 30, 11]
    members = [torch.tensor(full_forward_log_probs(m, src, tgt)).exp() for m in models]
    expected = torch.stack(members).mean(0).log().tolist()
    assert score_batch(toy_translator(Ensemble(models)), [src], [tgt])[0] == pytest.approx(expected, abs=1e-5)
    one = score_batch(toy_translator(Ensemble([models[0]])), [src], [tgt])[0]
    assert one == score_batch(toy_translator(models[0]), [src], [tgt])[0]


@pytest.mark.parametrize("beam_size", [1, 4])
def test_the_search_reports_the_likelihood_of_its_own_outputs(trained_tiny, beam_size):
    translator = load_engine([trained_tiny.out / "checkpoints" / "best.pt"])
    cfg = translator.recipe.decode.model_copy(update={"beam_size": beam_size, "nbest": 1, "max_len_a": 1.0, "max_len_b": 2})
    lines = SOURCES + ["A dog runs on the beach.", "Kids"]
    hyps = [h[0] for h in translate_lines(translator, lines, cfg)]
    src_ids = translator.src_tokenizer.encode(lines)
    forced = translator.score_batch(src_ids, [h.tokens for h in hyps])
    limits = [int(cfg.max_len_a * (len(s) + 1) + cfg.max_len_b) for s in src_ids]
    ended = [len(h.tokens) < limit for h, limit in zip(hyps, limits)]
    assert sum(ended) >= 4 and not all(ended)  # the limit is short enough to cut some outputs
    for h, scores, end in zip(hyps, forced, ended):
        # An output cut at its limit has no EOS: its log_prob stops before it.
        assert h.log_prob == pytest.approx(sum(scores if end else scores[:-1]), abs=1e-4)


def test_text_pairs_are_scored_in_order_with_eos_and_truncation_warned(trained_tiny):
    translator = load_engine([trained_tiny.out / "checkpoints" / "best.pt"])
    long = " ".join(["dog"] * 300)
    pairs = [(SOURCES[0], "Ein Mann."), ("", ""), (SOURCES[1], long), (SOURCES[2], "")]
    warnings = []
    scores = score_pairs(translator, pairs, max_tokens=64, warn=warnings.append, first_line=10)
    assert [s.tokens[-1] for s in scores] == ["</s>"] * 4 and scores[1].tokens == ["</s>"]
    assert len(scores[2].tokens) == translator.max_positions  # truncated pieces and EOS
    assert warnings == [f"line 12: target of {len(translator.tgt_tokenizer.encode(long))} tokens, "
                        f"truncated to {translator.max_positions - 1} (model.max_positions)"]
    alone = score_pairs(translator, pairs[:1], max_tokens=4096)[0]
    assert scores[0].token_log_probs == pytest.approx(alone.token_log_probs, abs=1e-5)
    assert scores[0].log_prob == pytest.approx(sum(alone.token_log_probs))


def test_the_progress_hears_the_pairs_scored_so_far_after_each_chunk(trained_tiny, monkeypatch):
    """The counter sets its count to what it hears (nmt.console.counter): the pairs so far, not a chunk's."""
    from nmt.jobs import likelihood

    monkeypatch.setattr(likelihood, "CHUNK_PAIRS", 3)
    translator = load_engine([trained_tiny.out / "checkpoints" / "best.pt"])
    heard = []
    lines = list(likelihood.score_stream(translator, [(s, "Ein Hund.") for s in SOURCES], 4096, done=heard.append))
    assert len(lines) == len(SOURCES) == 8 and heard == [3, 6, 8]


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_cli_text_and_jsonl_keep_one_line_per_pair(trained_tiny, tmp_path):
    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    refs = [line.rstrip("\n") for line in open(TINY_DATA / "valid.de", encoding="utf-8")]
    src = write(tmp_path / "s.en", SOURCES + [""])
    tgt = write(tmp_path / "t.de", refs + [""])
    out = tmp_path / "scores.txt"
    result = runner.invoke(app, ["likelihood", "-c", str(ckpt), "--source", str(src), "--target", str(tgt), "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = [float(x) for x in out.read_text().split("\n")[:-1]]
    assert len(text) == len(SOURCES) + 1 and all(x < 0 for x in text)
    result = runner.invoke(app, ["likelihood", "-c", str(ckpt), "--source", str(src), "--target", str(tgt), "--output-format", "jsonl"])
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["log_prob"] for r in rows] == pytest.approx(text, abs=1e-3)
    for r in rows:
        assert len(r["tokens"]) == len(r["token_log_probs"]) and r["tokens"][-1] == "</s>"
        assert r["log_prob_per_token"] == pytest.approx(r["log_prob"] / len(r["tokens"]), abs=1e-3)
    # Shuffled targets are less likely than the references.
    shuffled = write(tmp_path / "shuffled.de", refs[1:] + refs[:1] + [""])
    result = runner.invoke(app, ["likelihood", "-c", str(ckpt), "--source", str(src), "--target", str(shuffled)])
    assert sum(float(x) for x in result.stdout.split()) < sum(text) - 10


def test_cli_takes_decode_settings_from_set_as_translate_does(trained_tiny, tmp_path):
    ckpt = str(trained_tiny.out / "checkpoints" / "best.pt")
    src = write(tmp_path / "s.en", SOURCES)
    tgt = write(tmp_path / "t.de", [line.rstrip("\n") for line in open(TINY_DATA / "valid.de", encoding="utf-8")])
    args = ["likelihood", "-c", ckpt, "--source", str(src), "--target", str(tgt)]
    default = [float(x) for x in runner.invoke(app, args).stdout.split()]
    one_at_a_time = runner.invoke(app, [*args, "--set", "decode.max_tokens=8"])  # batches of one pair
    assert one_at_a_time.exit_code == 0, one_at_a_time.output
    assert [float(x) for x in one_at_a_time.stdout.split()] == pytest.approx(default, abs=1e-4)
    one_line_error(runner.invoke(app, [*args, "--set", "decode.max_tokenz=8"]), "decode.max_tokenz")


def test_bad_input_is_a_one_line_error_and_writes_nothing(trained_tiny, tmp_path):
    ckpt = str(trained_tiny.out / "checkpoints" / "best.pt")
    src = write(tmp_path / "s.en", ["A dog.", "A cat."])
    out = tmp_path / "out.txt"
    args = ["likelihood", "-c", ckpt, "--source", str(src), "-o", str(out)]
    one_line_error(runner.invoke(app, [*args, "--target", str(write(tmp_path / "short.de", ["Ein Hund."]))]),
                   "s.en has 2 lines but", "short.de has 1")
    one_line_error(runner.invoke(app, [*args, "--target", str(tmp_path / "missing.de")]), "missing.de: file not found")
    bad = tmp_path / "bad.de"
    bad.write_bytes(b"Ein Hund.\nEine \xff Katze.\n")
    one_line_error(runner.invoke(app, [*args, "--target", str(bad)]), "bad.de:2: invalid UTF-8")
    one_line_error(runner.invoke(app, [*args, "--target", str(src), "--output-format", "xml"]), "choose text or jsonl")
    assert not out.exists() and not list(tmp_path.glob(".out.txt*"))


def test_two_processes_score_what_one_scores_in_input_order(trained_tiny, tmp_path):
    """`--nproc 2`: each process scores a consecutive share of the pairs, batched within it; the
    scores are one process's (to the rounding other batches bring), the warnings name the input's
    own lines, and the progress counts every pair."""
    ckpt = str(trained_tiny.out / "checkpoints" / "best.pt")
    refs = [line.rstrip("\n") for line in open(TINY_DATA / "valid.de", encoding="utf-8")]
    sources = SOURCES * 3
    sources[13] = " ".join(["dog"] * 400)  # past the model's positions: a warning naming line 14
    src, tgt = write(tmp_path / "s.en", sources), write(tmp_path / "t.de", refs * 3)
    args = ["likelihood", "-c", ckpt, "--source", str(src), "--target", str(tgt), "--output-format", "jsonl"]
    one, two = runner.invoke(app, args), runner.invoke(app, [*args, "--nproc", "2"])
    assert one.exit_code == 0 and two.exit_code == 0, two.output
    rows_one, rows_two = ([json.loads(line) for line in run.stdout.splitlines()] for run in (one, two))
    assert len(rows_two) == len(sources) and [r["tokens"] for r in rows_two] == [r["tokens"] for r in rows_one]
    for a, b in zip(rows_one, rows_two):
        assert b["token_log_probs"] == pytest.approx(a["token_log_probs"], abs=1e-4)
    assert rows_two[0]["log_prob"] != rows_two[1]["log_prob"]  # (not one pair's score throughout)
    warned = [line for line in two.stderr.splitlines() if "line 14" in line]
    assert len(warned) == 1 and warned == [line for line in one.stderr.splitlines() if "line 14" in line]
    one_line_error(runner.invoke(app, [*args, "--nproc", "0"]), "--nproc 0: at least 1 process")


def test_a_corpus_as_a_recipe_names_it_is_scored_as_its_two_files_are(trained_tiny, tmp_path):
    """--corpus takes the pairs as data.train names a split (here a TSV file, as ParaCrawl ships
    them, and a path stem): the same scores as --source and --target; one way or the other."""
    ckpt = str(trained_tiny.out / "checkpoints" / "best.pt")
    refs = [line.rstrip("\n") for line in open(TINY_DATA / "valid.de", encoding="utf-8")]
    write(tmp_path / "pairs.en", SOURCES), write(tmp_path / "pairs.de", refs)
    (tmp_path / "pairs.tsv").write_text("".join(f"{s}\t{t}\n" for s, t in zip(SOURCES, refs)), encoding="utf-8")
    base = ["likelihood", "-c", ckpt, "--output-format", "jsonl"]
    files = runner.invoke(app, [*base, "--source", str(tmp_path / "pairs.en"), "--target", str(tmp_path / "pairs.de")])
    tsv = runner.invoke(app, [*base, "--corpus", str(tmp_path / "pairs.tsv")])
    stem = runner.invoke(app, [*base, "--corpus", str(tmp_path / "pairs")])
    assert files.exit_code == tsv.exit_code == stem.exit_code == 0, tsv.output
    assert tsv.stdout == files.stdout == stem.stdout and len(tsv.stdout.splitlines()) == len(SOURCES)
    one_line_error(runner.invoke(app, [*base, "--corpus", str(tmp_path / "pairs.tsv"), "--source",
                                       str(tmp_path / "pairs.en")]), "give --corpus, or --source and --target, not both")
    one_line_error(runner.invoke(app, [*base, "--source", str(tmp_path / "pairs.en")]),
                   "name the pairs to score: --source and --target, or --corpus")
    one_line_error(runner.invoke(app, [*base, "--corpus", str(tmp_path / "pairs.tsv"), "-o", str(tmp_path / "pairs.tsv")]),
                   "is the input")
