"""Several corpora and languages: corpus sampling by weight and temperature, tags and language
tokens put in front of the source exactly once, a multilingual toy model that follows --tgt-lang
(in both engines), per-direction validation, directions known to the checkpoint, and a recipe
with one corpus training exactly as before."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from nmt.cli import app
from nmt.config import language_token
from nmt.data.prepare import data_dir, prepare
from nmt.data.sampling import corpus_shares, epoch_counts, epoch_selection
from nmt.data.shards import ParallelShards
from nmt.data.tokenizer import load_processor, tokenizer_paths, train_tokenizer
from tests.conftest import (MARKERS, TINY_DATA, assert_answers_in_each_language, multilingual_recipe, one_line_error,
                            tiny_recipe, trained_once)

runner = CliRunner()


# --- sampling --------------------------------------------------------------------------------

def test_corpus_shares_follow_weight_and_temperature_by_hand():
    assert epoch_counts([100, 300], [1, 1], 1.0) == [100, 300]  # every pair once
    assert epoch_counts([100, 300], [2, 1], 1.0) == [160, 240]  # 200 : 300 of N = 400
    # T = 2: shares ∝ sqrt(n): 10 : 17.32 -> 0.366 : 0.634 of 400
    assert epoch_counts([100, 300], [1, 1], 2.0) == [146, 254]
    assert np.allclose(corpus_shares([100, 300], [1, 1], 1e9), [0.5, 0.5])  # T -> infinity: uniform
    assert epoch_counts([0, 50], [3, 1], 1.0) == [0, 50]


def test_an_epoch_draws_each_corpus_as_counted_and_repeats_whole_passes():
    sizes, weights = [10, 40, 25], [5.0, 1.0, 0.5]
    counts = epoch_counts(sizes, weights, 1.0)
    seen = np.zeros(sum(sizes), dtype=int)
    for epoch in range(3):
        selection = epoch_selection(sizes, weights, 1.0, seed=1, epoch=epoch)
        starts = np.cumsum([0, *sizes])
        for c, count in enumerate(counts):
            inside = selection[(selection >= starts[c]) & (selection < starts[c + 1])]
            assert len(inside) == count
            whole, rest = divmod(count, sizes[c])
            assert np.bincount(inside - starts[c], minlength=sizes[c]).min() >= whole  # every pair of each pass
            assert np.bincount(inside - starts[c], minlength=sizes[c]).max() <= whole + (rest > 0)
        seen += np.bincount(selection, minlength=sum(sizes))
        assert np.array_equal(selection, epoch_selection(sizes, weights, 1.0, seed=1, epoch=epoch))  # reproducible
    assert epoch_selection([10, 40], [1, 1], 1.0, 1, 0) is None  # every pair once: the plain epoch
    assert seen[10:50].min() >= 1 and seen[50:].max() <= 3  # down-sampled corpus: some pairs, never more


# --- a toy multilingual model (the toy corpus: tests/conftest.py) -----------------------------

@pytest.fixture(scope="module")
def multilingual(toy_corpus, tmp_path_factory):
    return trained_once(tmp_path_factory, "train.max_steps=240", "train.valid_every=120", "train.valid_bleu_sentences=8",
                        toy_corpus=toy_corpus)


def test_language_tokens_are_reserved_and_put_in_front_exactly_once(multilingual):
    sp = load_processor(tokenizer_paths(multilingual.out, True)[0])
    tokens = {lang: sp.piece_to_id(language_token(lang)) for lang in MARKERS}
    assert all(sp.id_to_piece(i) == language_token(lang) for lang, i in tokens.items())
    assert set(tokens.values()).isdisjoint(sp.encode("<2xa> <2xb> Alpha Beta"))  # never produced from text
    assert sp.decode([tokens["xa"], *sp.encode("A dog")]) == "A dog"  # and dropped from output text
    train = ParallelShards(data_dir(multilingual.out), "train")
    half = len(train) // 2  # the xa corpus, then the xb one
    for i in range(len(train)):
        source = train.src[i].tolist()
        assert source[0] == tokens["xa" if i < half else "xb"]
        assert not set(source[1:]) & set(tokens.values())
    for lang in MARKERS:  # one dev set per direction, with its token
        valid = ParallelShards(data_dir(multilingual.out), f"valid.en-{lang}")
        assert all(valid.src[i][0] == tokens[lang] for i in range(len(valid)))


def test_validation_is_per_direction_and_the_checkpoint_knows_its_directions(multilingual):
    records = [json.loads(line) for line in (multilingual.out / "metrics.jsonl").read_text().splitlines()]
    valid = [r for r in records if r["kind"] == "valid"]
    assert valid and all(key in valid[-1] for key in ("bleu_en-xa", "bleu_en-xb", "nll_en-xa", "bleu"))
    assert valid[-1]["bleu"] == pytest.approx((valid[-1]["bleu_en-xa"] + valid[-1]["bleu_en-xb"]) / 2, abs=1e-4)
    result = runner.invoke(app, ["info", str(multilingual.out / "checkpoints" / "best.pt")])
    assert result.exit_code == 0 and "trained: en-xa, en-xb" in result.output and "<2xa> <2xb>" in result.output


@pytest.mark.parametrize("engine", ["torch", "ctranslate2"])
def test_tgt_lang_chooses_the_direction(multilingual, toy_corpus, tmp_path, engine):
    if engine == "ctranslate2":
        pytest.importorskip("ctranslate2")
    ckpt = str(multilingual.out / "checkpoints" / "best.pt")
    model = ckpt
    if engine == "ctranslate2":  # an export carries the tokens: --tgt-lang works on it too
        model = str(tmp_path / "ct2")
        assert runner.invoke(app, ["export", ckpt, "-o", model]).exit_code == 0
    assert_answers_in_each_language(model, toy_corpus, tmp_path)


def test_the_transformers_export_reads_opus_mts_language_codes_in_front_of_a_text(multilingual, toy_corpus, tmp_path):
    """MarianTokenizer takes `>>xb<<` in front of a text as the language token (sentencepiece would
    split nmt's `<2xb>`): the export names the tokens so, and translates as nmt does."""
    transformers = pytest.importorskip("transformers")
    from nmt.decode.engines.engine import load_engine
    from nmt.decode.translate import translate_lines
    from nmt.special_tokens import EOS

    ckpt = multilingual.out / "checkpoints" / "best.pt"
    out = tmp_path / "hf"
    assert runner.invoke(app, ["export", str(ckpt), "-o", str(out), "--format", "huggingface"]).exit_code == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "`>>xa<< ...`" in card and "Transformer trained with nmt" in card and re.search(r"\(update \d+\)", card)
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(out).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    lines = (toy_corpus / "valid.en").read_text(encoding="utf-8").splitlines()[:4]
    for lang in MARKERS:
        engine = load_engine([ckpt], tgt_lang=lang)
        ours = translate_lines(engine, lines, engine.recipe.decode.model_copy(update={"beam_size": 1, "max_len_b": 60}))
        for line, hypotheses in zip(lines, ours):
            batch = tokenizer([f">>{lang}<< {line}"], return_tensors="pt")
            assert batch["input_ids"][0, 0] == engine.src_tokenizer.piece_to_id(language_token(lang))
            generated = model.generate(**batch, num_beams=1, do_sample=False, max_length=200)[0].tolist()
            assert [t for t in generated[1:] if t != EOS] == hypotheses[0].tokens, line


def test_unknown_and_untrained_directions_are_one_line_errors(multilingual, toy_corpus, tmp_path):
    ckpt = str(multilingual.out / "checkpoints" / "best.pt")
    source = str(toy_corpus / "valid.en")
    one_line_error(runner.invoke(app, ["translate", "-c", ckpt, "-i", source, "--tgt-lang", "fr"]),
                   "--tgt-lang fr", "xa, xb")
    one_line_error(runner.invoke(app, ["translate", "-c", ckpt, "-i", source, "--src-lang", "xa", "--tgt-lang", "xb"]),
                   "xa-xb: not a direction", "--zero-shot")
    result = runner.invoke(app, ["translate", "-c", ckpt, "-i", source, "-o", str(tmp_path / "zs"),
                                 "--src-lang", "xa", "--tgt-lang", "xb", "--zero-shot"])
    assert result.exit_code == 0, result.output


def test_a_language_named_by_another_of_its_codes_is_suggested():
    from nmt.config import DataConfig
    from nmt.data.languages import check_direction
    from nmt.errors import NmtError

    data = DataConfig(src_lang="eng_Latn", tgt_lang="deu_Latn", train="t", valid="v", language_token="both",
                      languages=["eng_Latn", "deu_Latn", "zho_Hans", "zho_Hant"])
    for src, tgt, message in ((None, "de", r"--tgt-lang de: did you mean deu_Latn\? the model translates into"),
                              (None, "zh", r"--tgt-lang zh: did you mean zho_Hans or zho_Hant\? the model"),
                              ("en", "deu_Latn", r"--src-lang en: did you mean eng_Latn\? the model reads"),
                              (None, "xx", r"--tgt-lang xx: the model translates into deu_Latn")):
        with pytest.raises(NmtError, match=f"^{message}"):
            check_direction(data, src, tgt, False)


def test_bad_corpora_are_one_line_errors(toy_corpus, tmp_path):
    recipe = tmp_path / "r.yaml"
    base = {"output_dir": str(tmp_path / "run"), "data": {"src_lang": "en", "tgt_lang": "xa",
                                                          "valid": str(toy_corpus / "valid")}}
    cases = [
        ([{"path": str(toy_corpus / "train"), "weight": 0}], "none", "data.train.0.weight"),
        ([{"path": str(toy_corpus / "train"), "tgt_lang": "xb", "tag": "<2xa>"}], "source", "train.0.tag: <2xa>"),
        ([{"path": str(toy_corpus / "train"), "tgt_lang": lang} for lang in MARKERS], "none", "data.language_token: source"),
        ([{"path": str(toy_corpus / "train"), "tag": "BT"}], "none", "angle brackets"),
    ]
    import yaml

    for corpora, token, fragment in cases:
        recipe.write_text(yaml.safe_dump(base | {"data": base["data"] | {"train": corpora, "language_token": token}}))
        one_line_error(runner.invoke(app, ["tokenizer", str(recipe)]), fragment)


def test_a_tag_marks_one_corpus_and_prepare_reports_each(toy_corpus, tmp_path):
    train = [{"path": str(toy_corpus / "train"), "tgt_lang": "xa"},
             {"path": str(toy_corpus / "train"), "tgt_lang": "xa", "tag": "<BT>", "weight": 2}]
    recipe = tiny_recipe(tmp_path, f"data.train={json.dumps(train)}", "data.tgt_lang=xa",
                         f"data.valid={toy_corpus / 'valid'}", "data.test=null", "tokenizer.vocab_size=200",
                         "data.remove_duplicates=false")
    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
    report = prepare(recipe.data, recipe.tokenizer, recipe.out)
    corpora = report["splits"]["train"]["corpora"]
    assert [c["tag"] for c in corpora] == [None, "<BT>"] and corpora[0]["kept"] == corpora[1]["kept"] > 0
    sp = load_processor(tokenizer_paths(recipe.out, True)[0])
    tag = sp.piece_to_id("<BT>")
    data = ParallelShards(data_dir(recipe.out), "train")
    n = corpora[0]["kept"]
    assert all(tag not in data.src[i].tolist() for i in range(n))
    assert all(data.src[i][0] == tag and tag not in data.src[i][1:].tolist() for i in range(n, 2 * n))
    assert ParallelShards(data_dir(recipe.out), "valid").src[0][0] != tag  # genuine dev data: no tag


def test_one_corpus_as_a_list_trains_bit_identically_to_the_plain_recipe(tmp_path):
    from nmt.train.trainer import train

    weights = []
    for name, train_spec in (("plain", str(TINY_DATA / "train")), ("list", json.dumps([{"path": str(TINY_DATA / "train")}]))):
        recipe = tiny_recipe(tmp_path / name, f"data.train={train_spec}", "train.max_steps=40", "train.valid_every=40")
        train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
        prepare(recipe.data, recipe.tokenizer, recipe.out)
        train(recipe, show_progress=False)
        weights.append(torch.load(recipe.out / "checkpoints" / "last.pt", weights_only=True)["model"])
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


def test_a_jsonl_line_names_its_own_target_language(multilingual, toy_corpus, tmp_path):
    """`nmt translate --input-format jsonl`: a line's tgt_lang asks for its language, a line
    without one gets the run's --tgt-lang, and a language the model lacks is that line's error."""
    lines = (toy_corpus / "train.en").read_text(encoding="utf-8").splitlines()[:4]
    requests = tmp_path / "in.jsonl"
    targets = ["xa", "xb", None, "fr"]
    requests.write_text("".join(json.dumps({"text": line} | ({"tgt_lang": lang} if lang else {})) + "\n"
                                for line, lang in zip(lines, targets)), encoding="utf-8")
    out = tmp_path / "out.txt"
    result = runner.invoke(app, ["translate", "-c", str(multilingual.out / "checkpoints" / "best.pt"), "-i", str(requests),
                                 "-o", str(out), "--input-format", "jsonl", "--tgt-lang", "xb"])
    assert result.exit_code == 1 and "line 4: tgt_lang fr: the model translates into xa, xb only" in result.output
    outputs = out.read_text(encoding="utf-8").split("\n")[:-1]
    assert [o.split()[0] if o else "" for o in outputs] == ["Alpha", "Beta", "Beta", ""]


def test_serve_takes_a_target_language_per_line(multilingual, toy_corpus):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from nmt.serve.app import create_app
    from nmt.serve.models import load_served

    lines = (toy_corpus / "train.en").read_text(encoding="utf-8").splitlines()[:4]
    with TestClient(create_app(load_served([multilingual.out / "checkpoints" / "best.pt"]), batch_wait_ms=50)) as server:
        def post(payload: dict) -> tuple[int, dict]:
            reply = server.post("/translate", json=payload)
            return reply.status_code, reply.json()

        health = server.get("/health")
        assert health.status_code == 200 and health.json()["directions"] == ["en-xa", "en-xb"]
        status, reply = post({"text": lines, "tgt_lang": ["xa", "xb", "xb", "xa"]})
        assert status == 200, reply
        assert [t.split()[0] for t in reply["translations"]] == ["Alpha", "Beta", "Beta", "Alpha"]
        status, reply = post({"text": lines[:1], "tgt_lang": "xb"})
        assert status == 200 and reply["translations"][0].startswith("Beta")
        status, reply = post({"text": lines[:1], "tgt_lang": "fr"})
        assert status == 422 and "tgt_lang fr" in reply["error"]
        status, reply = post({"text": lines[:1], "src_lang": "xa", "tgt_lang": "xb"})
        assert status == 422 and reply["error"].startswith("line 1: ") and '"zero_shot": true' in reply["error"], reply
        status, reply = post({"text": lines[:2], "tgt_lang": ["xa"]})
        assert status == 422


def test_fine_tuning_a_multilingual_parent_keeps_its_tokenizer_and_tokens(multilingual, toy_corpus, tmp_path):
    from nmt.train.trainer import train

    parent = multilingual.out / "checkpoints" / "best.pt"
    # one direction of the parent's, still with its language token
    child = multilingual_recipe(tmp_path / "child", toy_corpus, f"train.init_from={parent}", "train.max_steps=5",
                                 "train.valid_every=5", f"data.train={json.dumps([{'path': str(toy_corpus / 'train'), 'tgt_lang': 'xb'}])}",
                                 "data.tgt_lang=xb")
    train_tokenizer(child.data, child.tokenizer, child.out, child.train.init_from)
    prepare(child.data, child.tokenizer, child.out)
    train(child, show_progress=False)
    spm_path = tokenizer_paths(child.out, True)[0]
    assert spm_path.read_bytes() == tokenizer_paths(multilingual.out, True)[0].read_bytes()
    sp = load_processor(spm_path)
    data = ParallelShards(data_dir(child.out), "train")
    assert all(data.src[i][0] == sp.piece_to_id("<2xb>") for i in range(len(data)))


def test_likelihood_scores_in_the_chosen_direction(multilingual, toy_corpus, tmp_path):
    ckpt = str(multilingual.out / "checkpoints" / "best.pt")
    totals = {}
    for lang in MARKERS:
        out = tmp_path / f"scores.{lang}"
        result = runner.invoke(app, ["likelihood", "-c", ckpt, "--source", str(toy_corpus / "train.en"),
                                     "--target", str(toy_corpus / "train.xa"), "-o", str(out), "--tgt-lang", lang])
        assert result.exit_code == 0, result.output
        totals[lang] = sum(float(x) for x in out.read_text().split())
    assert totals["xa"] > totals["xb"] + 10  # "Alpha ..." is an xa sentence


def test_back_translate_writes_an_aligned_corpus_and_refuses_a_missing_file(trained_tiny, tmp_path):
    """A reverse model's run (here the tiny en→de model reading English as the monolingual side):
    PREFIX.en as given, PREFIX.de its translations, one line each, empty lines kept."""
    ckpt = str(trained_tiny.out / "checkpoints" / "best.pt")
    mono = tmp_path / "mono.en"
    mono.write_text("A dog runs.\n\nTwo men talk.\n", encoding="utf-8")
    result = runner.invoke(app, ["back-translate", "-c", ckpt, "-i", str(mono), "-o", str(tmp_path / "bt" / "train")])
    assert result.exit_code == 0, result.output
    assert "wrote 3 lines" in result.output
    assert (tmp_path / "bt" / "train.en").read_text(encoding="utf-8") == mono.read_text(encoding="utf-8")
    synthetic = (tmp_path / "bt" / "train.de").read_text(encoding="utf-8").split("\n")[:3]
    assert synthetic[0] and synthetic[1] == "" and synthetic[2]
    one_line_error(runner.invoke(app, ["back-translate", "-c", ckpt, "-i", str(tmp_path / "none.en"),
                                       "-o", str(tmp_path / "x")]), "none.en")
    assert not list(tmp_path.glob("x.*"))


def test_a_localization_file_is_translated_into_the_language_it_names(multilingual, toy_corpus, tmp_path):
    """An XLIFF file's target-language (and a catalog's Language) chooses a multilingual model's
    target where --tgt-lang does not; --tgt-lang wins; a language the model lacks is warned about
    and the run's target taken."""
    pytest.importorskip("lxml")
    line = (toy_corpus / "train.en").read_text(encoding="utf-8").splitlines()[0]
    checkpoint = str(multilingual.out / "checkpoints" / "best.pt")

    def first_word(language: str, *flags: str) -> tuple[str, str]:
        source = tmp_path / f"in.{language}.xlf"
        source.write_text(f'<xliff version="2.0" srcLang="en" trgLang="{language}"><file id="f"><unit id="1"><segment>'
                          f"<source>{line}</source></segment></unit></file></xliff>")
        out = tmp_path / f"out.{language}{len(flags)}.xlf"
        result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(source), "-o", str(out), *flags])
        assert result.exit_code == 0, result.output
        target = re.search(r"<target>(.*?)</target>", out.read_text(encoding="utf-8")).group(1)
        return target.split()[0], result.output

    assert first_word("xb")[0] == "Beta" and first_word("xa")[0] == "Alpha"  # the model's default: xa
    assert first_word("xb", "--tgt-lang", "xa")[0] == "Alpha"
    word, output = first_word("fr")
    assert word == "Alpha" and "its target language fr is not one the model translates into; translated into xa" in output


def test_memories_and_glossaries_follow_each_lines_direction(multilingual, toy_corpus, tmp_path):
    """A jsonl line's own target: a TMX memory's and a TBX glossary's entries in its languages; a TSV
    memory or glossary, which names no languages, is the run's direction's (xa) alone."""
    line = (toy_corpus / "train.en").read_text(encoding="utf-8").splitlines()[0]
    requests = tmp_path / "in.jsonl"
    requests.write_text("".join(json.dumps({"text": line, "tgt_lang": lang}) + "\n" for lang in ("xa", "xb")))
    checkpoint = str(multilingual.out / "checkpoints" / "best.pt")

    def outputs(*flags: str) -> list[str]:
        out = tmp_path / "out.txt"
        result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(requests), "-o", str(out),
                                     "--input-format", "jsonl", *flags])
        assert result.exit_code == 0, result.output
        return out.read_text(encoding="utf-8").splitlines()

    tmx = tmp_path / "memory.tmx"
    tmx.write_text(f'<tmx version="1.4"><body><tu><tuv xml:lang="en"><seg>{line}</seg></tuv><tuv xml:lang="xa">'
                   '<seg>from memory, xa</seg></tuv><tuv xml:lang="xb"><seg>from memory, xb</seg></tuv></tu></body></tmx>')
    assert outputs("--memory", str(tmx)) == ["from memory, xa", "from memory, xb"]
    tsv = tmp_path / "memory.tsv"
    tsv.write_text(f"{line}\tfrom memory\n")
    remembered, translated = outputs("--memory", str(tsv))
    assert remembered == "from memory" and translated.split()[0] == "Beta"
    word = line.split()[1]
    term = "beach"  # a word of the corpus's that the line lacks
    assert term not in line
    tbx = tmp_path / "terms.tbx"
    tbx.write_text(f'<martif><text><body><termEntry><langSet xml:lang="en"><tig><term>{word}</term></tig></langSet>'
                   f'<langSet xml:lang="xb"><tig><term>{term}</term></tig></langSet></termEntry></body></text></martif>')
    first, second = outputs("--glossary", str(tbx))
    assert term not in first and term in second  # xa has no term for it
