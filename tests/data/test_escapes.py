"""Escaped corpora (`&amp;`, the Moses tokenizer's `&apos;`) read as the text they stand for, by
the rule translation reads escaped input with."""

import pytest

from nmt.data.escapes import unescaped
from nmt.data.prepare import describe_preparation, prepare
from nmt.data.shards import ParallelShards
from nmt.data.tokenizer import load_processor, tokenizer_paths, train_tokenizer
from tests.conftest import tiny_recipe


@pytest.mark.parametrize("line, text", [
    ("A man at a Q&amp;A.", "A man at a Q&A."),  # Multi30k's English side
    ("it &apos;s a &quot; big &quot; dog &#124; &#91; 1 &#93;", "it 's a \" big \" dog | [ 1 ]"),  # Moses's escapes
    ("a &lt;b&gt; tag, &#x27;quoted&#39; &copy;", "a <b> tag, 'quoted' ©"),
    ("AT&T &amp; co", "AT&T &amp; co"),  # a bare "&": text that holds a reference as text
    ("Jeans & amp und", "Jeans & amp und"),
    ("H&amp, R Block", "H&amp, R Block"),  # no ";": not a reference
    ("Fish &chips; here", "Fish &chips; here"),  # no such name
    ("a < b &amp; c", "a < b &amp; c"),
    ("plain text", "plain text"),
])
def test_a_line_is_unescaped_only_where_it_is_escaped_text(line, text):
    assert unescaped(line) == text


def _write(folder, name, en, de):
    for lang, lines in (("en", en), ("de", de)):
        (folder / f"{name}.{lang}").write_text("\n".join(lines) + "\n")


def _decoded(out, split, joint_model):
    shards = ParallelShards(out / "data", split)
    return ([joint_model.decode(shards.src[i].tolist()) for i in range(len(shards))],
            [joint_model.decode(shards.tgt[i].tolist()) for i in range(len(shards))])


def test_prepare_the_tokenizer_and_validation_read_escaped_lines_unescaped_unless_told_not_to(tmp_path):
    """The training pairs, the tokenizer's text, valid's pairs and the references validation scores
    against are read unescaped; the report counts the lines and prepare says so. A pair escaped
    and the same pair unescaped are then duplicates. `data.unescape: false` reads every line as written."""
    from nmt.train.validate import valid_sets

    train_en = ["A man at a Q&amp;A.", "it &apos;s a dog .", "AT&T calls.", "A man at a Q&A.", "A dog runs."]
    train_de = ["Ein Mann bei Fragen &amp; Antworten.", "es ist ein Hund .", "AT&T ruft an.",
                "Ein Mann bei Fragen & Antworten.", "Ein Hund rennt."]
    _write(tmp_path, "train", train_en, train_de)
    _write(tmp_path, "dev", ["&quot;Hi&quot;, she said.", "A cat."], ["&quot;Hallo&quot;, sagte sie.", "Eine Katze."])
    runs = {}
    for name, settings in (("unescaped", []), ("as written", ["data.unescape=false"])):
        recipe = tiny_recipe(tmp_path / name, f"data.train={tmp_path / 'train'}", f"data.valid={tmp_path / 'dev'}",
                             "data.test=null", "tokenizer.vocab_size=70", "train.valid_bleu_sentences=2", *settings)
        train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
        runs[name] = recipe, prepare(recipe.data, recipe.tokenizer, recipe.out)

    recipe, report = runs["unescaped"]
    tokenizer = load_processor(tokenizer_paths(recipe.out, True)[0])
    assert _decoded(recipe.out, "train", tokenizer) == (
        ["A man at a Q&A.", "it 's a dog .", "AT&T calls.", "A dog runs."],  # the fourth pair repeated the first
        ["Ein Mann bei Fragen & Antworten.", "es ist ein Hund .", "AT&T ruft an.", "Ein Hund rennt."])
    assert report["splits"]["train"]["dropped"] == {"duplicate": 1}
    assert report["splits"]["train"]["unescaped_lines"] == 3 and report["splits"]["valid"]["unescaped_lines"] == 2
    valid = ParallelShards(recipe.out / "data", "valid")
    assert valid.src[0].tolist() == tokenizer.encode('"Hi", she said.')  # (pieces the training text lacks: unknown)
    assert "    3 escaped lines read as the text they stand for (\"&amp;\" as \"&\"; data.unescape)" in \
        describe_preparation(report | {"skipped": False}, recipe.out)
    assert not any("apos" in tokenizer.id_to_piece(i) for i in range(tokenizer.get_piece_size()))
    [dev] = valid_sets(recipe, recipe.out / "data")
    assert dev.references == ['"Hallo", sagte sie.', "Eine Katze."] and dev.sources[0] == '"Hi", she said.'

    recipe, report = runs["as written"]
    tokenizer = load_processor(tokenizer_paths(recipe.out, True)[0])
    assert _decoded(recipe.out, "train", tokenizer) == (train_en, train_de)
    assert "unescaped_lines" not in report["splits"]["train"] and report["splits"]["train"]["dropped"] == {}
    [dev] = valid_sets(recipe, recipe.out / "data")
    assert dev.references == ["&quot;Hallo&quot;, sagte sie.", "Eine Katze."]
