"""`nmt import`: a transformers Marian (OPUS-MT-style) or Pegasus directory as an nmt checkpoint.

The Marian model is built here from a random MarianConfig with OPUS-MT's layout (swish
feed-forward; vocab.json with `</s>` 0, `<unk>` 1, both languages' pieces, `<pad>` last and
starting the decoder; one sentencepiece model per language), saved with `save_pretrained`: no
network. Its outputs in nmt equal those in transformers, fine-tuning lowers its loss, and it
exports back to transformers translating as before."""

from __future__ import annotations

import json

import pytest
import sentencepiece as spm
import torch
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import translate_lines
from nmt.data.tokenizer import output_text
from tests.conftest import TINY_DATA, one_line_error, optional_module, prepared_tiny, tiny_recipe

transformers, pytestmark = optional_module("transformers")
runner = CliRunner()
# Characters the source sentencepiece model lacks: MarianTokenizer looks their surface up in
# vocab.json (where the other language may have it), nmt reads <unk>; these lines have none.
LINES = [line.rstrip("\n") for line in open(TINY_DATA / "train.en", encoding="utf-8")][:12] + [
    "A dog runs on the beach.", "a man"]
SHAPE = {"encoder_layers": 2, "decoder_layers": 2, "d_model": 32, "heads": 4, "d_ff": 64}


def _spm(path_prefix, text_file, size):
    spm.SentencePieceTrainer.Train(input=str(text_file), model_prefix=str(path_prefix), vocab_size=size,
                                   model_type="unigram", minloglevel=2)  # Marian's ids: <unk> 0, <s> 1, </s> 2
    return spm.SentencePieceProcessor(model_file=f"{path_prefix}.model")


@pytest.fixture(scope="module")
def marian_dir(tmp_path_factory):
    return marian_directory(tmp_path_factory.mktemp("opus"))


def marian_directory(root, codes: tuple[str, ...] = (), target_lang: str = "de"):
    """A random OPUS-MT-style model saved in `root`; with `codes`, a multilingual one whose
    vocabulary has a `>>code<<` entry for each target language (right after <unk>)."""
    src, tgt = _spm(root / "src", TINY_DATA / "train.en", 100), _spm(root / "tgt", TINY_DATA / "train.de", 110)
    vocab = {"</s>": 0, "<unk>": 1} | {f">>{code}<<": 2 + i for i, code in enumerate(codes)}
    for sp in (src, tgt):
        for i in range(sp.get_piece_size()):
            if not (sp.is_control(i) or sp.is_unknown(i)):
                vocab.setdefault(sp.id_to_piece(i), len(vocab))
    pad = vocab["<pad>"] = len(vocab)
    (root / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    tokenizer = transformers.MarianTokenizer(str(root / "src.model"), str(root / "tgt.model"), str(root / "vocab.json"),
                                             source_lang="en", target_lang=target_lang)
    config = transformers.MarianConfig(
        vocab_size=len(vocab), decoder_vocab_size=len(vocab), d_model=SHAPE["d_model"],
        encoder_layers=SHAPE["encoder_layers"], decoder_layers=SHAPE["decoder_layers"],
        encoder_attention_heads=SHAPE["heads"], decoder_attention_heads=SHAPE["heads"],
        encoder_ffn_dim=SHAPE["d_ff"], decoder_ffn_dim=SHAPE["d_ff"], activation_function="swish",
        max_position_embeddings=128, pad_token_id=pad, eos_token_id=0, decoder_start_token_id=pad,
        forced_eos_token_id=0, init_std=0.3, scale_embedding=True, share_encoder_decoder_embeddings=True)
    torch.manual_seed(0)
    model = transformers.MarianMTModel(config).eval()
    model.final_logits_bias[0, pad] = -1e4  # never the pad token, as OPUS-MT's bad_words_ids says
    model.generation_config = transformers.GenerationConfig(
        num_beams=4, max_length=127, early_stopping=True, pad_token_id=pad, eos_token_id=0, decoder_start_token_id=pad)
    out = root / "opus-mt-en-de"
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def imported(marian_dir, tmp_path_factory):
    ckpt = tmp_path_factory.mktemp("imported") / "opus.pt"
    result = runner.invoke(app, ["import", str(marian_dir), "-o", str(ckpt)])
    assert result.exit_code == 0, result.output
    assert "logits within" in result.output and "--init-from" in result.output
    info = runner.invoke(app, ["info", str(ckpt)])
    assert info.exit_code == 0 and f"imported     from {marian_dir}" in info.output, info.output
    return ckpt


def _generate(model, tokenizer, line, limit, **settings):
    generated = model.generate(**tokenizer([line], return_tensors="pt"), max_length=limit + 1, **settings)
    # in nmt's output text spaces never run two in a row, nor end it (nmt.data.tokenizer.output_text)
    return " ".join(tokenizer.batch_decode(generated, skip_special_tokens=True)[0].split())


@pytest.mark.parametrize("beam_size", [1, 4])
def test_the_imported_model_translates_as_transformers_does(marian_dir, imported, beam_size):
    own = load_engine([imported])
    assert own.recipe.model.activation == "swish" and own.recipe.model.norm == "post"
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(marian_dir).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(marian_dir)
    vocab = json.loads((marian_dir / "vocab.json").read_text())
    for line in LINES:  # nmt's pieces are Marian's, under other ids
        pieces = [own.src_tokenizer.id_to_piece(i) for i in own.src_tokenizer.encode([line])[0]]
        assert [vocab[p] for p in pieces] + [0] == tokenizer([line])["input_ids"][0]
    cfg = own.recipe.decode.model_copy(update={"beam_size": beam_size, "length_penalty": 1.0, "patience": 1.0,
                                               "no_repeat_ngram_size": 0})
    ours = translate_lines(own, LINES, cfg)
    for line, hyps in zip(LINES, ours):
        limit = int(cfg.max_len_a * (len(own.src_tokenizer.encode([line])[0]) + 1) + cfg.max_len_b)
        theirs = _generate(model, tokenizer, line, limit, num_beams=beam_size, length_penalty=1.0, do_sample=False)
        assert output_text(own.tgt_tokenizer, hyps[0].tokens) == theirs, line


def test_a_multilingual_opus_mt_model_translates_into_the_language_asked_for_and_exports_back(tmp_path):
    """Its `>>fra<<` codes become nmt's language tokens (data.language_token: source): --tgt-lang
    puts one in front of the source, as a text starting `>>fra<<` does in transformers; the
    export writes them back as codes."""
    directory = marian_directory(tmp_path, codes=("fra", "spa"), target_lang="roa")
    ckpt = tmp_path / "mul.pt"
    one_line_error(runner.invoke(app, ["import", str(directory), "-o", str(ckpt)]),
                   "the language whose code starts the source (>>fra<<, ...): give the default with --tgt-lang")
    one_line_error(runner.invoke(app, ["import", str(directory), "-o", str(ckpt), "--tgt-lang", "ita"]),
                   "--tgt-lang ita: not a language code of")
    result = runner.invoke(app, ["import", str(directory), "-o", str(ckpt), "--tgt-lang", "spa"])
    assert result.exit_code == 0 and "2 languages (fra, spa): choose the target with" in result.output, result.output
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(directory).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    outputs = {}
    for lang in ("fra", "spa"):
        own = load_engine([ckpt], tgt_lang=lang)
        assert own.recipe.data.language_token == "source" and own.recipe.data.languages == ["fra", "spa"]
        cfg = own.recipe.decode.model_copy(update={"beam_size": 1, "max_len_b": 20, "max_len_a": 0})
        ours = translate_lines(own, LINES[:6], cfg)
        outputs[lang] = [output_text(own.tgt_tokenizer, hyps[0].tokens) for hyps in ours]
        assert outputs[lang] == [_generate(model, tokenizer, f">>{lang}<< {line}", 20, num_beams=1, do_sample=False)
                                 for line in LINES[:6]]
    assert outputs["fra"] != outputs["spa"]  # the code is read: a random model answers each otherwise
    config = json.loads((directory / "tokenizer_config.json").read_text())
    (directory / "tokenizer_config.json").write_text(json.dumps(config | {"target_lang": "es"}))
    result = runner.invoke(app, ["import", str(directory), "-o", str(tmp_path / "es.pt")])  # es: the code spa
    assert result.exit_code == 0 and "(MarianMTModel, en-spa," in result.output, result.output
    from nmt.serve.models import Served

    assert Served(own, str(ckpt)).directions() == {("en", "spa"), ("en", "fra")}  # what a server offers
    out = tmp_path / "back"
    assert runner.invoke(app, ["export", str(ckpt), "-o", str(out), "--format", "huggingface"]).exit_code == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Transformer converted by nmt" in card and f"(imported from `{directory}`)" in card, card
    assert 'tokenizer([">>spa<< A dog runs on the beach."]' in card  # the example asks for the default target
    back, back_tokenizer = (transformers.AutoModelForSeq2SeqLM.from_pretrained(out).eval(),
                            transformers.AutoTokenizer.from_pretrained(out))
    assert [_generate(back, back_tokenizer, f">>fra<< {line}", 20, num_beams=1) for line in LINES[:6]] == outputs["fra"]


def _total_log_prob(ckpt, tmp_path) -> float:
    out = tmp_path / "scores.txt"
    result = runner.invoke(app, ["likelihood", "-c", str(ckpt), "--source", str(TINY_DATA / "train.en"),
                                 "--target", str(TINY_DATA / "train.de"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return sum(float(x) for x in out.read_text().split())


def test_fine_tuning_lowers_the_loss_and_the_model_exports_back_unchanged(marian_dir, imported, tmp_path):
    from nmt.data.prepare import prepare
    from nmt.data.tokenizer import train_tokenizer
    from nmt.train.trainer import train

    own = load_engine([imported]).recipe
    shape = [f"model.{key}={getattr(own.model, key)}" for key in
             (*SHAPE, "activation", "norm", "share_embeddings", "tie_output", "max_positions")]
    recipe = tiny_recipe(tmp_path / "ft", f"train.init_from={imported}", "train.max_steps=20", "train.lr=0.001",
                         "train.warmup_steps=5", "train.valid_every=20", "tokenizer.joint=false",
                         f"tokenizer.vocab_size={own.tokenizer.vocab_size}", *shape)
    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out, recipe.train.init_from)  # the parent's, copied
    prepare(recipe.data, recipe.tokenizer, recipe.out)
    train(recipe, show_progress=False)
    tuned = recipe.out / "checkpoints" / "last.pt"
    assert _total_log_prob(tuned, tmp_path) > _total_log_prob(imported, tmp_path) + 1.0

    # back to transformers: the same translations as the directory it came from
    out = tmp_path / "back"
    result = runner.invoke(app, ["export", str(imported), "-o", str(out), "--format", "huggingface"])
    assert result.exit_code == 0, result.output
    original = transformers.AutoModelForSeq2SeqLM.from_pretrained(marian_dir).eval()
    original_tokenizer = transformers.AutoTokenizer.from_pretrained(marian_dir)
    back = transformers.AutoModelForSeq2SeqLM.from_pretrained(out).eval()
    back_tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    for line in LINES:
        for beams in (1, 4):
            assert _generate(back, back_tokenizer, line, 40, num_beams=beams) == \
                _generate(original, original_tokenizer, line, 40, num_beams=beams), line


def test_an_exported_pre_ln_model_comes_back_translating_alike(trained_tiny, tmp_path):
    from nmt.train.trainer import train

    recipe = prepared_tiny(tmp_path / "pre", "train.max_steps=60", "train.valid_every=60", "model.norm=pre")
    train(recipe, show_progress=False)
    ckpt = recipe.out / "checkpoints" / "last.pt"
    assert runner.invoke(app, ["export", str(ckpt), "-o", str(tmp_path / "hf"), "--format", "huggingface"]).exit_code == 0
    result = runner.invoke(app, ["import", str(tmp_path / "hf"), "-o", str(tmp_path / "back.pt")])
    assert result.exit_code == 0, result.output
    first, second = load_engine([ckpt]), load_engine([tmp_path / "back.pt"])
    assert second.recipe.model.norm == "pre"
    a = translate_lines(first, LINES, first.recipe.decode)
    b = translate_lines(second, LINES, first.recipe.decode)
    assert [h[0].tokens for h in a] == [h[0].tokens for h in b]


def test_bad_directories_are_one_line_errors_and_write_nothing(marian_dir, tmp_path):
    import shutil

    out = tmp_path / "out.pt"
    one_line_error(runner.invoke(app, ["import", str(tmp_path), "-o", str(out)]), "no config.json")
    other = tmp_path / "bert"
    other.mkdir()
    (other / "config.json").write_text(json.dumps({"model_type": "bert"}))
    one_line_error(runner.invoke(app, ["import", str(other), "-o", str(out)]), "'bert'", "imports Marian")
    (other / "config.json").write_text("[1, 2]\n")
    one_line_error(runner.invoke(app, ["import", str(other), "-o", str(out)]), "config.json: not a JSON object (a list)")
    not_object = tmp_path / "list_vocab"
    shutil.copytree(marian_dir, not_object)
    (not_object / "vocab.json").write_text('["a", "b"]')
    one_line_error(runner.invoke(app, ["import", str(not_object), "-o", str(out)]), "vocab.json: not a JSON object")
    no_spm = tmp_path / "no_spm"
    shutil.copytree(marian_dir, no_spm)
    (no_spm / "source.spm").unlink()
    one_line_error(runner.invoke(app, ["import", str(no_spm), "-o", str(out)]), "source.spm: missing")
    unscaled = tmp_path / "unscaled"
    shutil.copytree(marian_dir, unscaled)
    config = json.loads((unscaled / "config.json").read_text())
    (unscaled / "config.json").write_text(json.dumps(config | {"scale_embedding": False, "decoder_ffn_dim": 48}))
    one_line_error(runner.invoke(app, ["import", str(unscaled), "-o", str(out)]), "scale_embedding false",
                   "feed-forward sizes")
    short_vocab = tmp_path / "short_vocab"
    shutil.copytree(marian_dir, short_vocab)
    vocab = json.loads((short_vocab / "vocab.json").read_text())
    dropped = spm.SentencePieceProcessor(model_file=str(short_vocab / "source.spm")).id_to_piece(3)
    (short_vocab / "vocab.json").write_text(json.dumps({p: i for p, i in vocab.items() if p != dropped}))
    one_line_error(runner.invoke(app, ["import", str(short_vocab), "-o", str(out)]), "lacks 1 pieces", "<unk>")
    assert not out.exists() and not list(tmp_path.glob(".out.pt*"))


def test_the_documented_import_commands_run_as_printed(marian_dir, tmp_path, monkeypatch):
    """"Share and reuse models": import, translate, fine-tune with the written recipe, export."""
    import shlex
    import shutil

    import yaml

    from tests.cli.test_readme import readme_blocks

    block = readme_blocks("In short", "docs/huggingface.md")[0]  # the OPUS-MT one (the NLLB one: test_import_m2m100.py)
    shutil.copytree(marian_dir, tmp_path / "opus-mt-en-de")
    corpus = tmp_path / "my_corpus"
    corpus.mkdir()
    for lang in ("en", "de"):
        shutil.copy(TINY_DATA / f"train.{lang}", corpus / f"train.{lang}")
        for split in ("dev", "test"):
            shutil.copy(TINY_DATA / f"valid.{lang}", corpus / f"{split}.{lang}")
    monkeypatch.chdir(tmp_path)
    for command in block:
        args = shlex.split(command)
        assert args[0] == "nmt"
        result = runner.invoke(app, args[1:])
        assert result.exit_code == 0, f"{command}\n{result.output}"
        if args[1] == "import":  # the written recipe, shrunk to a few updates on the tiny corpus
            recipe = yaml.safe_load((tmp_path / "opus_en_de.yaml").read_text(encoding="utf-8"))
            assert recipe["train"]["init_from"] == "opus_en_de.pt" and recipe["data"]["train"] == "my_corpus/train"
            recipe["train"].update(max_steps=10, valid_every=10, valid_bleu_sentences=4, max_tokens=512, warmup_steps=5)
            (tmp_path / "opus_en_de.yaml").write_text(yaml.safe_dump(recipe), encoding="utf-8")
    assert len((tmp_path / "opus.de").read_text(encoding="utf-8").splitlines()) == len(
        (corpus / "test.en").read_text(encoding="utf-8").splitlines())
    assert (tmp_path / "opus_en_de_tuned" / "config.json").is_file()


def test_the_imports_collection_frees_its_own_cycles_and_leaves_the_heap_as_it_was():
    """Inside collecting_new_objects_only, gc.collect() frees a reference cycle made inside, while
    every older object waits frozen; after it nothing is frozen, and a heap the process had frozen
    itself stays frozen."""
    import gc
    import weakref

    from nmt.export.huggingface_import import collecting_new_objects_only

    class Node:
        pass

    frozen_by_the_process = gc.get_freeze_count()  # torch's objects, frozen at its import (nmt.startup)
    gc.unfreeze()
    with collecting_new_objects_only():
        assert gc.get_freeze_count() > 0  # the older objects
        new = Node()
        new.itself = new
        alive = weakref.ref(new)
        del new
        gc.collect()
        assert alive() is None
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collecting_new_objects_only():
            gc.collect()
        # still frozen, and nothing more: frozen objects freed by their reference counts meanwhile
        # (another thread's, say) leave the count a few lower, never higher
        assert 0 < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
        if frozen_by_the_process:  # as this process had it
            gc.collect()
            gc.freeze()
