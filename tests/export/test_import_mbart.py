"""`nmt import` of an mBART-50 directory (MBartForConditionalGeneration with an MBart50Tokenizer).

A small random model is built here from an MBartConfig, its LayerNorms (the embeddings' included)
and learned positions perturbed so that a wrong mapping shows, and saved with `save_pretrained`
beside its tokenizer and sentencepiece model, as the hub's directories hold them (no network).
The import computes transformers' logits, translates as `generate` with the forced language code
does (greedy and beam, into two languages), and so does its CTranslate2 export; written back as
transformers files it generates as the original does."""

from __future__ import annotations

import json
import shutil

import pytest
import sentencepiece as spm
import torch
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import translate_lines
from nmt.special_tokens import EOS
from tests.conftest import TINY_DATA, one_line_error, optional_module
from tests.export.test_import_m2m100 import _generate, _hf_ids, exported_back, fine_tune_tiny

transformers, pytestmark = optional_module("transformers")
runner = CliRunner()
LINES = [line.rstrip("\n") for line in open(TINY_DATA / "valid.en", encoding="utf-8")][:8] + ["A dog runs on the beach."]
SOURCE, TARGETS = "en_XX", ("de_DE", "fr_XX")


def build_mbart50(root, positions: int = 64):
    """A small random mBART-50 model with `positions` learned positions, saved as the hub's directories are."""
    directory = root / "mbart50"
    directory.mkdir()
    text = [line for name in ("train.en", "train.de") for line in (TINY_DATA / name).read_text(encoding="utf-8").splitlines()]
    # mBART-50's sentencepiece.bpe.model (XLM-R's) is a unigram model, whatever its name says
    spm.SentencePieceTrainer.train(sentence_iterator=iter(text), model_prefix=str(root / "sp"), vocab_size=180,
                                   model_type="unigram", unk_id=0, bos_id=1, eos_id=2, pad_id=-1, minloglevel=2)
    shutil.copy(root / "sp.model", directory / "sentencepiece.bpe.model")
    tokenizer = transformers.MBart50Tokenizer.from_pretrained(directory, src_lang=SOURCE, tgt_lang=TARGETS[0],
                                                              bos_token="<s>")
    config = transformers.MBartConfig(
        vocab_size=len(tokenizer), d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=positions,
        scale_embedding=True, activation_function="gelu", pad_token_id=1, bos_token_id=0, eos_token_id=2,
        decoder_start_token_id=2)
    torch.manual_seed(0)
    model = transformers.MBartForConditionalGeneration(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 2 and p is not model.model.shared.weight:
                p.mul_(5.0)  # logits spread as a trained model's are
            elif p.dim() == 1 and "norm" in name:
                p.add_(0.3 * torch.randn_like(p))  # every LayerNorm its own weights, so each must land in place
        for stack in (model.model.encoder, model.model.decoder):  # positions that matter, as trained ones do
            stack.embed_positions.weight.mul_(8.0)
        # As trained, <s>, <pad>, the language codes and <mask> (every id after the pieces) score far
        # below the pieces: the final LayerNorm's bias all ones, their rows near -1 (each code its own)
        model.model.decoder.layer_norm.bias.fill_(1.0)
        rare = [0, 1, *range(tokenizer.convert_tokens_to_ids("ar_AR"), len(tokenizer))]
        model.model.shared.weight[rare] = -1.0 + 0.3 * torch.randn(len(rare), config.d_model)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    root = tmp_path_factory.mktemp("mbart")
    directory = build_mbart50(root)
    ckpt = root / "mbart50.pt"
    result = runner.invoke(app, ["import", str(directory), "-o", str(ckpt), "--recipe", str(root / "finetune.yaml")])
    assert result.exit_code == 0, result.output
    assert "MBartForConditionalGeneration" in result.output and "positions: learned" in result.output
    return directory, ckpt


def test_the_import_reads_the_codes_tokens_and_logits(imported):
    directory, ckpt = imported
    own = load_engine([ckpt], src_lang=SOURCE, tgt_lang=TARGETS[0])
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    tokenizer.src_lang = SOURCE
    hf = transformers.AutoModelForSeq2SeqLM.from_pretrained(directory).eval()
    model_cfg = own.recipe.model
    assert (model_cfg.positions, model_cfg.embedding_norm, model_cfg.norm, model_cfg.activation) == ("learned", True, "pre", "gelu")
    assert set(TARGETS) | {SOURCE} <= set(own.recipe.data.languages) and len(own.recipe.data.languages) == 52
    forced = tokenizer.convert_tokens_to_ids(TARGETS[0])
    for line in LINES:
        source = [*own.controls.source, *own.src_tokenizer.encode([line])[0], EOS]
        assert _hf_ids(own, tokenizer, "{}", source) == tokenizer([line])["input_ids"][0]
        target = [own.model.start_token, *own.controls.target, *own.tgt_tokenizer.encode([line])[0][:5]]
        with torch.no_grad():
            ours = own.model(torch.tensor([source]), torch.tensor([target]))[0]
            theirs = hf(input_ids=torch.tensor([tokenizer([line])["input_ids"][0]]),
                        decoder_input_ids=torch.tensor([[2, forced, *_hf_ids(own, tokenizer, "{}", target[2:])]])).logits[0]
        columns = _hf_ids(own, tokenizer, "{}", list(range(4, ours.size(-1))))
        assert torch.allclose(ours[:, 4:], theirs[:, columns], atol=1e-4)


@pytest.mark.parametrize("beam_size", [1, 4])
def test_the_import_and_its_ctranslate2_export_translate_as_generate_does(imported, tmp_path, beam_size):
    directory, ckpt = imported
    hf = transformers.AutoModelForSeq2SeqLM.from_pretrained(directory).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    tokenizer.src_lang = SOURCE
    ct2 = None
    if beam_size == 4 and optional_module("ctranslate2")[0]:
        assert runner.invoke(app, ["export", str(ckpt), "-o", str(tmp_path / "ct2")]).exit_code == 0
        ct2 = tmp_path / "ct2"
    outputs = {}
    for tgt in TARGETS:
        own = load_engine([ckpt], src_lang=SOURCE, tgt_lang=tgt)
        cfg = own.recipe.decode.model_copy(update={"beam_size": beam_size, "length_penalty": 1.0, "patience": 1.0,
                                                   "no_repeat_ngram_size": 0, "max_len_a": 0.0, "max_len_b": 29})
        ours = translate_lines(own, LINES, cfg)  # at most 29 tokens, as generate's 31 with its start and code
        for generated, hyps in zip(_generate(hf, tokenizer, LINES, tgt, beam_size), ours):
            assert generated[:2] == [2, tokenizer.convert_tokens_to_ids(tgt)]
            assert [t for t in generated[2:] if t not in (1, 2)] == _hf_ids(own, tokenizer, "{}", hyps[0].tokens)
        if ct2:
            theirs = [h[0] for h in translate_lines(load_engine([ct2], src_lang=SOURCE, tgt_lang=tgt), LINES, cfg)]
            assert [h.tokens for h in theirs] == [h[0].tokens for h in ours]
            assert max(abs(a.log_prob - b[0].log_prob) for a, b in zip(theirs, ours)) < 1e-3
        outputs[tgt] = [h[0].tokens for h in ours]
    assert outputs[TARGETS[0]] != outputs[TARGETS[1]]


def test_the_import_exports_back_to_transformers_generating_alike(imported, tmp_path):
    directory, ckpt = imported
    original, back, tokenizers = exported_back(ckpt, directory, tmp_path / "back", SOURCE)
    assert type(back).__name__ == "MBartForConditionalGeneration"
    for beams in (1, 4):
        assert _generate(back, tokenizers[1], LINES, TARGETS[1], beams) == \
            _generate(original, tokenizers[0], LINES, TARGETS[1], beams)
    batch = tokenizers[0](LINES[:2], return_tensors="pt", padding=True)
    decoder = torch.tensor([[2, tokenizers[0].convert_tokens_to_ids(TARGETS[1]), 20, 30]] * 2)
    with torch.no_grad():
        ours, theirs = (m(**batch, decoder_input_ids=decoder).logits for m in (back, original))
    kept = torch.ones(ours.size(-1), dtype=torch.bool)
    kept[[0, 1]] = False  # <s> and <pad>: nmt never predicts them, nor leaves them a row of their own logit
    assert torch.allclose(ours[..., kept], theirs[..., kept], atol=1e-4)


def test_an_mbart_cc25_tokenizer_is_a_one_line_error(imported, tmp_path):
    directory, _ = imported
    cc25 = tmp_path / "cc25"
    shutil.copytree(directory, cc25)
    config = json.loads((cc25 / "tokenizer_config.json").read_text())
    (cc25 / "tokenizer_config.json").write_text(json.dumps(config | {"tokenizer_class": "MBartTokenizer"}))
    one_line_error(runner.invoke(app, ["import", str(cc25), "-o", str(tmp_path / "x.pt")]),
                   "an mBART model with a MBartTokenizer", "mBART-50's layout")
    assert not (tmp_path / "x.pt").exists()


def test_fine_tuning_the_import_lowers_the_loss_and_keeps_its_layout(imported, tmp_path):
    """The learned positions and the embeddings' LayerNorm train and reload like any weight."""
    from nmt.checkpoint import load_checkpoint

    _, ckpt = imported
    tuned, log_likelihood = fine_tune_tiny(ckpt, tmp_path, SOURCE, TARGETS[0])
    before, after = load_checkpoint(ckpt)["model"], load_checkpoint(tuned)["model"]
    for name in ("src_embed.positions.weight", "tgt_embed.norm.weight"):
        assert not torch.equal(before[name], after[name]), name
    assert log_likelihood(tuned) > log_likelihood(ckpt) + 1.0
