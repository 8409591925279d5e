"""`nmt export --format huggingface`: a transformers MarianMTModel (post-LN) or Pegasus model
(pre-LN) that computes what nmt computes (logits; greedy and beam outputs of `generate`; the
translation pipeline on text, where transformers has it), built and run locally (no network)."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from nmt.cli import app
from nmt.special_tokens import BOS, EOS, PAD
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import translate_lines
from nmt.info import checkpoint_info
from nmt.data.tokenizer import output_text
from tests.conftest import TINY_DATA, exported_variant, one_line_error, optional_module, prepared_tiny

transformers, pytestmark = optional_module("transformers")
# transformers 5 removed the "translation" pipeline (model.generate remains); 4.x still has it.
PIPELINE = transformers is not None and int(transformers.__version__.split(".")[0]) < 5
runner = CliRunner()
LINES = [line.rstrip("\n") for line in open(TINY_DATA / "valid.en", encoding="utf-8")] + [
    "A dog runs on the beach.", "Two men are talking while a woman looks at a small red car.", "Kids"]


VARIANTS = {
    "shared vocabulary, tied": None,
    "separate vocabularies and output layer": ("tokenizer.joint=false", "model.share_embeddings=false",
                                               "model.tie_output=false"),
    "swish feed-forward": ("model.activation=swish",),
    "pre-LN (Pegasus)": ("model.norm=pre",),
}


@pytest.fixture(scope="module", params=list(VARIANTS))
def exported(request, trained_tiny, tmp_path_factory):
    ckpt, out = exported_variant(tmp_path_factory, trained_tiny, VARIANTS[request.param], "huggingface")
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(out).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    return load_engine([ckpt]), model, tokenizer, out


def test_the_exported_model_computes_nmts_logits(exported):
    own, model, tokenizer, _ = exported
    batch = tokenizer(LINES, return_tensors="pt", padding=True)
    sources = [own.src_tokenizer.encode([line])[0] + [EOS] for line in LINES]
    assert [row[: len(s)] for row, s in zip(batch["input_ids"].tolist(), sources)] == sources
    targets = torch.randint(4, own.tgt_tokenizer.get_piece_size(), (len(LINES), 7))
    targets[:, 0] = BOS
    with torch.no_grad():
        theirs = model(**batch, decoder_input_ids=targets).logits
        for i, source in enumerate(sources):
            ours = own.model(torch.tensor([source]), targets[i:i + 1])[0]
            kept = torch.ones(ours.size(-1), dtype=torch.bool)
            kept[[PAD, BOS]] = False  # the export's output bias takes them out, as nmt's search does
            assert torch.allclose(theirs[i][:, kept], ours[:, kept], atol=1e-4), i
            assert (theirs[i][:, [PAD, BOS]] < -1e3).all()


def _limits(own, cfg) -> list[int]:
    return [int(cfg.max_len_a * (len(own.src_tokenizer.encode([line])[0]) + 1) + cfg.max_len_b) for line in LINES]


def test_greedy_generate_and_the_pipeline_translate_like_nmt(exported):
    own, model, tokenizer, out = exported
    cfg = own.recipe.decode.model_copy(update={"beam_size": 1})
    ours = translate_lines(own, LINES, cfg)
    limits = _limits(own, cfg)
    batch = tokenizer(LINES, return_tensors="pt", padding=True)
    generated = model.generate(**batch, num_beams=1, do_sample=False, max_length=max(limits) + 1)
    if PIPELINE:
        translate = transformers.pipeline("translation", model=str(out))
        texts = [r["translation_text"] for r in translate(LINES, num_beams=1, max_length=max(limits) + 1)]
    else:  # what the pipeline does: generate, then decode without the special tokens
        texts = tokenizer.batch_decode(generated, skip_special_tokens=True)
    for hyps, row, text, limit in zip(ours, generated.tolist(), texts, limits):
        if len(hyps[0].tokens) < limit:  # ended before its own limit (HF has one limit per call)
            assert [t for t in row[1:] if t not in (PAD, EOS)] == hyps[0].tokens
            assert " ".join(text.split()) == output_text(own.tgt_tokenizer, hyps[0].tokens)  # (see output_text)


@pytest.mark.parametrize("beam_size,alpha", [(4, 0.6), (5, 1.5), (3, 0.0)])
def test_beam_search_with_the_exported_defaults_finds_nmts_outputs(exported, beam_size, alpha):
    """transformers' beam search with the exported early_stopping (True; False at alpha 0) is nmt's
    with patience 1: one sentence per call, each with its own length limit (the start token counts
    in max_length)."""
    own, model, tokenizer, _ = exported
    cfg = own.recipe.decode.model_copy(update={"beam_size": beam_size, "length_penalty": alpha, "patience": 1.0,
                                               "no_repeat_ngram_size": 0})
    ours = translate_lines(own, LINES, cfg)
    early_stopping = alpha != 0  # what the export writes for this alpha
    assert model.generation_config.early_stopping is (own.recipe.decode.length_penalty != 0)
    for line, hyps, limit in zip(LINES, ours, _limits(own, cfg)):
        generated = model.generate(**tokenizer([line], return_tensors="pt"), num_beams=beam_size,
                                   length_penalty=alpha, early_stopping=early_stopping, no_repeat_ngram_size=0,
                                   max_length=limit + 1)
        assert [t for t in generated[0, 1:].tolist() if t not in (PAD, EOS)] == hyps[0].tokens, line


def test_the_directory_carries_the_recipes_decoding_and_a_model_card(exported):
    own, _, _, out = exported
    generation = json.loads((out / "generation_config.json").read_text())
    decode = own.recipe.decode
    assert (generation["num_beams"], generation["length_penalty"]) == (decode.beam_size, decode.length_penalty)
    assert generation["decoder_start_token_id"] == BOS
    card = (out / "README.md").read_text()
    assert "pipeline_tag: translation" in card and "license" in card and own.recipe.data.train in card
    best = checkpoint_info(own.recipe.out / "checkpoints" / "best.pt")["best_dev"]  # validated: its best is known
    assert best and f"dev {best['metric']} {best['score']} at update {best['step']}." in card


def test_pre_ln_with_separate_vocabularies_and_a_missing_extra_are_one_line_errors(tmp_path, monkeypatch):
    from nmt.train.trainer import train

    recipe = prepared_tiny(tmp_path / "pre", "train.max_steps=2", "train.valid_every=100", "model.norm=pre",
                           "tokenizer.joint=false", "model.share_embeddings=false")
    train(recipe, show_progress=False)
    out = tmp_path / "hf"
    one_line_error(runner.invoke(app, ["export", str(recipe.out / "checkpoints" / "last.pt"), "-o", str(out),
                                       "--format", "huggingface"]), "one vocabulary for both sides")
    assert not out.exists() and not list(tmp_path.glob(".hf*"))
    monkeypatch.setitem(__import__("sys").modules, "transformers", None)
    one_line_error(runner.invoke(app, ["export", str(recipe.out / "checkpoints" / "last.pt"), "-o", str(out),
                                       "--format", "huggingface"]), "pip install 'nmt[huggingface]'")
