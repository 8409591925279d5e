"""`nmt export --format ctranslate2`: the exported model translates every line as nmt's own
search does (the same search rules; docs/serving.md);
export failures are one-line errors that leave nothing half written."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from tests.conftest import TINY_DATA, one_line_error, variant_checkpoint
from nmt.cli import app
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import translate_lines
from nmt.errors import NmtError
from nmt.export import export_checkpoint
from nmt.data.tokenizer import output_text

runner = CliRunner()

# Memorized training sentences, unseen ones (where the model is unsure) and an empty line.
LINES = ([line.rstrip("\n") for name in ("valid.en", "train.en") for line in open(TINY_DATA / name, encoding="utf-8")]
         + ["", "A dog runs on the beach.", "Two men are talking while a woman looks at a small red car.",
            "Kids", "The the the the the."])

VARIANTS = {
    "post-LN, shared vocabulary": (),
    "pre-LN, shared vocabulary": ("model.norm=pre",),
    "post-LN, separate vocabularies and output layer": (
        "tokenizer.joint=false", "model.share_embeddings=false", "model.tie_output=false"),
    "post-LN, swish feed-forward": ("model.activation=swish",),
}


@pytest.fixture(scope="module", params=list(VARIANTS))
def exported(request, trained_tiny, tmp_path_factory):
    """(checkpoint, export directory) for each model variant."""
    ckpt = variant_checkpoint(tmp_path_factory, trained_tiny, VARIANTS[request.param])
    out = tmp_path_factory.mktemp("export") / "ct2"
    export_checkpoint(ckpt, out)
    return ckpt, out


SETTINGS = {
    "the recipe's own": {},
    "greedy": {"beam_size": 1},
    "length penalty 0, 3-best": {"length_penalty": 0.0, "nbest": 3},
    "length penalty 1.5, beam 6": {"length_penalty": 1.5, "beam_size": 6},
    "short outputs, cut at the limit": {"max_len_a": 0.5, "max_len_b": 1},
}


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_ctranslate2_translates_every_line_like_nmts_own_search(exported, setting):
    ckpt, out = exported
    own, ct2 = load_engine([ckpt]), load_engine([out])
    assert type(ct2).__name__ == "CTranslate2Translator"
    cfg = own.recipe.decode.model_copy(update=SETTINGS[setting])
    theirs, ours = translate_lines(ct2, LINES, cfg), translate_lines(own, LINES, cfg)
    assert sum(len(h[0].tokens) for h in ours) > 2 * len(LINES)
    for a, b in zip(theirs, ours):
        assert [h.tokens for h in a] == [h.tokens for h in b]
        # Same weights, same distributions: the scores agree up to float rounding.
        assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-3)


def test_gnmt_length_penalty_is_refused_by_ctranslate2_and_changes_nmts_ranking(exported):
    ckpt, out = exported
    own, ct2 = load_engine([ckpt]), load_engine([out])
    cfg = own.recipe.decode.model_copy(update={"length_penalty_form": "gnmt", "length_penalty": 1.0, "nbest": 4})
    with pytest.raises(NmtError, match="length_penalty_form=gnmt: CTranslate2 divides by"):
        translate_lines(ct2, LINES[:2], cfg)
    gnmt = translate_lines(own, LINES, cfg)
    power = translate_lines(own, LINES, cfg.model_copy(update={"length_penalty_form": "power"}))
    assert [[h.score for h in hyps] for hyps in gnmt] != [[h.score for h in hyps] for hyps in power]


def test_translate_cli_with_an_export_dir_keeps_every_line(exported, tmp_path):
    ckpt, out = exported
    source = tmp_path / "in.en"
    source.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    results = {}
    for name, args in {"own": ["-c", str(ckpt)], "export": ["-c", str(out)],
                       "engine": ["-c", str(ckpt), "--engine", "ctranslate2"]}.items():
        hyp = tmp_path / f"{name}.de"
        result = runner.invoke(app, ["translate", *args, "-i", str(source), "-o", str(hyp), "--beam-size", "1"])
        assert result.exit_code == 0, result.output
        results[name] = hyp.read_text(encoding="utf-8").split("\n")[:-1]
    assert len(results["own"]) == len(LINES)
    assert results["export"] == results["own"] == results["engine"]
    assert results["own"][LINES.index("")] == ""


def test_jsonl_nbest_and_scores_through_ctranslate2(exported):
    _, out = exported
    result = runner.invoke(app, ["translate", "-c", str(out), "--output-format", "jsonl", "--nbest", "3",
                                 "--beam-size", "4"], input="A dog runs on the beach.\n\n")
    assert result.exit_code == 0, result.output
    first, empty = (json.loads(line) for line in result.stdout.splitlines())
    scores = [h["score"] for h in first["hypotheses"]]
    assert len(scores) == 3 and scores == sorted(scores, reverse=True)
    assert empty["hypotheses"][0]["text"] == ""


def test_export_keeps_tokenizers_and_decode_settings(trained_tiny, tmp_path):
    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    result = runner.invoke(app, ["export", str(ckpt), "-o", str(tmp_path / "m"), "--quantization", "int8"])
    assert result.exit_code == 0, result.output
    names = {p.name for p in (tmp_path / "m").iterdir()}
    assert {"model.bin", "config.json", "source.spm.model", "target.spm.model", "nmt_export.json"} <= names
    info = json.loads((tmp_path / "m" / "nmt_export.json").read_text())
    assert info["quantization"] == "int8" and info["recipe"]["decode"]["beam_size"] == trained_tiny.decode.beam_size
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no scratch folder left
    translated = runner.invoke(app, ["translate", "-c", str(tmp_path / "m")], input="A dog.\n\nTwo men.\n")
    assert translated.exit_code == 0 and len(translated.stdout.split("\n")) == 4  # 3 lines + final newline
    described = runner.invoke(app, ["info", str(tmp_path / "m")]).output  # nmt info: what it holds, and whence
    assert f"{tmp_path / 'm'}: CTranslate2, int8" in described and f"exported     from {ckpt} at step 300" in described
    assert "joint 160 source, 160 target pieces" in described and "ctranslate2 " in described
    assert "alignments   from decoder layer 0's 4 heads (the checkpoint averages every layer's)" in described
    # an export by a later nmt with a recipe key unknown here: the error names both versions
    later = info | {"versions": info["versions"] | {"nmt": "99.0"}}
    later["recipe"]["train"]["a_later_key"] = 1
    (tmp_path / "m" / "nmt_export.json").write_text(json.dumps(later))
    one_line_error(runner.invoke(app, ["translate", "-c", str(tmp_path / "m")], input="A dog.\n"),
                   "train.a_later_key: unknown key (written by nmt 99.0; this is nmt")


def test_missing_or_corrupt_checkpoints_are_one_line_errors(trained_tiny, tmp_path):
    one_line_error(runner.invoke(app, ["export", str(tmp_path / "nope.pt"), "-o", str(tmp_path / "m")]),
                   "nope.pt", "not found")
    broken = tmp_path / "broken.pt"
    broken.write_bytes((trained_tiny.out / "checkpoints" / "best.pt").read_bytes()[:5000])
    one_line_error(runner.invoke(app, ["export", str(broken), "-o", str(tmp_path / "m")]), "broken.pt", "truncated")
    assert not (tmp_path / "m").exists()
    one_line_error(runner.invoke(app, ["translate", "-c", str(tmp_path)], input="A dog.\n"), "neither a checkpoint nor a CTranslate2 or ONNX export")
    (tmp_path / "nmt_export.json").write_text("[1]")
    one_line_error(runner.invoke(app, ["translate", "-c", str(tmp_path)], input="A dog.\n"),
                   "nmt_export.json: not a readable export description (not a JSON object)")
    (tmp_path / "nmt_export.json").write_text('{"format": "another"}')
    one_line_error(runner.invoke(app, ["translate", "-c", str(tmp_path)], input="A dog.\n"),
                   "nmt_export.json: not an nmt CTranslate2 export")
    (tmp_path / "nmt_export.json").write_text("{")
    one_line_error(runner.invoke(app, ["translate", "-c", str(tmp_path)], input="A dog.\n"),
                   "nmt_export.json: not a readable export description")


def test_unwritable_or_existing_output_is_an_error_and_nothing_is_lost(trained_tiny, tmp_path):
    ckpt = str(trained_tiny.out / "checkpoints" / "best.pt")
    a_file = tmp_path / "a_file"
    a_file.write_text("keep me")
    one_line_error(runner.invoke(app, ["export", ckpt, "-o", str(a_file / "model")]), "cannot write")
    assert a_file.read_text() == "keep me"
    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "mine.txt").write_text("mine")
    one_line_error(runner.invoke(app, ["export", ckpt, "-o", str(existing)]), "already exists", "--force")
    assert (existing / "mine.txt").read_text() == "mine"
    assert runner.invoke(app, ["export", ckpt, "-o", str(existing), "--force"]).exit_code == 0
    assert (existing / "model.bin").is_file() and not (existing / "mine.txt").exists()
    one_line_error(runner.invoke(app, ["export", ckpt, "-o", str(tmp_path / "q"), "--quantization", "int3"]),
                   "int3")


def test_a_failed_export_leaves_no_directory(trained_tiny, tmp_path, monkeypatch):
    from ctranslate2.specs import model_spec

    def fail(self, path):
        Path(path, "model.bin").write_bytes(b"half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(model_spec.ModelSpec, "save", fail)
    with pytest.raises(NmtError, match="No space left"):
        export_checkpoint(trained_tiny.out / "checkpoints" / "best.pt", tmp_path / "m")
    assert list(tmp_path.iterdir()) == []


def test_ctranslate2_input_gets_the_same_bad_utf8_error(exported):
    _, out = exported
    result = runner.invoke(app, ["translate", "-c", str(out)], input=b"A dog.\nA \xff cat.\n")
    one_line_error(result, "<stdin>:2: invalid UTF-8")


@pytest.mark.parametrize("beam_size", [1, 4])
def test_min_length_and_no_repeat_ngram_size_carry_over(exported, beam_size):
    ckpt, out = exported
    own, ct2 = load_engine([ckpt]), load_engine([out])
    cfg = own.recipe.decode.model_copy(update={"beam_size": beam_size, "min_len": 12,
                                               "max_len_b": 40, "no_repeat_ngram_size": 2})
    lines = [line for line in LINES if line]
    theirs, ours = translate_lines(ct2, lines, cfg), translate_lines(own, lines, cfg)
    for a, b in zip(theirs, ours):
        for tokens in (a[0].tokens, b[0].tokens):
            assert len(tokens) >= 12
            assert len(set(zip(tokens, tokens[1:]))) == len(tokens) - 1  # no bigram twice
        # Both take the forbidden tokens out before the softmax: the same outputs and scores.
        assert a[0].tokens == b[0].tokens
        assert a[0].score == pytest.approx(b[0].score, abs=1e-3)


def test_a_missing_extra_is_named(trained_tiny, tmp_path, monkeypatch):
    ckpt = str(trained_tiny.out / "checkpoints" / "best.pt")
    monkeypatch.setitem(sys.modules, "ctranslate2", None)  # import ctranslate2 now raises ImportError
    one_line_error(runner.invoke(app, ["export", ckpt, "-o", str(tmp_path / "m")]), "pip install 'nmt[ctranslate2]'")
    one_line_error(runner.invoke(app, ["translate", "-c", ckpt, "--engine", "ctranslate2"], input="A dog.\n"),
                   "nmt[ctranslate2]")
    # nmt.serve.app imported without fastapi keeps `Request = None`: the module as it was is put
    # back after, so that the serve tests after this one in this process build a working app
    original = sys.modules.pop("nmt.serve.app", None)
    monkeypatch.setitem(sys.modules, "fastapi", None)
    try:
        one_line_error(runner.invoke(app, ["serve", ckpt]), "pip install 'nmt[serve]'")
    finally:
        sys.modules.pop("nmt.serve.app", None)
        if original is not None:
            sys.modules["nmt.serve.app"] = sys.modules["nmt.serve"].app = original


def test_ctranslate2_likelihood_matches_nmts(exported):
    from nmt.jobs.likelihood import score_pairs

    ckpt, out = exported
    own, ct2 = load_engine([ckpt]), load_engine([out])
    references = [line.rstrip("\n") for line in open(TINY_DATA / "valid.de", encoding="utf-8")]
    pairs = list(zip(LINES, references + ["Ein Hund."] * len(LINES))) + [("", ""), ("A dog.", "")]
    ours, theirs = score_pairs(own, pairs, 4096), score_pairs(ct2, pairs, 4096)
    for a, b in zip(ours, theirs):
        assert a.tokens == b.tokens
        assert a.token_log_probs == pytest.approx(b.token_log_probs, abs=2e-3)


@pytest.mark.parametrize("setting", ["the recipe's own", "greedy", "length penalty 0, 3-best"])
def test_a_prefix_gives_the_same_lines_in_both_engines(exported, setting):
    ckpt, out = exported
    own, ct2 = load_engine([ckpt]), load_engine([out])
    cfg = own.recipe.decode.model_copy(update=SETTINGS[setting])
    references = [line.rstrip("\n") for line in open(TINY_DATA / "valid.de", encoding="utf-8")]
    lines = [line for line in LINES if line]
    # Prefixes: a reference's first words, words the model would not choose, none, a long one.
    prefixes = ([" ".join(r.split()[:2]) for r in references] + ["Drei Katzen", "", "Ein Hund " * 12]
                + [""] * len(lines))[: len(lines)]
    theirs, ours = translate_lines(ct2, lines, cfg, prefixes=prefixes), translate_lines(own, lines, cfg, prefixes=prefixes)
    for a, b, prefix in zip(theirs, ours, prefixes):
        assert [h.tokens for h in a] == [h.tokens for h in b]
        assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-3)
        pieces = own.tgt_tokenizer.encode(prefix)
        assert all(h.tokens[: len(pieces)] == pieces for h in b)
        assert output_text(own.tgt_tokenizer, b[0].tokens).startswith(prefix.strip())


def test_token_scores_agree_and_alignments_come_from_the_penultimate_layer(exported, tmp_path):
    """An unguided model's export returns its penultimate decoder layer's attention, every head's
    mean (nmt's engine averages every layer, which CTranslate2 cannot return): it equals that
    layer's attention in nmt, and the alignments read from it are the same. An export that
    returns none (one written before) refuses alignments."""
    from nmt.decode.text.alignment import align_batch, layer_attention

    ckpt, out = exported
    own, ct2 = load_engine([ckpt]), load_engine([out])
    cfg = own.recipe.decode
    ours = translate_lines(own, LINES[:4], cfg, extras=["token_scores"])
    theirs = translate_lines(ct2, LINES[:4], cfg, extras=["token_scores"])
    for a, b in zip(ours, theirs):
        assert a[0].token_log_probs == pytest.approx(b[0].token_log_probs, abs=2e-3)

    model = own.recipe.model
    assert json.loads((out / "nmt_export.json").read_text())["alignment_attention"] == {"layer": model.decoder_layers - 2,
                                                                                 "heads": model.heads}
    lines = [line for line in LINES if line]
    sources = own.src_tokenizer.encode(lines)
    outputs = [h[0].tokens for h in own.translate_batch(sources, cfg.model_copy(update={"beam_size": 1}))]
    expected = layer_attention(own.model, sources, outputs)[model.decoder_layers - 2]
    got = ct2.alignment_attention(sources, outputs)
    for i, (s, o) in enumerate(zip(sources, outputs)):  # CTranslate2 leaves out the source EOS's column
        assert torch.allclose(got[i, :len(o), :len(s)], expected[i, :len(o), :len(s)], atol=1e-5)
    pieces = [[own.src_tokenizer.id_to_piece(i) for i in s] for s in sources], \
        [[own.tgt_tokenizer.id_to_piece(i) for i in o] for o in outputs]
    assert align_batch(got, sources, outputs, *pieces) == align_batch(expected, sources, outputs, *pieces)
    aligned = translate_lines(ct2, lines, cfg, extras=["alignments"])
    assert all(h[0].alignment for h in aligned)

    older = shutil.copytree(out, tmp_path / "older")
    info = json.loads((older / "nmt_export.json").read_text())
    (older / "nmt_export.json").write_text(json.dumps({k: v for k, v in info.items() if k != "alignment_attention"}))
    with pytest.raises(NmtError, match=r"^alignments: this CTranslate2 export returns no attention to read them "
                                       r"from \(export the checkpoint again\)"):
        translate_lines(load_engine([older]), LINES[:2], cfg, extras=["alignments"])


def test_torch_works_on_one_thread_while_ctranslate2_translates(trained_tiny, tmp_path):
    """A team of torch's OpenMP threads beside CTranslate2's makes its searches wait for the rest of
    the process (measured 1.5-2.6 times as slow on 2 cores): torch's part of a translation with an
    export (word alignments here) runs on one thread, and torch's count is restored after it; the
    torch engine keeps its threads."""
    export_checkpoint(trained_tiny.out / "checkpoints" / "best.pt", tmp_path / "ct2")
    threads_before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        for path, inside in ((tmp_path / "ct2", 1), (trained_tiny.out / "checkpoints" / "best.pt", 2)):
            engine, seen = load_engine([path]), []
            attention = engine.alignment_attention
            engine.alignment_attention = lambda *args: seen.append(torch.get_num_threads()) or attention(*args)
            hyps = translate_lines(engine, ["A <b>black</b> dog runs.", "Two 42 men."], engine.recipe.decode, markup=True)
            assert seen == [inside] and all(h[0].text for h in hyps)
            assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads_before)
