"""Tokenizer options for text the training data lacks: byte fallback, digits split, user-defined
symbols; through training, both engines and the transformers export."""

from __future__ import annotations

import pytest

from nmt.config import TokenizerConfig, load_recipe
from nmt.special_tokens import UNK
from nmt.data.tokenizer import load_processor, tokenizer_settings
from tests.conftest import ROOT, TINY_DATA, prepared_tiny, trained_once

OPTIONS = ["tokenizer.vocab_size=400", "tokenizer.byte_fallback=true", "tokenizer.split_digits=true",
           "tokenizer.user_defined_symbols=['{0}','%s']"]
WITH_OPTIONS = (*OPTIONS, "train.max_steps=40", "train.valid_bleu_sentences=0")
UNSEEN = "Ein Hund 🐕 läuft 1984 ☃ {0} %s Ωmega"  # emoji, snowman and Omega: in no training sentence


@pytest.fixture(scope="module")
def trained_with_options(tmp_path_factory):
    """The tiny model with these options, 40 updates (shared with tests that need digits spelt)."""
    return trained_once(tmp_path_factory, *WITH_OPTIONS)


def test_byte_fallback_round_trips_characters_the_training_text_lacked(trained_with_options, tmp_path):
    train_text = open(trained_with_options.data.train + ".de", encoding="utf-8").read()
    assert not any(c in train_text for c in "🐕☃Ω")
    with_fallback = load_processor(trained_with_options.out / "spm.model")
    ids = with_fallback.encode([UNSEEN])[0]
    assert UNK not in ids and with_fallback.decode(ids) == UNSEEN
    without = load_processor(prepared_tiny(tmp_path, "tokenizer.vocab_size=150").out / "spm.model")
    plain = without.encode([UNSEEN])[0]
    assert UNK in plain and without.decode(plain) != UNSEEN  # what byte fallback prevents


def test_user_defined_symbols_stay_whole(trained_with_options):
    sp = load_processor(trained_with_options.out / "spm.model")
    pieces = [sp.id_to_piece(i) for i in sp.encode(["Hund {0} %s"])[0]]
    assert "{0}" in pieces and "%s" in pieces


def test_split_digits_makes_every_digit_a_piece(tmp_path):
    """On a corpus where "1984" is frequent enough to become one piece, split_digits keeps it as four."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for lang in ("en", "de"):
        lines = open(TINY_DATA / f"train.{lang}", encoding="utf-8").read().splitlines()
        (corpus / f"train.{lang}").write_text("\n".join(lines + [f"1984 {line}" for line in lines]) + "\n",
                                              encoding="utf-8")
    pieces = {}
    for split in (False, True):
        recipe = prepared_tiny(tmp_path / str(split), f"data.train={corpus / 'train'}", "tokenizer.vocab_size=200",
                               f"tokenizer.split_digits={str(split).lower()}")
        sp = load_processor(recipe.out / "spm.model")
        pieces[split] = [sp.id_to_piece(i) for i in sp.encode(["1984"])[0]]
    assert [p.strip("▁") for p in pieces[True] if p.strip("▁")] == ["1", "9", "8", "4"]
    assert len([p for p in pieces[False] if p.strip("▁")]) < 4  # merged without the option


def test_a_recipe_without_the_options_keeps_its_trained_tokenizer_up_to_date():
    """Options added later are recorded only when set: a tokenizer trained before them is not retrained."""
    settings = tokenizer_settings(load_recipe(ROOT / "recipes" / "tiny.yaml").tokenizer)
    assert not {"byte_fallback", "split_digits", "user_defined_symbols"} & set(settings)
    assert tokenizer_settings(TokenizerConfig(byte_fallback=True))["byte_fallback"] is True


@pytest.mark.parametrize("symbols, fragment", [(["{0}", "{0}"], "listed twice"), (["a b"], "without spaces"),
                                               ([""], "non-empty")])
def test_bad_user_defined_symbols_are_refused(symbols, fragment):
    with pytest.raises(ValueError, match=fragment):
        TokenizerConfig(user_defined_symbols=symbols)


def test_both_engines_translate_unseen_characters_alike(trained_with_options, tmp_path):
    pytest.importorskip("ctranslate2")
    from nmt.decode.engines.engine import load_engine
    from nmt.decode.translate import translate_lines
    from nmt.export.ctranslate2 import export_ctranslate2

    checkpoint = trained_with_options.out / "checkpoints" / "last.pt"
    export_ctranslate2(checkpoint, tmp_path / "export")
    lines = [UNSEEN, "A dog 🐕 runs.", ""]
    decode = trained_with_options.decode.model_copy(update={"precision": "fp32"})
    ours = translate_lines(load_engine([checkpoint]), lines, decode)
    theirs = translate_lines(load_engine([tmp_path / "export"]), lines, decode)
    assert [h[0].tokens for h in ours] == [h[0].tokens for h in theirs]


def test_the_transformers_export_tokenizes_unseen_characters_as_nmt_does(trained_with_options, tmp_path):
    transformers = pytest.importorskip("transformers")
    from nmt.export.huggingface import export_huggingface

    export_huggingface(trained_with_options.out / "checkpoints" / "last.pt", tmp_path / "hf")
    tokenizer = transformers.AutoTokenizer.from_pretrained(tmp_path / "hf")
    sp = load_processor(trained_with_options.out / "spm.model")
    ids = tokenizer([UNSEEN])["input_ids"][0]
    assert ids[:-1] == sp.encode([UNSEEN])[0]  # then EOS
    assert tokenizer.decode(ids, skip_special_tokens=True) == UNSEEN


def test_fine_tuning_refuses_a_recipe_whose_options_differ_from_the_parents(trained_with_options, tmp_path):
    from nmt.data.tokenizer import train_tokenizer
    from nmt.errors import NmtError

    parent = str(trained_with_options.out / "checkpoints" / "last.pt")
    same = prepared_tiny(tmp_path / "same", *OPTIONS)
    train_tokenizer(same.data, same.tokenizer, tmp_path / "child", init_from=parent)  # the parent's options: fine
    other = same.tokenizer.model_copy(update={"byte_fallback": False})
    with pytest.raises(NmtError, match="tokenizer.byte_fallback: the recipe has False"):
        train_tokenizer(same.data, other, tmp_path / "child2", init_from=parent)


@pytest.mark.parametrize("size, message", [
    (5000, r"tokenizer.vocab_size 5000: more pieces than this training text holds \(at most \d+\)"),
    (20, r"tokenizer.vocab_size 20: this training text's characters and the special tokens take (\d+) pieces; "
         r"set tokenizer.vocab_size to at least \1 "),
    (2, r"tokenizer.vocab_size 2: fewer pieces than the special tokens take"),
])
def test_a_vocabulary_the_text_cannot_fill_or_fit_names_the_key(tmp_path, size, message):
    """sentencepiece's "Vocabulary size too high" and its refusals of too small a vocabulary become
    errors naming tokenizer.vocab_size and the bound."""
    from nmt.data.tokenizer import train_tokenizer
    from nmt.errors import NmtError
    from tests.conftest import tiny_recipe

    recipe = tiny_recipe(tmp_path, f"tokenizer.vocab_size={size}")
    with pytest.raises(NmtError, match=message):
        train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
