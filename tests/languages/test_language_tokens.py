"""Decoder-side language tokens (data.language_token: target, and both as NLLB-200 and M2M-100
have them): where the tokens go in the prepared data, that the forced token is read but never
scored, and a toy model that answers in the language asked for in every search, both engines,
`likelihood` and the transformers export."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.config import language_token
from nmt.data.batching import collate
from nmt.data.prepare import data_dir, prepare
from nmt.data.shards import ParallelShards
from nmt.data.tokenizer import load_processor, tokenizer_paths, train_tokenizer
from nmt.decode.engines.engine import load_engine
from nmt.jobs.likelihood import score_pairs
from nmt.decode.translate import translate_lines
from nmt.special_tokens import BOS, EOS
from nmt.data.tokenizer import output_text
from tests.conftest import MARKERS, assert_answers_in_each_language, multilingual_recipe, trained_once

runner = CliRunner()


@pytest.fixture(scope="module")
def target_tokens(toy_corpus, tmp_path_factory):
    """The toy en→{xa, xb} model with the target's token forced first in the output."""
    return trained_once(tmp_path_factory, "data.language_token=target", "train.max_steps=240", "train.valid_every=120",
                        "train.valid_bleu_sentences=8", toy_corpus=toy_corpus)


def _token_ids(out) -> dict[str, int]:
    sp = load_processor(tokenizer_paths(out, True)[0])
    ids = {lang: sp.piece_to_id(language_token(lang)) for lang in ("en", *MARKERS)}
    return {lang: i for lang, i in ids.items() if sp.id_to_piece(i) == language_token(lang)}


def test_target_tokens_start_each_target_and_are_never_scored(target_tokens):
    tokens = _token_ids(target_tokens.out)
    assert set(tokens) == set(MARKERS)  # no source language token: none needed
    train = ParallelShards(data_dir(target_tokens.out), "train", target_tokens.data.forced_target_tokens)
    half = len(train) // 2  # the xa corpus, then the xb one
    for i in range(len(train)):
        assert train.tgt[i][0] == tokens["xa" if i < half else "xb"]
        assert not set(train.tgt[i][1:].tolist()) & set(tokens.values())
        assert not set(train.src[i].tolist()) & set(tokens.values())
    for lang in MARKERS:
        valid = ParallelShards(data_dir(target_tokens.out), f"valid.en-{lang}")
        assert all(valid.tgt[i][0] == tokens[lang] for i in range(len(valid)))
    batch = collate(train, np.array([0, half, 1]))
    lengths = [len(train.tgt[i]) for i in (0, half, 1)]
    assert batch.tgt_in[:, 0].tolist() == [BOS] * 3 and batch.tgt_in[:, 1].tolist() == [tokens["xa"], tokens["xb"], tokens["xa"]]
    assert batch.n_tgt_tokens == sum(lengths)  # each target's pieces and EOS, not its language token
    width = batch.tgt_out.size(1)
    expected = [row * width + t for row, n in enumerate(lengths) for t in range(1, n + 1)]
    assert batch.out_positions.tolist() == expected
    assert set(tokens.values()).isdisjoint(batch.out_targets.tolist()) and batch.out_targets.tolist().count(EOS) == 3
    result = runner.invoke(app, ["info", str(target_tokens.out / "checkpoints" / "best.pt")])
    assert result.exit_code == 0 and "<2xa> <2xb> forced first in the output" in result.output
    assert "in front of the source" not in result.output


def test_both_puts_the_source_language_in_front_and_the_target_language_first(toy_corpus, tmp_path):
    recipe = multilingual_recipe(tmp_path, toy_corpus, "data.language_token=both")
    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
    prepare(recipe.data, recipe.tokenizer, recipe.out)
    tokens = _token_ids(recipe.out)
    assert set(tokens) == {"en", *MARKERS}
    train = ParallelShards(data_dir(recipe.out), "train")
    half = len(train) // 2
    for i in (0, half - 1, half, len(train) - 1):
        assert train.src[i][0] == tokens["en"] and train.tgt[i][0] == tokens["xa" if i < half else "xb"]


@pytest.mark.parametrize("engine", ["torch", "ctranslate2"])
def test_the_toy_model_answers_in_the_language_asked_for(target_tokens, toy_corpus, tmp_path, engine):
    if engine == "ctranslate2":
        pytest.importorskip("ctranslate2")
    model = str(target_tokens.out / "checkpoints" / "best.pt")
    if engine == "ctranslate2":  # the export forces the token with target_prefix
        model = str(tmp_path / "ct2")
        assert runner.invoke(app, ["export", str(target_tokens.out / "checkpoints" / "best.pt"), "-o", model]).exit_code == 0
    assert_answers_in_each_language(model, toy_corpus, tmp_path)


SETTINGS = {
    "greedy": {"beam_size": 1},
    "beam": {"beam_size": 4},
    "sampling": {"sampling": True, "temperature": 0.05, "seed": 3},
}


@pytest.mark.parametrize("search", list(SETTINGS))
def test_every_search_forces_the_token_and_leaves_it_out_of_the_output(target_tokens, toy_corpus, search):
    lines = (toy_corpus / "valid.en").read_text(encoding="utf-8").splitlines()[:6]
    outputs = {}
    for lang in MARKERS:
        engine = load_engine([target_tokens.out / "checkpoints" / "best.pt"], tgt_lang=lang)
        cfg = engine.recipe.decode.model_copy(update=SETTINGS[search])
        hyps = [h[0] for h in translate_lines(engine, lines, cfg, extras=("token_scores", "alignments"))]
        token = engine.controls.target[0]
        assert all(token not in h.tokens and len(h.token_log_probs) == len(h.tokens) for h in hyps)
        assert all(h.alignment is not None and "-" in h.alignment for h in hyps)
        outputs[lang] = [output_text(engine.tgt_tokenizer, h.tokens) for h in hyps]
        # the engine's own search sees the forced token as a prefix
        sources = [[*engine.controls.source, *ids] for ids in engine.src_tokenizer.encode(lines)]
        raw = engine.translate_batch(sources, cfg, [[token]] * len(lines))
        assert all(h[0].tokens[0] == token for h in raw)
    assert sum(o.startswith("Alpha") for o in outputs["xa"]) >= 5
    assert sum(o.startswith("Beta") for o in outputs["xb"]) >= 5


def test_prefixes_and_constraints_come_after_the_language_token(target_tokens, toy_corpus):
    lines = (toy_corpus / "valid.en").read_text(encoding="utf-8").splitlines()[:4]
    engine = load_engine([target_tokens.out / "checkpoints" / "best.pt"], tgt_lang="xb")
    cfg = engine.recipe.decode.model_copy(update={"beam_size": 4})
    hyps = translate_lines(engine, lines, cfg, prefixes=["Beta Beta"] * len(lines))
    assert all(output_text(engine.tgt_tokenizer, h[0].tokens).startswith("Beta Beta") for h in hyps)
    hyps = translate_lines(engine, lines, cfg, constraints=[["Alpha"]] * len(lines))
    texts = [output_text(engine.tgt_tokenizer, h[0].tokens) for h in hyps]
    assert all("Alpha" in t for t in texts) and all(h[0].constraints_met for h in hyps), texts


@pytest.mark.parametrize("beam_size", [1, 4])
def test_likelihood_of_a_translation_is_the_searchs_score_for_it(target_tokens, toy_corpus, beam_size):
    lines = (toy_corpus / "valid.en").read_text(encoding="utf-8").splitlines()[:8]
    for lang in MARKERS:
        engine = load_engine([target_tokens.out / "checkpoints" / "best.pt"], tgt_lang=lang)
        cfg = engine.recipe.decode.model_copy(update={"beam_size": beam_size, "max_len_b": 50})
        hyps = [h[0] for h in translate_lines(engine, lines, cfg)]
        texts = [output_text(engine.tgt_tokenizer, h.tokens) for h in hyps]
        scores = score_pairs(engine, list(zip(lines, texts)), max_tokens=1000)
        compared = 0
        for h, text, score in zip(hyps, texts, scores):
            if engine.tgt_tokenizer.encode([text])[0] == h.tokens:  # text that tokenizes back to the output
                assert score.log_prob == pytest.approx(h.log_prob, abs=1e-4)
                compared += 1
        assert compared >= 6


def test_the_transformers_export_forces_the_token_as_forced_bos(target_tokens, toy_corpus, tmp_path):
    transformers = pytest.importorskip("transformers")
    ckpt = target_tokens.out / "checkpoints" / "best.pt"
    out = tmp_path / "hf"
    result = runner.invoke(app, ["export", str(ckpt), "-o", str(out), "--format", "huggingface"])
    assert result.exit_code == 0, result.output
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(out).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    default = tokenizer.convert_tokens_to_ids(">>xa<<")  # named as OPUS-MT names its language tokens
    assert model.generation_config.forced_bos_token_id == default
    assert "forced_bos_token_id" in (out / "README.md").read_text()
    lines = (toy_corpus / "valid.en").read_text(encoding="utf-8").splitlines()[:6]
    for lang in MARKERS:
        engine = load_engine([ckpt], tgt_lang=lang)
        cfg = engine.recipe.decode.model_copy(update={"beam_size": 1, "max_len_b": 60})
        ours = translate_lines(engine, lines, cfg)
        forced = tokenizer.convert_tokens_to_ids(f">>{lang}<<")
        for line, hyps in zip(lines, ours):
            generated = model.generate(**tokenizer([line], return_tensors="pt"), num_beams=1, do_sample=False,
                                       forced_bos_token_id=forced, max_length=200)[0].tolist()
            assert generated[1] == forced
            assert [t for t in generated[2:] if t != EOS] == hyps[0].tokens, line
