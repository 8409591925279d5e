"""COMET and CometKiwi through `nmt score`, against unbabel-comet's own API on tiny local models
(tests/fixtures/comet_models.py): the same system and segment scores, paired tests on the segment
scores as by hand, offline loading, and one-line errors for a model that is missing, broken or
for the other task."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.data.tokenizer import output_text
from tests.conftest import TINY_DATA, one_line_error, optional_module

comet, installed = optional_module("comet")
pytestmark = [pytest.mark.comet, installed]  # make test runs these in the COMET environment (.venv-comet)
runner = CliRunner()


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from tests.fixtures.comet_models import build_comet, build_encoder

    root = tmp_path_factory.mktemp("comet")
    encoder = build_encoder(root / "xlmr-tiny")
    return {"comet": build_comet(root / "comet", encoder), "cometkiwi": build_comet(root / "kiwi", encoder, "cometkiwi"),
            "encoder": encoder, "root": root}


@pytest.fixture(scope="module")
def texts(tmp_path_factory):
    """Ten lines: sources, references, and two systems (the reference with words dropped, and shuffled)."""
    root = tmp_path_factory.mktemp("texts")
    src = (TINY_DATA / "train.en").read_text().splitlines()[:10]
    ref = (TINY_DATA / "train.de").read_text().splitlines()[:10]
    first = [" ".join(line.split()[:-1]) or line for line in ref]
    second = [ref[(i + 3) % 10] if i % 3 == 0 else line for i, line in enumerate(ref)]
    paths = {}
    for name, lines in (("src", src), ("ref", ref), ("a", first), ("b", second)):
        paths[name] = root / f"{name}.txt"
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


def comet_api(directory, samples):
    """unbabel-comet's own scores for `samples`."""
    model = comet.load_from_checkpoint(str(directory / "checkpoints" / "model.ckpt"))
    return model.predict(samples, batch_size=16, gpus=0, progress_bar=False)


def lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def jsonl(output: str) -> list[dict]:
    return [json.loads(line) for line in output.strip().splitlines()]


def test_comet_equals_unbabel_comet(models, texts):
    result = runner.invoke(app, ["score", str(texts["a"]), "-r", str(texts["ref"]), "--source", str(texts["src"]),
                                 "-m", "comet", "-m", "bleu", "--comet-model", str(models["comet"]),
                                 "--output-format", "jsonl"])
    assert result.exit_code == 0, result.output
    system, *per_line = jsonl(result.output)
    expected = comet_api(models["comet"], [{"src": s, "mt": h, "ref": r} for s, h, r in
                                          zip(lines(texts["src"]), lines(texts["a"]), lines(texts["ref"]))])
    assert system["scope"] == "system" and system["COMET"] == round(expected.system_score, 4)
    assert [record["COMET"] for record in per_line] == [round(s, 4) for s in expected.scores]
    assert [record["line"] for record in per_line] == list(range(1, 11))
    assert len(set(expected.scores)) > 1  # the lines are told apart: a constant model would pass anything
    assert "BLEU" in system and all("BLEU" in record for record in per_line)


def test_scoring_in_slices_tells_its_progress_and_keeps_the_scores(models, texts):
    """With a listener, the segments go to the model a slice at a time (here 3 per call) and each
    slice's end is heard; the scores are the one-call scores, the system score their mean."""
    from nmt.metrics.comet import CometScorer

    scorer = CometScorer(models["comet"], "comet", batch_size=2)
    src, hyp, ref = lines(texts["src"]), lines(texts["a"]), lines(texts["ref"])
    whole = scorer.score(src, hyp, ref)
    heard: list[int] = []
    sliced = scorer.score(src, hyp, ref, done=heard.append, per_call=3)
    assert heard == [3, 6, 9, 10]
    assert sliced.segments == pytest.approx(whole.segments, abs=1e-6)
    assert sliced.system == pytest.approx(sum(sliced.segments) / 10, abs=1e-12)
    assert sliced.system == pytest.approx(whole.system, abs=1e-6)


def test_score_shows_the_segments_scored_on_a_terminal(models, texts, monkeypatch):
    import io
    import re

    from rich.console import Console

    from nmt import console

    screen = io.StringIO()
    monkeypatch.setattr(console, "err", Console(file=screen, force_terminal=True, width=100))
    result = runner.invoke(app, ["score", str(texts["a"]), str(texts["b"]), "-r", str(texts["ref"]), "--source",
                                 str(texts["src"]), "-m", "comet", "--comet-model", str(models["comet"]), "--json"])
    assert result.exit_code == 0, result.output
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())
    assert "COMET: 10 of 10 segments" in shown
    assert json.loads(result.stdout)  # the scores alone on stdout


def test_cometkiwi_needs_no_references(models, texts):
    result = runner.invoke(app, ["score", str(texts["a"]), "--source", str(texts["src"]), "-m", "cometkiwi",
                                 "--cometkiwi-model", str(models["cometkiwi"]), "--output-format", "jsonl"])
    assert result.exit_code == 0, result.output
    system, *per_line = jsonl(result.output)
    expected = comet_api(models["cometkiwi"], [{"src": s, "mt": h} for s, h in zip(lines(texts["src"]), lines(texts["a"]))])
    assert system["CometKiwi"] == round(expected.system_score, 4)
    assert [record["CometKiwi"] for record in per_line] == [round(s, 4) for s in expected.scores]


def test_paired_bootstrap_on_comet_segments_as_by_hand(models, texts):
    result = runner.invoke(app, ["score", str(texts["a"]), str(texts["b"]), "-r", str(texts["ref"]), "--source",
                                 str(texts["src"]), "-m", "comet", "--comet-model", str(models["comet"]),
                                 "--samples", "200", "--json"])
    assert result.exit_code == 0, result.output
    baseline, other = json.loads(result.output)
    scores = {}
    for name in ("a", "b"):
        scores[name] = np.array(comet_api(models["comet"], [
            {"src": s, "mt": h, "ref": r} for s, h, r in
            zip(lines(texts["src"]), lines(texts[name]), lines(texts["ref"]))]).scores, dtype="float32")
    # sacrebleu's paired bootstrap (Koehn 2004, as its significance module runs it), by hand: the
    # same 200 resamples of the 10 lines (seed 12345), each system's mean over each resample.
    idxs = np.random.default_rng(12345).choice(10, size=(200, 10), replace=True)
    means_a, means_b = scores["a"][idxs].mean(1), scores["b"][idxs].mean(1)
    observed = abs(float(scores["a"].mean()) - float(scores["b"].mean()))
    diffs = np.abs(means_b - means_a)
    p_value = ((diffs - diffs.mean() > observed).sum() + 1) / 201
    assert other["COMET"]["p_value"] == pytest.approx(p_value)
    assert other["COMET"]["mean"] == pytest.approx(round(float(means_b.mean()), 4), abs=1e-4)
    assert other["COMET"]["score"] == pytest.approx(float(scores["b"].mean()), abs=1e-4)
    assert baseline["baseline"] and baseline["COMET"]["score"] == pytest.approx(float(scores["a"].mean()), abs=1e-4)


def test_encoder_read_offline_from_the_model_directory(models, texts, tmp_path):
    """hparams naming a hub encoder that is not on the machine: read from DIR/encoder if there,
    else a one-line error naming it; nothing is downloaded (the hub is set offline)."""
    import shutil

    from tests.fixtures.comet_models import build_comet

    hub_named = build_comet(tmp_path / "hub", models["encoder"], pretrained_model="nmt-test/no-such-encoder")
    args = ["score", str(texts["a"]), "-r", str(texts["ref"]), "--source", str(texts["src"]), "-m", "comet",
            "--comet-model", str(hub_named), "--json"]
    one_line_error(runner.invoke(app, args), "no-such-encoder", "is not on this machine", str(hub_named / "encoder"))
    shutil.copytree(models["encoder"], hub_named / "encoder")
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    same = runner.invoke(app, [*args[:-3], "--comet-model", str(models["comet"]), "--json"])
    assert json.loads(result.output)["score"] == json.loads(same.output)["score"]  # same weights (seed), same scores


def test_bad_models_are_one_line_errors(models, texts, tmp_path):
    base = ["score", str(texts["a"]), "-r", str(texts["ref"]), "--source", str(texts["src"])]
    one_line_error(runner.invoke(app, [*base, "-m", "comet", "--comet-model", str(tmp_path / "none")]),
                   "no such COMET model directory")
    (tmp_path / "empty").mkdir()
    one_line_error(runner.invoke(app, [*base, "-m", "comet", "--comet-model", str(tmp_path / "empty")]),
                   "hparams.yaml and checkpoints/model.ckpt")
    one_line_error(runner.invoke(app, [*base, "-m", "comet", "--comet-model", str(models["cometkiwi"])]),
                   "quality-estimation model", "--metric cometkiwi")
    one_line_error(runner.invoke(app, [*base, "-m", "cometkiwi", "--cometkiwi-model", str(models["comet"])]),
                   "reference-based model", "--metric comet")
    one_line_error(runner.invoke(app, [*base, "-m", "comet"]), "--comet-model")
    one_line_error(runner.invoke(app, [*base, "-m", "bleurt"]), "unknown metric 'bleurt'")
    one_line_error(runner.invoke(app, ["score", str(texts["a"]), "-r", str(texts["ref"]), "-m", "comet",
                                       "--comet-model", str(models["comet"])]), "--source")
    broken = tmp_path / "broken"
    (broken / "checkpoints").mkdir(parents=True)
    (broken / "hparams.yaml").write_text((models["comet"] / "hparams.yaml").read_text())
    (broken / "checkpoints" / "model.ckpt").write_bytes(b"not a checkpoint")
    one_line_error(runner.invoke(app, [*base, "-m", "comet", "--comet-model", str(broken)]),
                   "not a loadable COMET checkpoint")


class _Planted:
    """Stands for code a pickle would run on loading."""

    def __reduce__(self):
        return (print, ("unpickled",))


def test_a_checkpoint_is_read_as_weights_only(models, texts, tmp_path):
    """A checkpoint that holds more than tensors and plain values is refused, not unpickled."""
    import shutil

    planted = tmp_path / "planted"
    shutil.copytree(models["comet"], planted)
    with open(planted / "checkpoints" / "model.ckpt", "wb") as f:
        pickle.dump({"state_dict": {}, "hyper_parameters": {}, "payload": _Planted()}, f)
    result = runner.invoke(app, ["score", str(texts["a"]), "-r", str(texts["ref"]), "--source", str(texts["src"]),
                                 "-m", "comet", "--comet-model", str(planted)])
    one_line_error(result, "not a loadable COMET checkpoint")
    assert "unpickled" not in result.output


@pytest.fixture(scope="module")
def comet_validated(models, tmp_path_factory):
    """The tiny recipe trained 20 updates with train.valid_metric comet (validated twice); its
    checkpoints also serve the decoding tests below (any model will do there)."""
    from nmt.train.trainer import train
    from tests.conftest import prepared_tiny

    recipe = prepared_tiny(tmp_path_factory.mktemp("validated"), "train.max_steps=20", "train.valid_every=10",
                           "train.valid_metric=comet", f"train.valid_comet_model={models['comet']}")
    train(recipe, show_progress=False)
    return recipe


def test_validation_by_comet_picks_best(comet_validated):
    """train.valid_metric comet: each validation's COMET is the model's system score of the greedy
    dev translations, and best.pt follows it."""
    from nmt.checkpoint import best_dev, open_checkpoint
    from nmt.train.metrics import read_metrics

    recipe = comet_validated
    valid = [m for m in read_metrics(recipe.out / "metrics.jsonl") if m["kind"] == "valid"]
    assert len(valid) == 2 and all("comet" in m for m in valid)
    best = max(valid, key=lambda m: (m["comet"], -m["step"]))
    checkpoint = open_checkpoint(recipe.out / "checkpoints" / "best.pt")
    dev = best_dev(checkpoint.payload, recipe)
    assert (dev["metric"], dev["step"]) == ("comet", best["step"])
    # metrics.jsonl keeps 6 decimals and best_dev 4: rounding the log's value again could land one 1e-4 off
    assert dev["score"] == pytest.approx(best["comet"], abs=5e-5 + 1e-6)


def test_mbr_with_the_comet_utility_picks_by_comets_own_scores(models, comet_validated):
    """decode.mbr.utility comet: each candidate's expected utility is the mean of unbabel-comet's
    scores of (source, candidate, each candidate as the reference)."""
    from nmt.decode.engines.engine import load_engine
    from nmt.decode.translate import decode_settings, translate_lines

    engine = load_engine([comet_validated.out / "checkpoints" / "best.pt"])
    cfg = decode_settings(engine.recipe, None, {}, ["decode.mbr.candidates=4", "decode.epsilon=0.02",
                                                    "decode.nbest=4", "decode.mbr.utility=comet",
                                                    f"decode.mbr.comet_model={models['comet']}"])
    source = (TINY_DATA / "valid.en").read_text().splitlines()[0]
    hyps = translate_lines(engine, [source], cfg)[0]
    texts = [output_text(engine.tgt_tokenizer, h.tokens) for h in hyps]
    scores = comet_api(models["comet"], [{"src": source, "mt": h, "ref": r} for h in texts for r in texts]).scores
    utilities = [sum(scores[i * 4:(i + 1) * 4]) / 4 for i in range(4)]
    assert [h.selection for h in hyps] == pytest.approx(sorted(utilities, reverse=True), abs=1e-6)


def test_cometkiwi_reranking_adds_its_weighted_scores(models, comet_validated):
    """decode.rerank.qe_model: each candidate's score is its search score plus qe_weight times
    unbabel-comet's CometKiwi score of it; weight 0 keeps the beam's choice."""
    from nmt.decode.engines.engine import load_engine
    from nmt.decode.translate import decode_settings, translate_lines

    engine = load_engine([comet_validated.out / "checkpoints" / "best.pt"])
    sources = (TINY_DATA / "valid.en").read_text().splitlines()[:3]
    beam = translate_lines(engine, sources, decode_settings(engine.recipe, None, {}, ["decode.nbest=4"]))
    rerank = ["decode.rerank.candidates=4", f"decode.rerank.qe_model={models['cometkiwi']}", "decode.nbest=4"]
    zero = translate_lines(engine, sources, decode_settings(engine.recipe, None, {}, rerank))
    assert [h[0].tokens for h in zero] == [h[0].tokens for h in beam]
    weighted = translate_lines(engine, sources, decode_settings(engine.recipe, None, {}, [
        *rerank, "decode.rerank.qe_weight=3"]))
    for source, candidates, chosen in zip(sources, beam, weighted):
        texts = [output_text(engine.tgt_tokenizer, h.tokens) for h in candidates]
        kiwi = comet_api(models["cometkiwi"], [{"src": source, "mt": t} for t in texts]).scores
        totals = sorted((h.score + 3 * k for h, k in zip(candidates, kiwi)), reverse=True)
        assert [h.selection for h in chosen] == pytest.approx(totals, abs=1e-5)


def test_nmt_filter_ranks_a_corpus_by_cometkiwis_own_estimates(models, texts, tmp_path):
    """`nmt filter --qe-model`: each pair's estimate is unbabel-comet's own; the worst share are
    the lowest estimates (ties by line order), --min-qe keeps those at or above it, a pair with an
    empty side is never kept, and the report's percentiles are the estimates'."""
    sources = lines(texts["src"]) + ["A sentence without its translation."]
    targets = lines(texts["b"]) + [""]
    for name, side in (("corpus.en", sources), ("corpus.de", targets)):
        (tmp_path / name).write_text("\n".join(side) + "\n", encoding="utf-8")
    args = ["filter", "--qe-model", str(models["cometkiwi"]), "--source", str(tmp_path / "corpus.en"), "--target",
            str(tmp_path / "corpus.de"), "--src-lang", "en", "--tgt-lang", "de"]
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "kept"), "--drop-worst", "0.3", "--scores",
                                 str(tmp_path / "scores.jsonl")])
    assert result.exit_code == 0, result.output
    expected = comet_api(models["cometkiwi"], [{"src": s, "mt": t} for s, t in zip(sources[:-1], targets[:-1])]).scores
    assert len(set(expected)) == 10  # (ten different estimates to rank)
    rows = [json.loads(line) for line in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert rows[-1] == {"empty": True, "kept": False} and all(set(row) == {"qe", "kept"} for row in rows[:-1])
    assert [row["qe"] for row in rows[:-1]] == pytest.approx(expected, abs=1e-4)
    worst = sorted(range(10), key=lambda i: (expected[i], i))[:3]  # floor(0.3 × 10 scored pairs)
    assert [i for i, row in enumerate(rows[:-1]) if not row["kept"]] == sorted(worst)
    kept = [i for i in range(10) if i not in worst]
    assert lines(tmp_path / "kept.en") == [sources[i] for i in kept]
    assert lines(tmp_path / "kept.de") == [targets[i] for i in kept]
    report = json.loads((tmp_path / "kept.json").read_text())
    assert report["scored_by"] == "CometKiwi quality estimation" and report["qe_model"] == [str(models["cometkiwi"])]
    assert (report["written"], report["dropped"], report["empty"], report["max_kept_score"]) == (7, 3, 1, None)
    assert report["min_kept_qe"] == pytest.approx(min(expected[i] for i in kept), abs=1e-4)
    assert report["score_percentiles"]["p50"] == pytest.approx(float(np.median(expected)), abs=1e-4)
    assert "3 dropped by CometKiwi quality estimation (estimates below" in result.output

    threshold = sum(sorted(expected)[3:5]) / 2  # between the fourth and fifth lowest estimates: six kept
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "above"), "--min-qe", repr(threshold)])
    assert result.exit_code == 0, result.output
    assert lines(tmp_path / "above.en") == [s for s, e in zip(sources, expected) if e >= threshold]
    assert len(lines(tmp_path / "above.en")) == 6

    # in 2 worker processes, each loading the model and estimating its share: the same estimates and pairs
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "two"), "--drop-worst", "0.3", "--nproc", "2",
                                 "--scores", str(tmp_path / "two.jsonl")])
    assert result.exit_code == 0, result.output
    two = [json.loads(line) for line in (tmp_path / "two.jsonl").read_text().splitlines()]
    assert [row["kept"] for row in two] == [row["kept"] for row in rows] and two[-1] == rows[-1]
    assert [row["qe"] for row in two[:-1]] == pytest.approx([row["qe"] for row in rows[:-1]], abs=1e-4)
    assert lines(tmp_path / "two.en") == lines(tmp_path / "kept.en")
