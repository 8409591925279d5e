"""`nmt import` of M2M100ForConditionalGeneration directories (NLLB-200's and M2M-100's layouts).

Each model is built here, small and random, from an M2M100Config and saved with `save_pretrained`
beside its tokenizer and sentencepiece model, as the hub directories hold them (no network):
NLLB's layout (fairseq's offset of 1, codes such as deu_Latn after the pieces) and M2M-100's
(vocab.json, codes written __de__). The import computes transformers' logits, tokenizes as the
model's tokenizer does, translates as `generate` with the forced language token does (greedy
and beam, into two languages), and so does its CTranslate2 export; a few fine-tuning updates
lower its loss; bad directories and language codes are one-line errors that write nothing."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
import sentencepiece as spm
import torch
from typer.testing import CliRunner

from nmt.cli import app
from nmt.config import language_token
from nmt.data.tokenizer import output_text
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import translate, translate_lines
from nmt.special_tokens import EOS
from tests.conftest import TINY_DATA, one_line_error, optional_module

transformers, pytestmark = optional_module("transformers")
runner = CliRunner()
LINES = [line.rstrip("\n") for line in open(TINY_DATA / "valid.en", encoding="utf-8")][:8] + ["A dog runs on the beach."]
# layout: (source code, two target codes, how the tokenizer writes a code)
LAYOUTS = {"nllb": ("eng_Latn", ("deu_Latn", "fra_Latn"), "{}"), "m2m": ("en", ("de", "fr"), "__{}__")}


def _tokenizer(directory, layout: str):
    if layout == "nllb":
        return transformers.NllbTokenizer.from_pretrained(directory, src_lang="eng_Latn", tgt_lang="deu_Latn",
                                                          extra_special_tokens=["eng_Latn", "deu_Latn", "fra_Latn"])
    sp = spm.SentencePieceProcessor(model_file=str(directory / "sentencepiece.bpe.model"))
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for i in range(3, sp.get_piece_size()):  # the pieces after <unk>, <s>, </s>
        vocab[sp.id_to_piece(i)] = len(vocab)
    (directory / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    return transformers.M2M100Tokenizer(vocab_file=str(directory / "vocab.json"),
                                        spm_file=str(directory / "sentencepiece.bpe.model"), src_lang="en", tgt_lang="de")


@pytest.fixture(scope="module", params=list(LAYOUTS))
def m2m_dir(request, tmp_path_factory):
    return request.param, build_directory(tmp_path_factory.mktemp(request.param), request.param)


def build_directory(root, layout: str, positions: int = 128):
    """A small random model in `layout` with `positions` positions, saved as the hub's directories are: root/layout."""
    directory = root / layout
    directory.mkdir()
    text = [line for name in ("train.en", "train.de") for line in (TINY_DATA / name).read_text(encoding="utf-8").splitlines()]
    spm.SentencePieceTrainer.train(sentence_iterator=iter(text), model_prefix=str(root / "sp"), vocab_size=180,
                                   model_type="bpe", unk_id=0, bos_id=1, eos_id=2, pad_id=-1, minloglevel=2)
    shutil.copy(root / "sp.model", directory / "sentencepiece.bpe.model")
    tokenizer = _tokenizer(directory, layout)
    rows = max(tokenizer.convert_tokens_to_ids(t) for t in tokenizer.get_vocab()) + 1
    if layout == "m2m":
        rows = max(tokenizer.lang_code_to_id.values()) + 1 + 8  # and M2M-100's eight "madeupword" rows
    config = transformers.M2M100Config(
        vocab_size=rows + 2, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=positions,
        scale_embedding=True, pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)
    torch.manual_seed(0)
    model = transformers.M2M100ForConditionalGeneration(config).eval()
    with torch.no_grad():
        for p in model.parameters():  # logits spread as a trained model's are, not all near 0
            if p.dim() == 2 and p is not model.model.shared.weight:
                p.mul_(5.0)
        # As in a trained model, the logits of <s> and the padding token (which nmt never
        # predicts) lie far below the rest: the final LayerNorm's bias is all ones (its
        # normalized output sums to 0), their rows all -1.
        model.model.decoder.layer_norm.bias.fill_(1.0)
        model.model.shared.weight[[0, 1]] = -1.0
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def imported(m2m_dir, tmp_path_factory):
    layout, directory = m2m_dir
    out = tmp_path_factory.mktemp("imported")
    ckpt = out / f"{layout}.pt"
    result = runner.invoke(app, ["import", str(directory), "-o", str(ckpt), "--recipe", str(out / "finetune.yaml")])
    assert result.exit_code == 0, result.output
    assert "M2M100ForConditionalGeneration" in result.output and "logits within" in result.output
    return layout, directory, ckpt


def assert_same_jsonl(found: list[dict], expected: list[dict]) -> None:
    """jsonl records alike: every field the same but the hypotheses' scores, within 1e-3."""
    assert len(found) == len(expected)
    for a, b in zip(found, expected):
        assert {k: v for k, v in a.items() if k != "hypotheses"} == {k: v for k, v in b.items() if k != "hypotheses"}
        assert len(a["hypotheses"]) == len(b["hypotheses"])
        for ha, hb in zip(a["hypotheses"], b["hypotheses"]):
            scores = ("score", "log_prob")
            assert {k: v for k, v in ha.items() if k not in scores} == {k: v for k, v in hb.items() if k not in scores}
            assert all(abs(ha[k] - hb[k]) <= 1e-3 for k in scores if k in ha)


def _hf_ids(own, tokenizer, code_form: str, ids: list[int]) -> list[int]:
    """nmt token ids as the directory's tokenizer's ids (language tokens back to its codes)."""
    out = []
    for piece in (own.tgt_tokenizer.id_to_piece(i) for i in ids):
        if piece.startswith("<2") and piece.endswith(">"):
            piece = code_form.format(piece[2:-1])
        if piece.startswith("<unused:"):
            out.append(int(piece[8:-1]))
        else:
            out.append(tokenizer.convert_tokens_to_ids(piece))
    return out


def test_the_import_reads_the_languages_tokens_and_logits(imported):
    layout, directory, ckpt = imported
    src, targets, code_form = LAYOUTS[layout]
    own = load_engine([ckpt], src_lang=src, tgt_lang=targets[1])
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    tokenizer.src_lang = src
    hf = transformers.AutoModelForSeq2SeqLM.from_pretrained(directory).eval()
    data, model_cfg = own.recipe.data, own.recipe.model
    assert data.language_token == "both" and set(targets) | {src} <= set(data.languages)
    assert model_cfg.positions == "fairseq" and model_cfg.norm == "pre" and model_cfg.share_embeddings
    assert model_cfg.decoder_start == "eos" and own.tgt_tokenizer.get_piece_size() == hf.config.vocab_size
    forced = tokenizer.convert_tokens_to_ids(code_form.format(targets[1]))
    for line in LINES:
        source = [*own.controls.source, *own.src_tokenizer.encode([line])[0], EOS]
        assert _hf_ids(own, tokenizer, code_form, source) == tokenizer([line])["input_ids"][0]
        target = [own.model.start_token, *own.controls.target, *own.tgt_tokenizer.encode([line])[0][:5]]
        with torch.no_grad():
            ours = own.model(torch.tensor([source]), torch.tensor([target]))[0]
            theirs = hf(input_ids=torch.tensor([tokenizer([line])["input_ids"][0]]),
                        decoder_input_ids=torch.tensor([[2, forced, *_hf_ids(own, tokenizer, code_form, target[2:])]])).logits[0]
        columns = _hf_ids(own, tokenizer, code_form, list(range(4, ours.size(-1))))
        assert torch.allclose(ours[:, 4:], theirs[:, columns], atol=1e-4)
    result = runner.invoke(app, ["info", str(ckpt)])
    assert result.exit_code == 0 and f"languages    {len(data.languages)}, any direction" in result.output
    assert language_token(data.languages[0]) in result.output
    refused = runner.invoke(app, ["translate", "-c", str(ckpt), "--tgt-lang", "zz", "-i", str(TINY_DATA / "valid.en")])
    one_line_error(refused, "--tgt-lang zz", data.languages[0])
    assert len(refused.output) < 300  # a hundred codes are not all listed


@pytest.mark.parametrize("beam_size", [1, 4])
def test_the_import_and_its_ctranslate2_export_translate_as_generate_does(imported, tmp_path, beam_size):
    layout, directory, ckpt = imported
    src, targets, code_form = LAYOUTS[layout]
    hf = transformers.AutoModelForSeq2SeqLM.from_pretrained(directory).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    tokenizer.src_lang = src
    pytest.importorskip("ctranslate2")
    exported = tmp_path / "ct2"
    assert runner.invoke(app, ["export", str(ckpt), "-o", str(exported)]).exit_code == 0
    outputs = {}
    for tgt in targets:
        own = load_engine([ckpt], src_lang=src, tgt_lang=tgt)
        cfg = own.recipe.decode.model_copy(update={"beam_size": beam_size, "length_penalty": 1.0, "patience": 1.0,
                                                   "no_repeat_ngram_size": 0, "max_len_a": 0.0, "max_len_b": 30})
        ours = translate_lines(own, LINES, cfg)
        forced = tokenizer.convert_tokens_to_ids(code_form.format(tgt))
        for line, hyps in zip(LINES, ours):
            generated = hf.generate(**tokenizer([line], return_tensors="pt"), num_beams=beam_size, do_sample=False,
                                    forced_bos_token_id=forced, max_length=31, length_penalty=1.0,
                                    early_stopping=True)[0].tolist()
            assert generated[:2] == [2, forced]
            assert [t for t in generated[2:] if t not in (1, 2)] == _hf_ids(own, tokenizer, code_form, hyps[0].tokens)
        ct2 = [h[0] for h in translate_lines(load_engine([exported], src_lang=src, tgt_lang=tgt), LINES, cfg)]
        assert [h.tokens for h in ct2] == [h[0].tokens for h in ours]
        assert max(abs(a.log_prob - b[0].log_prob) for a, b in zip(ct2, ours)) < 1e-3
        outputs[tgt] = [(h[0].tokens, h[0].log_prob) for h in ours]
    assert outputs[targets[0]] != outputs[targets[1]]  # the forced token enters the decoder


def test_the_onnx_export_translates_each_direction_as_nmt_does(imported, tmp_path):
    """The source's language token in front of the source, the target's fed to the decoder after
    its start token (EOS here): the translator on onnxruntime translates as nmt does, greedy and in
    beams (the forced token a prefix of every beam search), and so does the export as nmt translate's engine."""
    if importlib.util.find_spec("onnxruntime") is None:
        pytest.skip("onnxruntime (extra onnx, in dev) is not installed")
    from nmt.decode.onnx_translator import OnnxTranslator

    layout, _, ckpt = imported
    src, targets, _ = LAYOUTS[layout]
    assert runner.invoke(app, ["export", str(ckpt), "-o", str(tmp_path / "onnx"), "--format", "onnx"]).exit_code == 0
    for tgt in targets:
        own = load_engine([ckpt], src_lang=src, tgt_lang=tgt)
        translator = OnnxTranslator(tmp_path / "onnx", src_lang=src, tgt_lang=tgt)
        for beams in (1, 3):
            cfg = own.recipe.decode.model_copy(update={"beam_size": beams, "split_sentences": False,
                                                       "normalize_case": False, "copy_verbatim": False, "max_len_b": 30})
            expected = [output_text(own.tgt_tokenizer, h[0].tokens) for h in translate_lines(own, LINES, cfg)]
            translator.settings = translator.settings.model_copy(update={"max_len_b": 30})  # random weights rarely end
            assert translator.translate(LINES, beam_size=beams) == expected and all(expected)
        # nmt translate's engine over the export: the direction's tokens put in as for the checkpoint
        exported = load_engine([tmp_path / "onnx"], src_lang=src, tgt_lang=tgt)
        assert [output_text(own.tgt_tokenizer, h[0].tokens) for h in translate_lines(exported, LINES, cfg)] == expected


def fine_tune_tiny(ckpt, tmp_path, src: str, tgt: str):
    """The recipe `nmt import --recipe` wrote beside `ckpt`, fine-tuned 15 updates on the tiny
    English-German pairs under the codes src and tgt: (the fine-tuned checkpoint, a function
    giving a checkpoint's summed log-likelihood of those pairs)."""
    import yaml

    from nmt.config import load_recipe
    from nmt.data.prepare import prepare
    from nmt.data.tokenizer import train_tokenizer
    from nmt.train.trainer import train

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, lang in (("en", src), ("de", tgt)):  # the tiny English-German pairs under the model's codes
        for split, source in (("train", "train"), ("dev", "valid")):
            shutil.copy(TINY_DATA / f"{source}.{name}", corpus / f"{split}.{lang}")
    written = yaml.safe_load((ckpt.parent / "finetune.yaml").read_text())
    written["data"].update(train=str(corpus / "train"), valid=str(corpus / "dev"), test=None, src_lang=src, tgt_lang=tgt)
    written["train"].update(max_steps=15, warmup_steps=3, lr=0.001, valid_every=15, max_minutes=0)
    written["output_dir"] = str(tmp_path / "run")
    path = tmp_path / "finetune.yaml"
    path.write_text(yaml.safe_dump(written))
    recipe = load_recipe(path)
    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out, recipe.train.init_from)  # the import's, copied
    prepare(recipe.data, recipe.tokenizer, recipe.out)
    train(recipe, show_progress=False)

    def log_likelihood(checkpoint) -> float:
        out = tmp_path / "scores.txt"
        result = runner.invoke(app, ["likelihood", "-c", str(checkpoint), "--source", str(corpus / f"train.{src}"),
                                     "--target", str(corpus / f"train.{tgt}"), "-o", str(out)])
        assert result.exit_code == 0, result.output
        return sum(float(x) for x in out.read_text().split())

    return recipe.out / "checkpoints" / "last.pt", log_likelihood


def test_fine_tuning_with_the_written_recipe_lowers_the_loss(imported, tmp_path):
    layout, _, ckpt = imported
    src, (tgt, _), code_form = LAYOUTS[layout]
    tuned, log_likelihood = fine_tune_tiny(ckpt, tmp_path, src, tgt)
    assert log_likelihood(tuned) > log_likelihood(ckpt) + 1.0

    # the fine-tuned model exports to transformers too, and translates there as in nmt
    out = tmp_path / "tuned_hf"
    result = runner.invoke(app, ["export", str(tuned), "-o", str(out), "--format", "huggingface"])
    assert result.exit_code == 0, result.output
    hf = transformers.AutoModelForSeq2SeqLM.from_pretrained(out).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    own = load_engine([tuned])
    cfg = own.recipe.decode.model_copy(update={"beam_size": 1, "max_len_a": 0.0, "max_len_b": 30})
    ours = translate_lines(own, LINES, cfg)
    theirs = hf.generate(**tokenizer(LINES[:1], return_tensors="pt"), num_beams=1, do_sample=False, max_length=31)[0]
    assert theirs.tolist()[1] == hf.generation_config.forced_bos_token_id  # the recipe's target by default
    for line, hyps in zip(LINES, ours):
        generated = hf.generate(**tokenizer([line], return_tensors="pt"), num_beams=1, do_sample=False, max_length=31)
        assert [t for t in generated[0, 2:].tolist() if t not in (1, 2)] == _hf_ids(own, tokenizer, code_form, hyps[0].tokens)


def test_a_directory_stored_in_bf16_imports_its_weights_exactly(imported, tmp_path):
    """transformers 5 loads a directory in the precision it is stored in: the import reads it in
    fp32, as nmt holds it, so that its logits check compares alike (a bf16 model's own logits
    differ from the same weights' in fp32 by more than the check allows)."""
    from nmt.checkpoint import load_checkpoint

    layout, directory, ckpt = imported
    stored = tmp_path / "bf16"
    transformers.AutoModelForSeq2SeqLM.from_pretrained(directory).to(torch.bfloat16).save_pretrained(stored)
    for name in directory.iterdir():
        if not name.name.startswith(("model", "config")):
            shutil.copy(name, stored / name.name)
    out = tmp_path / "bf16.pt"
    result = runner.invoke(app, ["import", str(stored), "-o", str(out)])
    assert result.exit_code == 0, result.output
    full, half = (load_checkpoint(path)["model"] for path in (ckpt, out))
    assert full.keys() == half.keys()
    for name, weight in half.items():
        assert weight.dtype == torch.float32 and torch.equal(weight, full[name].bfloat16().float()), name


def test_bad_directories_and_codes_are_one_line_errors_that_write_nothing(m2m_dir, tmp_path):
    layout, directory = m2m_dir
    out = tmp_path / "out.pt"
    one_line_error(runner.invoke(app, ["import", str(directory), "-o", str(out), "--tgt-lang", "xx_Zzzz"]),
                   "--tgt-lang xx_Zzzz", "not a language of")
    no_spm = tmp_path / "no_spm"
    shutil.copytree(directory, no_spm)
    (no_spm / "sentencepiece.bpe.model").unlink()
    one_line_error(runner.invoke(app, ["import", str(no_spm), "-o", str(out)]), "sentencepiece.bpe.model: missing")
    t5 = tmp_path / "t5"
    shutil.copytree(directory, t5)
    config = json.loads((t5 / "config.json").read_text())
    (t5 / "config.json").write_text(json.dumps(config | {"model_type": "t5"}))
    one_line_error(runner.invoke(app, ["import", str(t5), "-o", str(out)]), "no spiece.model or sentencepiece.model")
    (t5 / "config.json").write_text(json.dumps(config | {"model_type": "mt5"}))
    one_line_error(runner.invoke(app, ["import", str(t5), "-o", str(out)]), "mt5", "language tokens")
    (t5 / "config.json").write_text(json.dumps(config | {"model_type": "mbart"}))  # mBART with this layout's tokenizer
    one_line_error(runner.invoke(app, ["import", str(t5), "-o", str(out)]), "an mBART model with a",
                   "MBart50Tokenizer")
    shifted = tmp_path / "pad0"
    shutil.copytree(directory, shifted)
    (shifted / "config.json").write_text(json.dumps(config | {"pad_token_id": 0}))
    one_line_error(runner.invoke(app, ["import", str(shifted), "-o", str(out)]), "pad_token_id 0")
    assert not out.exists() and not list(tmp_path.glob(".out.pt*"))


def _generate(model, tokenizer, lines, tgt_code, beams):
    forced = tokenizer.convert_tokens_to_ids(tgt_code)
    return [model.generate(**tokenizer([line], return_tensors="pt"), num_beams=beams, do_sample=False,
                           forced_bos_token_id=forced, max_length=31, length_penalty=1.0, early_stopping=True)[0].tolist()
            for line in lines]


def exported_back(ckpt, directory, out, src_lang: str):
    """`nmt export --format huggingface` of `ckpt` into `out`: (the original directory's model, the
    exported one, their tokenizers, the original's set to translate from src_lang)."""
    result = runner.invoke(app, ["export", str(ckpt), "-o", str(out), "--format", "huggingface"])
    assert result.exit_code == 0, result.output
    original, back = (transformers.AutoModelForSeq2SeqLM.from_pretrained(d).eval() for d in (directory, out))
    tokenizers = [transformers.AutoTokenizer.from_pretrained(d) for d in (directory, out)]
    tokenizers[0].src_lang = src_lang
    return original, back, tokenizers


def test_the_import_exports_back_to_transformers_translating_alike(imported, tmp_path):
    from nmt.checkpoint import load_checkpoint, save_checkpoint

    layout, directory, ckpt = imported
    src, (tgt, _), code_form = LAYOUTS[layout]
    out = tmp_path / "back"
    original, back, tokenizers = exported_back(ckpt, directory, out, src)
    assert type(back).__name__ == "M2M100ForConditionalGeneration"
    assert back.generation_config.forced_bos_token_id is not None
    assert f"(imported from `{directory}`)" in (out / "README.md").read_text(encoding="utf-8")  # no "update None"
    assert tokenizers[1].src_lang == code_form.format(src) or tokenizers[1].src_lang == src
    for beams in (1, 4):
        assert _generate(back, tokenizers[1], LINES, code_form.format(tgt), beams) == \
            _generate(original, tokenizers[0], LINES, code_form.format(tgt), beams)
    # a checkpoint without the imported tokenizer cannot say how transformers would read it
    payload = load_checkpoint(ckpt)
    del payload["tokenizer"]["transformers"]
    save_checkpoint(payload, tmp_path / "bare.pt")
    one_line_error(runner.invoke(app, ["export", str(tmp_path / "bare.pt"), "-o", str(tmp_path / "hf"),
                                       "--format", "huggingface"]), "model.positions fairseq", "CTranslate2")
    assert not (tmp_path / "hf").exists()


def test_the_documented_nllb_commands_run_as_printed(tmp_path, monkeypatch):
    """"Share and reuse models": import an NLLB directory, translate into another of its languages."""
    import shlex

    from tests.cli.test_readme import readme_blocks

    block = readme_blocks("In short", "docs/huggingface.md")[1]
    (build_directory(tmp_path, "nllb")).rename(tmp_path / "nllb-600M")
    (tmp_path / "my_corpus").mkdir()
    shutil.copy(TINY_DATA / "valid.en", tmp_path / "my_corpus" / "test.eng_Latn")
    monkeypatch.chdir(tmp_path)
    for command in block:
        args = shlex.split(command)
        assert args[0] == "nmt"
        result = runner.invoke(app, args[1:])
        assert result.exit_code == 0, f"{command}\n{result.output}"
    lines = (TINY_DATA / "valid.en").read_text(encoding="utf-8").splitlines()
    assert len((tmp_path / "test.fra_Latn").read_text(encoding="utf-8").splitlines()) == len(lines)
    assert (tmp_path / "nllb.yaml").is_file()


def test_src_lang_auto_reads_each_line_with_its_own_languages_token(imported, tmp_path):
    """--src-lang auto: each line of a file of English and German lines is translated as it is
    with its language named (the token of its source in front), and jsonl says which was found."""
    layout, _, ckpt = imported
    english, (german, french), code_form = LAYOUTS[layout]
    lines = [line.rstrip("\n") for line in open(TINY_DATA / "valid.de", encoding="utf-8")][:3] + LINES[:3]
    languages = [german] * 3 + [english] * 3
    source = tmp_path / "mixed.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def translated(*options: str, model: Path = ckpt) -> list[dict]:
        out = tmp_path / "out.jsonl"
        result = runner.invoke(app, ["translate", "-c", str(model), "-i", str(source), "-o", str(out),
                                     "--tgt-lang", french, "--output-format", "jsonl", *options])
        assert result.exit_code == 0, result.output
        return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]

    named = {lang: translated("--src-lang", lang) for lang in (english, german)}
    # the source token changes the translation's score: a wrong one would show
    assert all(a != b for a, b in zip(named[english], named[german]))
    found = translated("--src-lang", "auto")
    assert [r["src_lang"] for r in found] == languages
    assert [r["hypotheses"] for r in found] == [named[lang][i]["hypotheses"] for i, lang in enumerate(languages)]
    # over two processes (one layout: the sharing does not depend on it): the same lines, and the
    # languages found counted on stderr; LibreTranslate's source auto through nmt serve, as
    # LibreTranslate answers it: each text over 40 characters from its own language, a shorter one
    # from the whole request's, detectedLanguage one per text
    if layout == "nllb":
        from fastapi.testclient import TestClient

        from nmt.serve.app import create_app
        from nmt.serve.models import load_served

        with TestClient(create_app(load_served([ckpt]))) as server:
            texts = ["\n".join(lines[0:2]), "\n".join(lines[3:5]), "Ein Hund."]
            answer = server.post("/translate", json={"q": texts, "source": "auto", "target": french})
            assert answer.status_code == 200, answer.text
            answer = answer.json()
            detected = [d["language"] for d in answer["detectedLanguage"]]
            assert detected[:2] == [german, english] and detected[2] in (german, english)
            assert answer["translatedText"][:2] == [
                "\n".join(named[german][i]["hypotheses"][0]["text"] for i in (0, 1)),
                "\n".join(named[english][i]["hypotheses"][0]["text"] for i in (3, 4))]
            own = server.post("/translate", json={"text": ["Ein Hund."], "src_lang": detected[2], "tgt_lang": french})
            assert own.status_code == 200 and answer["translatedText"][2] == own.json()["translations"][0]
        out = tmp_path / "sharded.jsonl"
        result = runner.invoke(app, ["translate", "-c", str(ckpt), "-i", str(source), "-o", str(out), "--tgt-lang",
                                     french, "--output-format", "jsonl", "--src-lang", "auto", "--nproc", "2"])
        assert result.exit_code == 0 and f"--src-lang auto: {german} 3 lines, {english} 3 lines" in result.output
        # the same texts and tokens; a line's scores move by up to 1.5e-5 with the lines batched
        # beside it (docs/serving.md), enough to change a printed last digit
        assert_same_jsonl([json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()], found)
    if importlib.util.find_spec("ctranslate2"):  # an export carries the tokens: CTranslate2 reads them alike
        assert runner.invoke(app, ["export", str(ckpt), "-o", str(tmp_path / "ct2")]).exit_code == 0
        exported = translated("--src-lang", "auto", model=tmp_path / "ct2")
        assert [r["src_lang"] for r in exported] == languages
        for ct2, own in zip(exported, found):
            assert ct2["hypotheses"][0]["tokens"] == own["hypotheses"][0]["tokens"]
            assert abs(ct2["hypotheses"][0]["log_prob"] - own["hypotheses"][0]["log_prob"]) < 1e-3
    # a jsonl line names its own source, or asks for it to be found; one the model lacks is that line's error
    # (and a Spanish line, which the model does not read, is said to be so)
    asked = [german, "auto", None, "auto", english, "xx_Latn", "auto", "auto"]
    spanish = ["El perro negro corre por la playa con su dueño.", "Dos niños juegan en el parque."]
    source.write_text("".join(json.dumps({"text": line} | ({"src_lang": lang} if lang else {})) + "\n"
                              for line, lang in zip(lines + spanish, asked)), encoding="utf-8")
    out = tmp_path / "requests.jsonl"
    result = runner.invoke(app, ["translate", "-c", str(ckpt), "-i", str(source), "-o", str(out), "--tgt-lang", french,
                                 "--input-format", "jsonl", "--output-format", "jsonl"])
    assert result.exit_code == 1 and "line 6: src_lang xx_Latn: " in result.output
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # (the tiny vocabulary lacks "ñ": "dueño" and "niños" are copied, and said to be, apart)
    said_of_languages = [line for line in result.output.splitlines() if "by the language identifier" in line]
    if layout == "m2m":  # M2M-100's tokenizer names its 100 languages, Spanish among them
        assert [r["src_lang"] for r in records[6:]] == ["es", "es"] and said_of_languages == []
    else:  # this NLLB directory names three
        assert "line 7: 88% es by the language identifier, which the model does not translate from into" in result.output
        assert not any("line 8:" in line for line in said_of_languages)  # said once for the language
    assert [r.get("src_lang") for r in records[:5]] == [None, german, None, english, None] and "error" in records[5]
    expected = [german, german, english, english, english]  # the third: the run's source, English
    # batched beside other lines than before: the same tokens, scores within assert_same_jsonl's tolerance
    assert_same_jsonl([{"hypotheses": r["hypotheses"]} for r in records[:5]],
                      [{"hypotheses": named[lang][i]["hypotheses"]} for i, lang in enumerate(expected)])
    # nmt serve's "src_lang": "auto": each line of the request with its own language's token
    from nmt.serve.app import ServeLimits, TranslateRequest, plan_request, records_of, reply

    translator = load_engine([ckpt], tgt_lang=french)
    plan = plan_request(TranslateRequest(text=lines, src_lang="auto", tgt_lang=french), translator, ServeLimits())
    assert plan.sources == languages and [line.controls.languages for line in plan.lines] == [(lang, french) for lang in languages]
    assert len({line.controls.source for line in plan.lines}) == 2
    answer = reply(TranslateRequest(text=lines), records_of(translate(translator, plan.lines, plan.cfg), translator),
                   plan.sources)
    assert answer["src_lang"] == languages
    assert answer["translations"] == [named[lang][i]["hypotheses"][0]["text"] for i, lang in enumerate(languages)]


def test_one_multilingual_model_filters_a_corpus_both_ways(imported, tmp_path):
    """`nmt filter` with an imported NLLB / M2M-100 model as its own reverse model: each side's
    cross-entropy is what `nmt likelihood` finds in that direction (the language tokens swapped)."""
    layout, _, ckpt = imported
    src, (tgt, _), _ = LAYOUTS[layout]
    source, target = TINY_DATA / "valid.en", TINY_DATA / "valid.de"
    scores = tmp_path / "scores.jsonl"
    result = runner.invoke(app, ["filter", "-c", str(ckpt), "--reverse-model", str(ckpt), "--src-lang", src,
                                 "--tgt-lang", tgt, "--source", str(source), "--target", str(target),
                                 "-o", str(tmp_path / "kept"), "--drop-worst", "0.25", "--scores", str(scores)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / f"kept.{src}").is_file() and len((tmp_path / f"kept.{tgt}").read_text().splitlines()) == 6

    def cross_entropies(lang_from: str, lang_to: str, given_from, given_to) -> list[float]:
        out = tmp_path / f"{lang_from}-{lang_to}.jsonl"
        done = runner.invoke(app, ["likelihood", "-c", str(ckpt), "--src-lang", lang_from, "--tgt-lang", lang_to,
                                   "--source", str(given_from), "--target", str(given_to), "-o", str(out),
                                   "--output-format", "jsonl"])
        assert done.exit_code == 0, done.output
        return [-json.loads(line)["log_prob_per_token"] for line in out.read_text().splitlines()]

    rows = [json.loads(line) for line in scores.read_text().splitlines()]
    forward, reverse = cross_entropies(src, tgt, source, target), cross_entropies(tgt, src, target, source)
    assert forward != reverse
    for row, f, r in zip(rows, forward, reverse, strict=True):
        assert row["forward"] == pytest.approx(f, abs=2e-4) and row["reverse"] == pytest.approx(r, abs=2e-4)
