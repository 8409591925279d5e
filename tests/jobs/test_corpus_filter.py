"""`nmt filter`: a corpus filtered by dual conditional cross-entropy, against independent truths
(the paper's arithmetic by hand, `nmt likelihood`'s scores of each side, pairs spoiled on purpose)."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.data.corpus import TextPair
from nmt.decode.engines.engine import load_engine
from nmt.errors import NmtError
from nmt.jobs import corpus_filter, pair_scorings
from nmt.jobs.corpus_filter import kept_pairs
from nmt.jobs.pair_scorings import Scorers, ScorerSpec, dual_score, translation_scoring
from tests.conftest import ROOT, TINY_DATA, one_line_error, trained_once

runner = CliRunner()
STOPPED_AFTER_10 = r"the 10 pairs scored are kept \(\.kept\.scores\.partial\); the same command goes on from line 11"


@pytest.fixture(scope="module")
def models(tmp_path_factory, trained_tiny) -> dict:
    """The tiny en→de model and a de→en one (the same as the reranking tests', trained once a run)."""
    reverse = trained_once(tmp_path_factory, "data.src_lang=de", "data.tgt_lang=en", "train.max_steps=100")
    return {"forward": str(trained_tiny.out / "checkpoints" / "best.pt"),
            "reverse": str(reverse.out / "checkpoints" / "best.pt")}


def test_the_score_is_the_papers_disagreement_plus_mean_and_the_worst_go_in_line_order():
    forward, reverse = np.array([1.0, 2.0, 0.5]), np.array([3.0, 2.0, 0.25])
    assert dual_score(forward, reverse).tolist() == [2.0 + 2.0, 0.0 + 2.0, 0.25 + 0.375]
    score = np.array([1.0, 3.0, np.nan, 3.0, 0.5])
    assert kept_pairs(score).tolist() == [True, True, False, True, True]  # an unscored pair is never kept
    assert kept_pairs(score, drop_worst=0.25).tolist() == [True, False, False, True, True]  # 1 of 4: the tie's first line
    assert kept_pairs(score, drop_worst=0.5).tolist() == [True, False, False, False, True]
    assert kept_pairs(score, drop_worst=0.49).tolist() == [True, False, False, True, True]  # rounded down
    assert kept_pairs(score, max_score=1.0).tolist() == [True, False, False, False, True]
    assert kept_pairs(score, drop_worst=0.25, max_score=0.9).tolist() == [False, False, False, False, True]
    assert kept_pairs(score, keep_best=2).tolist() == [True, False, False, False, True]
    assert kept_pairs(score, keep_best=3).tolist() == [True, False, False, True, True]  # the tie's first line goes
    assert kept_pairs(score, keep_best=10).tolist() == kept_pairs(score).tolist()
    assert kept_pairs(score, max_score=1.0, keep_best=1).tolist() == [False, False, False, False, True]
    assert corpus_filter.score_percentiles(score)["p50"] == 2.0  # of 0.5, 1, 3, 3: NaN left out
    assert corpus_filter.score_percentiles(score)["p99"] == pytest.approx(3.0)
    assert corpus_filter.score_percentiles(np.array([np.nan])) == {}


def likelihoods(model: str, source, target, tmp_path) -> list[float]:
    """`nmt likelihood`'s cross-entropy per token (EOS included) of each pair, an independent path."""
    out = tmp_path / "likelihood.jsonl"
    result = runner.invoke(app, ["likelihood", "-c", model, "--source", str(source), "--target", str(target),
                                 "-o", str(out), "--output-format", "jsonl"])
    assert result.exit_code == 0, result.output
    return [-json.loads(line)["log_prob_per_token"] for line in out.read_text().splitlines()]


def spoiled_corpus(folder) -> tuple[list[tuple[str, str]], set[int]]:
    """The tiny training pairs (which the models have learned), every fourth with another pair's
    target (misaligned), and one pair with an empty target; the misaligned lines' indices."""
    en = (TINY_DATA / "train.en").read_text(encoding="utf-8").splitlines()
    de = (TINY_DATA / "train.de").read_text(encoding="utf-8").splitlines()
    misaligned = set(range(0, len(en), 4))
    pairs = [(src, de[(i + len(de) // 2) % len(de)] if i in misaligned else tgt) for i, (src, tgt) in enumerate(zip(en, de))]
    pairs.append(("A sentence without its translation.", ""))
    for side, lang in ((0, "en"), (1, "de")):
        (folder / f"corpus.{lang}").write_text("".join(f"{pair[side]}\n" for pair in pairs), encoding="utf-8")
    return pairs, misaligned


def test_the_misaligned_pairs_are_dropped_by_each_models_own_scores(models, tmp_path):
    pairs, misaligned = spoiled_corpus(tmp_path)
    source, target = tmp_path / "corpus.en", tmp_path / "corpus.de"
    share = len(misaligned) / (len(pairs) - 1)  # of the scored pairs: the empty one is not
    result = runner.invoke(app, ["filter", "-c", models["forward"], "--reverse-model", models["reverse"],
                                 "--source", str(source), "--target", str(target), "-o", str(tmp_path / "kept"),
                                 "--drop-worst", str(share), "--scores", str(tmp_path / "scores.jsonl")])
    assert result.exit_code == 0, result.output
    scores = [json.loads(line) for line in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert len(scores) == len(pairs) and scores[-1] == {"empty": True, "kept": False}

    # each side's cross-entropy is what `nmt likelihood` finds, the reverse model reading the pair backwards
    forward = likelihoods(models["forward"], source, target, tmp_path)
    reverse = likelihoods(models["reverse"], target, source, tmp_path)
    for row, f, r in zip(scores[:-1], forward, reverse):
        assert row["forward"] == pytest.approx(f, abs=2e-4) and row["reverse"] == pytest.approx(r, abs=2e-4)
        assert row["dual"] == pytest.approx(abs(f - r) + (f + r) / 2, abs=5e-4)

    # the worst share are exactly the misaligned pairs: the models learned the genuine ones
    dropped = {i for i, row in enumerate(scores[:-1]) if not row["kept"]}
    assert dropped == misaligned
    kept = [pair for i, pair in enumerate(pairs[:-1]) if i not in misaligned]
    assert (tmp_path / "kept.en").read_text(encoding="utf-8") == "".join(f"{src}\n" for src, _ in kept)
    assert (tmp_path / "kept.de").read_text(encoding="utf-8") == "".join(f"{tgt}\n" for _, tgt in kept)
    report = json.loads((tmp_path / "kept.json").read_text())
    assert (report["read"], report["written"], report["empty"], report["dropped"]) == \
        (len(pairs), len(kept), 1, len(misaligned))
    assert report["scored_by"] == "dual cross-entropy" and report["reverse_model"] == [models["reverse"]]
    assert report["max_kept_score"] == pytest.approx(max(row["dual"] for row in scores[:-1] if row["kept"]), abs=1e-4)
    duals = sorted(row["dual"] for row in scores[:-1])  # percentiles by hand: linear between the nearest ranks
    for p in (1, 50, 90):
        rank = p / 100 * (len(duals) - 1)
        low = int(rank)
        expected = duals[low] + (rank - low) * (duals[min(low + 1, len(duals) - 1)] - duals[low])
        assert report["score_percentiles"][f"p{p}"] == pytest.approx(expected, abs=5e-4)
    assert list(report["score_percentiles"]) == ["p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"]
    assert f"wrote {len(kept)} of {len(pairs)} pairs" in result.output


def test_without_a_reverse_model_the_forward_cross_entropy_ranks_alone(models, tmp_path, monkeypatch):
    spread = pair_scorings.score_in_processes
    pairs, misaligned = spoiled_corpus(tmp_path)
    source, target = tmp_path / "corpus.en", tmp_path / "corpus.de"
    forward = likelihoods(models["forward"], source, target, tmp_path)[:-1]
    ordered = sorted(forward)
    gap = max(range(len(ordered) - 1), key=lambda k: ordered[k + 1] - ordered[k])
    threshold = (ordered[gap] + ordered[gap + 1]) / 2  # in the widest gap between two pairs' scores
    result = runner.invoke(app, ["filter", "-c", models["forward"], "--source", str(source), "--target", str(target),
                                 "-o", str(tmp_path / "kept"), "--max-score", str(threshold),
                                 "--scores", str(tmp_path / "scores.jsonl")])
    assert result.exit_code == 0, result.output
    scores = [json.loads(line) for line in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert all(set(row) == {"forward", "kept"} for row in scores[:-1])
    kept = [row["kept"] for row in scores[:-1]]
    assert kept == [f < threshold for f in forward] and sum(kept) == gap + 1
    assert len((tmp_path / "kept.en").read_text().splitlines()) == sum(kept)
    assert json.loads((tmp_path / "kept.json").read_text())["scored_by"] == "forward cross-entropy"

    # the same in 2 worker processes (--nproc 2): the same pairs kept
    in_processes = []
    monkeypatch.setattr(pair_scorings, "score_in_processes", lambda *a, **k: in_processes.append(a) or spread(*a, **k))
    result = runner.invoke(app, ["filter", "-c", models["forward"], "--source", str(source), "--target", str(target),
                                 "-o", str(tmp_path / "two"), "--max-score", str(threshold), "--nproc", "2"])
    assert result.exit_code == 0 and len(in_processes) == 1, result.output
    for suffix in ("en", "de"):
        assert (tmp_path / f"two.{suffix}").read_text(encoding="utf-8") == (tmp_path / f"kept.{suffix}").read_text(encoding="utf-8")


def domain_pairs(folder) -> list[tuple[str, str]]:
    """8 Multi30k validation pairs, which the tiny model never saw, as `folder`/domain.{en,de}."""
    pairs = []
    for lang in ("en", "de"):
        with gzip.open(ROOT / "data" / "multi30k" / f"val.{lang}.gz", "rt", encoding="utf-8") as lines:
            text = [next(lines).rstrip("\n") for _ in range(8)]
        (folder / f"domain.{lang}").write_text("".join(f"{line}\n" for line in text), encoding="utf-8")
        pairs.append(text)
    return list(zip(*pairs))


@pytest.fixture(scope="module")
def domain(models, tmp_path_factory) -> tuple[str, object]:
    """(the domain model, the folder of its data): the tiny model fine-tuned for 40 updates on 8
    Multi30k pairs it never saw (domain_pairs)."""
    domain_data = tmp_path_factory.mktemp("domain")
    domain_pairs(domain_data)
    tuned = trained_once(tmp_path_factory, f"train.init_from={models['forward']}", f"data.train={domain_data / 'domain'}",
                         "train.max_steps=40", "train.warmup_steps=5", "train.valid_every=40")
    return str(tuned.out / "checkpoints" / "last.pt"), domain_data


def test_a_domain_model_selects_its_domain_by_the_cross_entropy_difference(models, domain, tmp_path):
    """The tiny model fine-tuned for 40 updates on 8 pairs it never saw is the domain model; in a
    corpus of the 48 training pairs and those 8, the 8 have the lowest H_d - H_f; each number is
    `nmt likelihood`'s; with a reverse model the ranking adds the dual score."""
    domain, domain_data = domain
    pairs = list(zip(*((TINY_DATA / f"train.{lang}").read_text(encoding="utf-8").splitlines() for lang in ("en", "de"))))
    pairs += domain_pairs(domain_data)
    for side, lang in ((0, "en"), (1, "de")):
        (tmp_path / f"corpus.{lang}").write_text("".join(f"{pair[side]}\n" for pair in pairs), encoding="utf-8")
    source, target = tmp_path / "corpus.en", tmp_path / "corpus.de"
    result = runner.invoke(app, ["filter", "-c", models["forward"], "--domain-model", domain, "--source", str(source),
                                 "--target", str(target), "-o", str(tmp_path / "kept"), "--keep-best", "8",
                                 "--scores", str(tmp_path / "scores.jsonl")])
    assert result.exit_code == 0, result.output
    scores = [json.loads(line) for line in (tmp_path / "scores.jsonl").read_text().splitlines()]
    forward = likelihoods(models["forward"], source, target, tmp_path)
    in_domain = likelihoods(domain, source, target, tmp_path)
    for row, f, d in zip(scores, forward, in_domain):
        assert set(row) == {"forward", "domain", "difference", "kept"}
        assert row["forward"] == pytest.approx(f, abs=2e-4) and row["domain"] == pytest.approx(d, abs=2e-4)
        assert row["difference"] == pytest.approx(d - f, abs=3e-4)
    assert [row["kept"] for row in scores] == [False] * 48 + [True] * 8
    assert (tmp_path / "kept.de").read_text(encoding="utf-8") == (domain_data / "domain.de").read_text(encoding="utf-8")
    report = json.loads((tmp_path / "kept.json").read_text())
    assert report["scored_by"] == "cross-entropy difference" and report["domain_model"] == [domain]
    assert (report["keep_best"], report["written"], report["dropped"]) == (8, 8, 48)

    result = runner.invoke(app, ["filter", "-c", models["forward"], "--domain-model", domain, "--reverse-model",
                                 models["reverse"], "--source", str(source), "--target", str(target),
                                 "-o", str(tmp_path / "both"), "--drop-worst", "0.5", "--scores", str(tmp_path / "both.jsonl")])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "both.jsonl").read_text().splitlines()]
    for row, alone in zip(rows, scores):
        assert row["difference"] == alone["difference"] and row["score"] == pytest.approx(row["dual"] + row["difference"],
                                                                                           abs=5e-4)
    worst = sorted(range(len(rows)), key=lambda i: -rows[i]["score"])[:28]
    assert {i for i, row in enumerate(rows) if not row["kept"]} == set(worst)
    assert json.loads((tmp_path / "both.json").read_text())["scored_by"] == "dual cross-entropy and cross-entropy difference"


def test_a_domain_model_of_another_direction_or_vocabulary_is_refused(models, tmp_path_factory, tmp_path):
    spoiled_corpus(tmp_path)
    base = ["filter", "-c", models["forward"], "--source", str(tmp_path / "corpus.en"), "--target",
            str(tmp_path / "corpus.de"), "-o", str(tmp_path / "kept")]
    one_line_error(runner.invoke(app, [*base, "--domain-model", models["reverse"]]),
                   f"--domain-model {models['reverse']}: translates de-en, not en-de (the pairs' direction)")
    other_vocabulary = trained_once(tmp_path_factory, "tokenizer.vocab_size=150", "train.max_steps=2")
    other = str(other_vocabulary.out / "checkpoints" / "last.pt")
    one_line_error(runner.invoke(app, [*base, "--domain-model", other]), "its target tokenizer is not -c's")
    one_line_error(runner.invoke(app, [*base, "--domain-model", other, "--qe-model", str(tmp_path)]),
                   "-c, --domain-model are for translation models")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.de", "corpus.en"]


def test_a_tsv_corpus_is_filtered_as_its_two_files_are(models, tmp_path):
    pairs, _ = spoiled_corpus(tmp_path)
    (tmp_path / "corpus.tsv").write_text("".join(f"{src}\t{tgt}\n" for src, tgt in pairs), encoding="utf-8")
    outputs = {}
    for name, given in (("files", ["--source", str(tmp_path / "corpus.en"), "--target", str(tmp_path / "corpus.de")]),
                        ("tsv", ["--corpus", str(tmp_path / "corpus.tsv")]), ("stem", ["--corpus", str(tmp_path / "corpus")])):
        result = runner.invoke(app, ["filter", "-c", models["forward"], *given, "-o", str(tmp_path / name),
                                     "--drop-worst", "0.25", "--scores", str(tmp_path / f"{name}.jsonl")])
        assert result.exit_code == 0, result.output
        outputs[name] = [(tmp_path / f"{name}.{suffix}").read_text(encoding="utf-8") for suffix in ("en", "de", "jsonl")]
    assert outputs["tsv"] == outputs["files"] == outputs["stem"] and outputs["files"][0].count("\n") == 36
    report = json.loads((tmp_path / "tsv.json").read_text())
    assert report["corpus"] == str(tmp_path / "corpus.tsv") and report["written"] == 36


def test_bad_input_is_one_line_and_writes_nothing(models, tmp_path):
    spoiled_corpus(tmp_path)
    source, target = tmp_path / "corpus.en", tmp_path / "corpus.de"
    base = ["filter", "-c", models["forward"], "--source", str(source), "--target", str(target)]
    out = ["-o", str(tmp_path / "kept")]
    one_line_error(runner.invoke(app, [*base, *out, "--reverse-model", models["forward"]]),
                   f"--reverse-model {models['forward']}: translates en-de, not de-en")
    one_line_error(runner.invoke(app, [*base, *out, "--drop-worst", "1"]), "--drop-worst 1: a share of the pairs")
    one_line_error(runner.invoke(app, [*base, *out, "--keep-best", "0"]), "--keep-best 0: a number of pairs, at least 1")
    one_line_error(runner.invoke(app, [*base, *out, "--nproc", "0"]), "--nproc 0: at least 1 process")
    one_line_error(runner.invoke(app, [*base, "-o", str(tmp_path / "corpus")]), "is the input")
    one_line_error(runner.invoke(app, [*base, *out, "--scores", str(source)]), "is the input")
    one_line_error(runner.invoke(app, [*base, *out, "--corpus", str(tmp_path / "corpus")]), "give --corpus, or --source and --target, not both")
    one_line_error(runner.invoke(app, [*base[:3], *out]), "name the pairs to filter")
    # a CometKiwi model instead of translation models, one or the other, its languages named
    qe = ["filter", "--source", str(source), "--target", str(target), *out, "--qe-model", str(tmp_path / "kiwi")]
    one_line_error(runner.invoke(app, [*qe, "-c", models["forward"], "--set", "decode.beam_size=2"]),
                   "--qe-model ranks by a CometKiwi model alone: -c, --set are for translation models")
    one_line_error(runner.invoke(app, qe), "--qe-model: name the pairs' languages with --src-lang and --tgt-lang")
    one_line_error(runner.invoke(app, [*qe, "--max-score", "3"]), "--max-score is for cross-entropies")
    one_line_error(runner.invoke(app, [*base, *out, "--min-qe", "0.5"]), "--min-qe is for a CometKiwi model's estimates")
    one_line_error(runner.invoke(app, qe[:7]), "name the models to score by: -c")
    kiwi = tmp_path / "kiwi"
    (kiwi / "checkpoints").mkdir(parents=True)
    (kiwi / "checkpoints" / "model.ckpt").write_bytes(b"")
    (kiwi / "hparams.yaml").write_text("class_identifier: regression_metric\n", encoding="utf-8")
    languages = ["--src-lang", "en", "--tgt-lang", "de"]
    one_line_error(runner.invoke(app, [*qe, *languages]), "a COMET model of type regression_metric, which needs references")
    if importlib.util.find_spec("comet") is None:  # (in make test's COMET environment, tests/metrics filter with one)
        (kiwi / "hparams.yaml").write_text("class_identifier: referenceless_regression_metric\n", encoding="utf-8")
        one_line_error(runner.invoke(app, [*qe, *languages]), "pip install 'nmt[comet]'")
    shutil.rmtree(kiwi)
    (tmp_path / "short.de").write_text("Ein Satz.\n", encoding="utf-8")
    one_line_error(runner.invoke(app, [*base[:-1], str(tmp_path / "short.de"), *out]), "must have the same number of lines")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.de", "corpus.en", "short.de"]


def test_a_stopped_filtering_goes_on_where_it_stopped_and_writes_what_one_run_writes(models, tmp_path, monkeypatch):
    """Stopped after its first chunk of pairs, the same run again scores only the rest and writes
    what an uninterrupted run writes; a model changed since is a one-line error that keeps the scores."""

    spoiled_corpus(tmp_path)
    source, target = tmp_path / "corpus.en", tmp_path / "corpus.de"
    reverse_path = tmp_path / "reverse.pt"
    shutil.copy(models["reverse"], reverse_path)
    forward, reverse = load_engine([models["forward"]]), load_engine([reverse_path], src_lang="de", tgt_lang="en")
    roles = {"forward_model": [models["forward"]], "reverse_model": [str(reverse_path)]}
    pairs = TextPair.of_files(source, target)
    monkeypatch.setattr(corpus_filter, "CHUNK_PAIRS", 10)

    def run(stem: str, done=lambda n: None):
        scorers = Scorers(forward, reverse, None, ("en", "de"))
        return corpus_filter.filter_corpus(translation_scoring(scorers, 4096, models=roles), pairs,
                                           str(tmp_path / stem), drop_worst=0.25,
                                           scores_file=str(tmp_path / f"{stem}.scores"), done=done)

    run("whole")
    scored = []

    def stop_after_the_first_chunk(n: int) -> None:
        scored.append(n)
        if n == 10:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt, match=STOPPED_AFTER_10):
        run("kept", stop_after_the_first_chunk)
    assert not list(tmp_path.glob("kept*")) and (tmp_path / ".kept.scores.partial").is_file()
    as_copied = os.stat(reverse_path)
    os.utime(reverse_path, ns=(1, 1))  # the reverse model's file changed since (its time)
    with pytest.raises(NmtError, match=r"a filtering of \S+corpus\.en \+ \S+corpus\.de stopped after line 10 .*made with other settings: "
                                       r"reverse_model"):
        run("kept")
    assert (tmp_path / ".kept.scores.partial").is_file()
    os.utime(reverse_path, ns=(as_copied.st_atime_ns, as_copied.st_mtime_ns))

    scored.clear()
    result = run("kept", scored.append)
    assert scored == [10, 20, 30, 40, result.read]  # pairs done so far: the first chunk's counted first, not scored again
    for name in ("en", "de", "scores"):
        assert (tmp_path / f"kept.{name}").read_text(encoding="utf-8") == (tmp_path / f"whole.{name}").read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.glob("*kept*")) == ["kept.de", "kept.en", "kept.json", "kept.scores"]


def test_a_second_run_into_the_same_output_is_refused_while_the_first_runs(models, tmp_path):
    from nmt.file_lock import sole_writer
    from nmt.files import hidden_beside

    spoiled_corpus(tmp_path)
    source, target = tmp_path / "corpus.en", tmp_path / "corpus.de"
    forward = load_engine([models["forward"]])
    with sole_writer(hidden_beside(tmp_path / "kept", "scores")):  # what the first run holds while it scores
        with pytest.raises(NmtError, match=r"\.kept\.scores: another nmt is scoring pairs into it \(pid \d+\)"):
            corpus_filter.filter_corpus(translation_scoring(Scorers(forward, None, None, ("en", "de")), 4096),
                                        TextPair.of_files(source, target), str(tmp_path / "kept"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.de", "corpus.en"]


def test_processes_score_what_one_scores_and_a_stopped_run_goes_on_in_them(models, domain, tmp_path, monkeypatch):
    """`--nproc 2`: two worker processes each load the three models (forward, reverse, domain) and
    score a consecutive share of each chunk of pairs. The scores are one process's (to the rounding other batches bring), the
    kept pairs the same, a warning names the input's own line, the progress counts every pair, and
    a run stopped part way goes on in them where it stopped."""
    pairs, _ = spoiled_corpus(tmp_path)
    pairs[13] = (" ".join(["dog"] * 400), pairs[13][1])  # past the model's positions: a warning naming line 14
    for side, lang in ((0, "en"), (1, "de")):
        (tmp_path / f"corpus.{lang}").write_text("".join(f"{pair[side]}\n" for pair in pairs), encoding="utf-8")
    spec = ScorerSpec.of([models["forward"]], models["reverse"], threads=1, domain_model=Path(domain[0]))
    scorers = pair_scorings.load_scorers(spec)
    monkeypatch.setattr(corpus_filter, "CHUNK_PAIRS", 10)

    def run(stem: str, workers=None, done=lambda n: None):
        warnings = []
        scoring = translation_scoring(scorers, 4096, models=spec.model_paths(), processes=workers)
        result = corpus_filter.filter_corpus(
            scoring, TextPair.of_files(tmp_path / "corpus.en", tmp_path / "corpus.de"), str(tmp_path / stem),
            drop_worst=0.25, scores_file=str(tmp_path / f"{stem}.scores"), warn=warnings.append, done=done)
        return result, warnings

    whole, warned_once = run("whole")
    heard = []

    def stop_in_the_second_chunk(n: int) -> None:
        heard.append(n)
        if n > 10:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt, match=STOPPED_AFTER_10):
        run("kept", spec.processes(2), stop_in_the_second_chunk)
    assert heard == [0, 5, 10, 15]  # none yet, then each process's share of 5 pairs as it is done
    heard.clear()
    result, warned = run("kept", spec.processes(2), heard.append)
    assert heard[:2] == [10, 15] and heard[-1] == result.read == len(pairs) and heard == sorted(heard)  # 10 done before
    # each model's warning of its own side: the user's source, line 14
    assert warned == warned_once == ["line 14: source of 400 tokens, truncated to 127 (model.max_positions)"] * 2
    scores = [[json.loads(line) for line in (tmp_path / f"{stem}.scores").read_text().splitlines()]
              for stem in ("whole", "kept")]
    for a, b in zip(*scores):
        assert a.keys() == b.keys() and a["kept"] == b["kept"]
        assert all(b[key] == pytest.approx(a[key], abs=3e-4) for key in ("forward", "reverse", "dual", "domain",
                                                                          "difference", "score") if key in a)
    assert {"domain", "difference", "score"} <= scores[0][0].keys()
    for suffix in ("en", "de"):
        assert (tmp_path / f"kept.{suffix}").read_text(encoding="utf-8") == (tmp_path / f"whole.{suffix}").read_text(encoding="utf-8")
    assert (result.written, result.dropped) == (whole.written, whole.dropped) and result.dropped > 0


def test_a_target_that_copies_its_source_is_never_scored_nor_kept(models, tmp_path):
    """As `nmt prepare` drops them (data.remove_copies): a model trained on a corpus with copies
    finds them likelier than translations, so they are left out before any model sees them, and
    counted apart from the empty ones; a corpus in one language keeps them (`unscored`)."""
    en = (TINY_DATA / "train.en").read_text(encoding="utf-8").splitlines()[:10]
    de = (TINY_DATA / "train.de").read_text(encoding="utf-8").splitlines()[:10]
    pairs = [*zip(en, de), (en[3], en[3]), (en[5], en[5].upper().rstrip(".") + " !"), ("A line.", "")]
    for side, lang in ((0, "en"), (1, "de")):
        (tmp_path / f"corpus.{lang}").write_text("".join(f"{pair[side]}\n" for pair in pairs), encoding="utf-8")
    result = runner.invoke(app, ["filter", "-c", models["forward"], "--source", str(tmp_path / "corpus.en"), "--target",
                                 str(tmp_path / "corpus.de"), "-o", str(tmp_path / "kept"), "--drop-worst", "0.1",
                                 "--scores", str(tmp_path / "scores.jsonl")])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert rows[10:] == [{"copy": True, "kept": False}] * 2 + [{"empty": True, "kept": False}]
    assert sum(not row["kept"] for row in rows[:10]) == 1  # floor(0.1 × 10 scored pairs): the copies not counted
    report = json.loads((tmp_path / "kept.json").read_text())
    assert (report["read"], report["written"], report["empty"], report["copies"], report["dropped"]) == (13, 9, 1, 2, 1)
    assert "1 with an empty side and 2 copying their source left out" in result.output
    assert (tmp_path / "kept.de").read_text(encoding="utf-8") == "".join(
        f"{tgt}\n" for (_, tgt), row in zip(pairs, rows) if row["kept"])  # the genuine pairs kept, the copies not
    chunk = [(en[3], en[3]), (en[3], de[3]), ("", "x")]
    assert pair_scorings.unscored(chunk) == [0, 2] and pair_scorings.unscored(chunk, translated=False) == [2]
