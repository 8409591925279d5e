"""`nmt import` of a T5 directory in MADLAD-400's layout (T5ForConditionalGeneration, gated-GELU,
relative position buckets, RMSNorm, no biases, `<2xx>` pieces asking for the target language).

A small random model is built here from a T5Config, with heads of their own size (d_kv · heads ≠
d_model, which T5 allows), its RMSNorms and position buckets perturbed so that a misplaced weight
shows, and EOS made probable enough that outputs end; saved with `save_pretrained` beside a T5
tokenizer over a sentencepiece model with the language pieces, as the hub's directories hold them
(no network). transformers' generate is told to suppress the pad token, which nmt never predicts
(a trained model gives it a negligible share).

The source ids compared with are `<2xx> text` through the directory's sentencepiece model itself,
as MADLAD-400 was trained (T5X tokenizes with sentencepiece): the word boundary ▁ comes first,
then the code. transformers' T5Tokenizer agrees from 5.25 on (and 4.x's slow one did), but not in
5.0-5.24, which left the ▁ out; these tests hold whichever version is installed."""

from __future__ import annotations

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
from tests.export.test_import_m2m100 import fine_tune_tiny

transformers, pytestmark = optional_module("transformers")
needs_onnxruntime = optional_module("onnxruntime")[1]
runner = CliRunner()
LINES = [line.rstrip("\n") for line in open(TINY_DATA / "valid.en", encoding="utf-8")][:8] + ["A dog runs on the beach."]
TARGETS = ("de", "fr")
MAX_NEW = 30


def build_t5(root, tied: bool = False, extra_ids: int = 0, control_codes: bool = False):
    """`extra_ids`: the tokenizer's <extra_id_N>, past the model's rows (the rows end with the pieces);
    `control_codes`: the language pieces control pieces of the sentencepiece model (else user-defined)."""
    directory = root / "madlad"
    directory.mkdir()
    text = [line for name in ("train.en", "train.de") for line in (TINY_DATA / name).read_text(encoding="utf-8").splitlines()]
    spm.SentencePieceTrainer.train(sentence_iterator=iter(text), model_prefix=str(root / "sp"), vocab_size=180,
                                   model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1, minloglevel=2,
                                   **{"control_symbols" if control_codes else "user_defined_symbols":
                                      ["<2de>", "<2fr>", "<2en>"]})
    shutil.copy(root / "sp.model", directory / "spiece.model")
    tokenizer = transformers.T5Tokenizer.from_pretrained(directory, extra_ids=extra_ids)
    config = transformers.T5Config(
        vocab_size=len(tokenizer) - extra_ids + (0 if extra_ids else 4), d_model=32, d_kv=16, d_ff=48, num_layers=2, num_decoder_layers=2, num_heads=3,
        relative_attention_num_buckets=8, relative_attention_max_distance=20, feed_forward_proj="gated-gelu",
        tie_word_embeddings=tied, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    torch.manual_seed(0)
    model = transformers.T5ForConditionalGeneration(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 2 and "shared" not in name and "relative" not in name:
                p.mul_(3.0)  # logits spread as a trained model's are
            if "layer_norm" in name:
                p.add_(0.3 * torch.randn_like(p))
            elif "relative_attention_bias" in name:
                p.normal_(0.0, 2.0)  # positions that matter
        if not tied:
            model.lm_head.weight[1].mul_(2.0)  # EOS probable at times: outputs end
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    root = tmp_path_factory.mktemp("t5")
    directory = build_t5(root)
    ckpt = root / "madlad.pt"
    result = runner.invoke(app, ["import", str(directory), "-o", str(ckpt), "--recipe", str(root / "finetune.yaml"),
                                 "--src-lang", "en", "--tgt-lang", "de"])
    assert result.exit_code == 0, result.output
    assert "T5ForConditionalGeneration" in result.output and "positions: relative" in result.output
    return directory, ckpt


def _model_ids(own, tokenizer, ids: list[int]) -> list[int]:
    """nmt token ids as the directory's ids (rows no token has are named <unused:row>)."""
    pieces = [own.tgt_tokenizer.id_to_piece(i) for i in ids]
    return [int(p[8:-1]) if p.startswith("<unused:") else tokenizer.convert_tokens_to_ids(p) for p in pieces]


def _source_ids(directory, tgt: str, line: str, eos: int = 1) -> list[int]:
    """What MADLAD-400 reads for `line` into `tgt`: `<2tgt> line` through the directory's
    sentencepiece model, then EOS (the model's eos_token_id)."""
    return [*spm.SentencePieceProcessor(model_file=str(directory / "spiece.model")).encode(f"<2{tgt}> {line}"), eos]


def _generate(model, directory, lines, tgt, beams, suppress=(0,)):
    eos = model.config.eos_token_id
    return [model.generate(torch.tensor([_source_ids(directory, tgt, line, eos)]), num_beams=beams, do_sample=False,
                           max_length=MAX_NEW + 1, length_penalty=1.0, early_stopping=True,
                           suppress_tokens=list(suppress))[0].tolist() for line in lines]


def test_the_import_reads_the_layout_tokens_and_logits(imported):
    directory, ckpt = imported
    own = load_engine([ckpt], src_lang="en", tgt_lang="de")
    cfg = own.recipe.model
    assert (cfg.positions, cfg.norm_type, cfg.gated_ffn, cfg.bias, cfg.head_dim, cfg.scale_embeddings, cfg.activation) \
        == ("relative", "rms", True, False, 16, False, "gelu_tanh")
    assert own.recipe.data.language_token == "source" and set(own.recipe.data.languages) == {"de", "fr", "en"}
    assert own.recipe.data.language_token_as_text  # the codes are user-defined pieces, read in text
    info = runner.invoke(app, ["info", str(ckpt)]).output
    assert "relative positions, RMSNorm, gated feed-forwards" in info and "<2de>" in info
    assert "after the word boundary ▁" in info
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    hf = transformers.AutoModelForSeq2SeqLM.from_pretrained(directory).eval()
    for line in LINES:
        source = [*own.controls.source, *own.src_tokenizer.encode([line])[0], EOS]
        hf_source = _source_ids(directory, "de", line)
        assert tokenizer.convert_ids_to_tokens(hf_source[:2]) == ["▁", "<2de>"]
        assert _model_ids(own, tokenizer, source) == hf_source  # the word boundary and the code first, EOS last
        target = [own.model.start_token, *own.tgt_tokenizer.encode([line])[0][:6]]
        with torch.no_grad():
            ours = own.model(torch.tensor([source]), torch.tensor([target]))[0]
            theirs = hf(input_ids=torch.tensor([hf_source]),
                        decoder_input_ids=torch.tensor([[0, *_model_ids(own, tokenizer, target[1:])]])).logits[0]
        columns = _model_ids(own, tokenizer, list(range(4, ours.size(-1))))
        assert torch.allclose(ours[:, 4:], theirs[:, columns], atol=1e-4)


@pytest.mark.parametrize("beam_size", [1, 4])
def test_the_import_and_its_ctranslate2_export_translate_as_generate_does(imported, tmp_path, beam_size):
    directory, ckpt = imported
    hf = transformers.AutoModelForSeq2SeqLM.from_pretrained(directory).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    ct2 = None
    if optional_module("ctranslate2")[0]:
        assert runner.invoke(app, ["export", str(ckpt), "-o", str(tmp_path / "ct2")]).exit_code == 0
        ct2 = tmp_path / "ct2"
    outputs, ended = {}, 0
    for tgt in TARGETS:
        own = load_engine([ckpt], src_lang="en", tgt_lang=tgt)
        cfg = own.recipe.decode.model_copy(update={"beam_size": beam_size, "length_penalty": 1.0, "patience": 1.0,
                                                   "no_repeat_ngram_size": 0, "max_len_a": 0.0, "max_len_b": MAX_NEW})
        ours = translate_lines(own, LINES, cfg)
        for generated, hyps in zip(_generate(hf, directory, LINES, tgt, beam_size), ours):
            assert [t for t in generated[1:] if t != 1] == _model_ids(own, tokenizer, hyps[0].tokens)
            ended += generated[-1] == 1
        if ct2:
            theirs = [h[0] for h in translate_lines(load_engine([ct2], src_lang="en", tgt_lang=tgt), LINES, cfg)]
            assert [h.tokens for h in theirs] == [h[0].tokens for h in ours]
            assert max(abs(a.log_prob - b[0].log_prob) for a, b in zip(theirs, ours)) < 1e-3
        outputs[tgt] = [h[0].tokens for h in ours]
    assert outputs["de"] != outputs["fr"]
    assert ended >= 4  # outputs that end before the length limit, so the searches' scoring is compared


def test_fine_tuning_changes_every_part_and_lowers_the_loss(imported, tmp_path):
    directory, ckpt = imported
    tuned, log_likelihood = fine_tune_tiny(ckpt, tmp_path, "en", "de")
    assert log_likelihood(tuned) > log_likelihood(ckpt)
    before = torch.load(ckpt, weights_only=True)["model"]
    after = torch.load(tuned, weights_only=True)["model"]
    for name in ("encoder_position_bias.weight", "decoder_position_bias.weight", "encoder_norm.weight",
                 "decoder_layers.1.feed_forward.w3.weight", "output_proj.weight"):
        assert not torch.equal(before[name], after[name]), name


@needs_onnxruntime
def test_the_onnx_export_steps_and_translates_as_nmt_does(imported, tmp_path):
    """The ONNX graphs of the T5 layout (relative positions in the decoder's step, RMSNorm, gated
    GELU, heads of their own width): log-probabilities within float rounding of nmt's step by step
    with 1 and 3 beams per sentence, and every line translated as nmt translates it, greedy and
    beam 4, into both languages, by the translator and as nmt translate's engine; int8 exports too."""
    from nmt.decode.onnx_translator import OnnxTranslator
    from tests.export.test_onnx import assert_steps_match

    _, ckpt = imported
    out = tmp_path / "onnx"
    assert runner.invoke(app, ["export", str(ckpt), "-o", str(out), "--format", "onnx"]).exit_code == 0
    model = load_engine([ckpt], src_lang="en", tgt_lang="de").model
    src = torch.tensor([[11, 12, 13, 14, 15, 16, 17, EOS], [15, 16, EOS, 0, 0, 0, 0, 0]])
    for beams in (1, 3):  # 12 steps: past the buckets' exact distances (4 of 8). Log-probabilities
        # go down to -40 here: float32's rounding of them is about 1.5e-5 of that
        assert_steps_match(model, out, src, beams, steps=12, rtol=1e-4)
    searches = {"length_penalty": 1.0, "patience": 1.0, "no_repeat_ngram_size": 0, "max_len_a": 0.0, "max_len_b": MAX_NEW}
    for tgt in TARGETS:
        own, translator = load_engine([ckpt], src_lang="en", tgt_lang=tgt), OnnxTranslator(out, src_lang="en", tgt_lang=tgt)
        for beam_size in (1, 4):
            cfg = own.recipe.decode.model_copy(update={**searches, "beam_size": beam_size})
            translator.settings = translator.settings.model_copy(update={**searches, "beam_size": beam_size})
            sources = [translator.prefix + translator.source.encode(line) for line in LINES]
            expected = [h[0].tokens for h in translate_lines(own, LINES, cfg)]
            assert translator.search(sources) == expected
            exported = load_engine([out], src_lang="en", tgt_lang=tgt)  # nmt translate's engine over the export
            assert [h[0].tokens for h in translate_lines(exported, LINES, cfg)] == expected
    assert runner.invoke(app, ["export", str(ckpt), "-o", str(tmp_path / "int8"), "--format", "onnx",
                               "--quantization", "int8"]).exit_code == 0
    int8 = OnnxTranslator(tmp_path / "int8", src_lang="en", tgt_lang="fr").translate(LINES)
    assert len(int8) == len(LINES) and any(int8)  # (this random model ends some lines at once, float32 too)


def test_the_import_exports_back_to_transformers_generating_alike(imported, tmp_path):
    directory, ckpt = imported
    result = runner.invoke(app, ["export", str(ckpt), "-o", str(tmp_path / "back"), "--format", "huggingface"])
    assert result.exit_code == 0, result.output
    original, back = (transformers.AutoModelForSeq2SeqLM.from_pretrained(d).eval() for d in (directory, tmp_path / "back"))
    tokenizers = [transformers.AutoTokenizer.from_pretrained(d) for d in (directory, tmp_path / "back")]
    assert type(back).__name__ == "T5ForConditionalGeneration"
    card = (tmp_path / "back" / "README.md").read_text(encoding="utf-8")
    assert f"(imported from `{directory}`)" in card and "after the word boundary ▁" in card
    for beams in (1, 4):
        texts = [[tokenizer.decode(ids, skip_special_tokens=True) for ids in
                  _generate(model, path, LINES, "fr", beams, suppress)]
                 for model, tokenizer, path, suppress in ((original, tokenizers[0], directory, (0,)),
                                                          (back, tokenizers[1], tmp_path / "back", ()))]
        assert texts[0] == texts[1]  # the export's generation config suppresses PAD and BOS itself
    assert back.generation_config.suppress_tokens == [0, 2]


def test_a_t5_v1_0_and_extra_ids_past_the_rows_import_exactly(tmp_path):
    """T5 v1.0: its output layer is its embedding, the decoder's output scaled by d_model^-0.5 first.
    Its tokenizer's 100 <extra_id_N> lie past the model's rows: left out, as no row reads them."""
    directory = build_t5(tmp_path, tied=True, extra_ids=100)
    assert len(transformers.AutoTokenizer.from_pretrained(directory)) == 280
    result = runner.invoke(app, ["import", str(directory), "-o", str(tmp_path / "tied.pt"), "--src-lang", "en",
                                 "--tgt-lang", "de"])
    assert result.exit_code == 0, result.output  # the import's own check: logits within 1e-3
    # the 180 rows and nmt's BOS, a second copy of the pad row T5 starts from
    assert "tie_output: False" in result.output and "vocabularies 181/181" in result.output


def test_what_nmt_cannot_import_or_export_is_one_line(imported, tmp_path):
    directory, ckpt = imported
    config = (directory / "config.json").read_text()
    other = tmp_path / "other"
    shutil.copytree(directory, other)
    (other / "config.json").write_text(config.replace('"layer_norm_epsilon": 1e-06', '"layer_norm_epsilon": 1e-05'))
    one_line_error(runner.invoke(app, ["import", str(other), "-o", str(tmp_path / "x.pt"), "--src-lang", "en",
                                       "--tgt-lang", "de"]), "layer_norm_epsilon")
    one_line_error(runner.invoke(app, ["import", str(directory), "-o", str(tmp_path / "x.pt"), "--src-lang", "en",
                                       "--tgt-lang", "xx"]), "not a language of")
    one_line_error(runner.invoke(app, ["import", str(directory), "-o", str(tmp_path / "x.pt"), "--src-lang", "en",
                                       "--tgt-lang", "de", "--add-languages", "fr"]), "fr is already a language")
    assert not (tmp_path / "x.pt").exists()
    one_line_error(runner.invoke(app, ["export", str(ckpt), "-o", str(tmp_path / "x.argosmodel"), "--format", "argos"]),
                   "language_token_as_text")
    assert not (tmp_path / "x.argosmodel").exists()


def test_a_new_language_leaves_the_old_directions_as_they_were_and_exports_to_transformers(imported, tmp_path):
    directory, plain = imported
    extended = tmp_path / "extended.pt"
    (tmp_path / "pieces.txt").write_text("ř\nště\n", encoding="utf-8")  # letters the model lacks
    result = runner.invoke(app, ["import", str(directory), "-o", str(extended), "--src-lang", "en", "--tgt-lang", "de",
                                 "--add-languages", "cs=de", "--add-pieces", str(tmp_path / "pieces.txt")])
    assert result.exit_code == 0, result.output
    assert "added 1 language(s) (cs) and 2 piece(s)" in result.output
    # Greedy outputs keep their tokens: no new row outscores the best old one. (A beam search
    # keeps them unless hypotheses nearly tie: here 1 of 18 beam-4 outputs changes, in a loop.)
    for tgt in TARGETS:
        before, after = (load_engine([c], src_lang="en", tgt_lang=tgt) for c in (plain, extended))
        settings = before.recipe.decode.model_copy(update={"beam_size": 1, "max_len_a": 0.0, "max_len_b": MAX_NEW})
        assert [h[0].tokens for h in translate_lines(after, LINES, settings)] == \
            [h[0].tokens for h in translate_lines(before, LINES, settings)]
    own = load_engine([extended], src_lang="en", tgt_lang="cs")
    weights = own.model.src_embed.tokens.weight
    code, related = (own.src_tokenizer.piece_to_id(f"<2{c}>") for c in ("cs", "de"))
    assert list(own.controls.source) == [own.src_tokenizer.piece_to_id("▁"), code]
    assert torch.equal(weights[code], weights[related])  # the related row
    # "ště" reads as "t" to the old tokenizer: halfway between t's row and the mean of the normal pieces'
    sp = own.tgt_tokenizer
    normal = [i for i in range(code) if not (sp.is_control(i) or sp.is_unknown(i) or sp.is_unused(i))]
    t_row, new_row = own.model.output_weight[sp.piece_to_id("t")], own.model.output_weight[sp.piece_to_id("ště")]
    assert torch.allclose(new_row, (t_row + own.model.output_weight[normal].mean(0)) / 2, atol=1e-6)
    # exported, the new code is a piece of the T5 tokenizer, and generate translates into it as nmt does
    assert runner.invoke(app, ["export", str(extended), "-o", str(tmp_path / "back"), "--format",
                               "huggingface"]).exit_code == 0
    back = transformers.AutoModelForSeq2SeqLM.from_pretrained(tmp_path / "back").eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(tmp_path / "back")
    assert tokenizer.convert_ids_to_tokens(_source_ids(tmp_path / "back", "cs", LINES[0])[:2]) == ["▁", "<2cs>"]
    settings = own.recipe.decode.model_copy(update={"beam_size": 1, "max_len_a": 0.0, "max_len_b": MAX_NEW})
    ours = [h[0].tokens for h in translate_lines(own, LINES, settings)]
    assert [[t for t in ids[1:] if t != EOS] for ids in _generate(back, tmp_path / "back", LINES, "cs", 1, ())] == ours


def test_language_codes_that_are_control_pieces_import_alike(tmp_path):
    directory = build_t5(tmp_path, control_codes=True)
    ckpt = tmp_path / "control.pt"
    result = runner.invoke(app, ["import", str(directory), "-o", str(ckpt), "--src-lang", "en", "--tgt-lang", "fr"])
    assert result.exit_code == 0, result.output
    own = load_engine([ckpt], src_lang="en", tgt_lang="fr")
    assert set(own.recipe.data.languages) == {"de", "fr", "en"}
    assert not own.recipe.data.language_token_as_text  # control pieces are split off text first: no ▁ before
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    source = [*own.controls.source, *own.src_tokenizer.encode([LINES[0]])[0], EOS]
    assert _model_ids(own, tokenizer, source) == tokenizer(f"<2fr> {LINES[0]}")["input_ids"]
