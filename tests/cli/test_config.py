import re

import pytest
import yaml

from nmt.config import load_recipe, recipe_to_dict, save_recipe
from nmt.errors import NmtError
from tests.conftest import ROOT, TINY


@pytest.mark.parametrize("name", ["tiny", "multi30k_en_de", "multi30k_en_de_student", "wmt14_en_de_base", "wmt14_en_de_big"])
def test_every_shipped_recipe_loads_and_round_trips(tmp_path, name):
    recipe = load_recipe(ROOT / "recipes" / f"{name}.yaml")
    save_recipe(recipe, tmp_path / "again.yaml")
    assert load_recipe(tmp_path / "again.yaml") == recipe


def test_base_recipe_is_the_papers_base_model():
    r = load_recipe(ROOT / "recipes" / "wmt14_en_de_base.yaml")
    m, t = r.model, r.train
    assert (m.encoder_layers, m.decoder_layers, m.d_model, m.heads, m.d_ff) == (6, 6, 512, 8, 2048)
    assert (m.dropout, m.norm, m.share_embeddings, t.label_smoothing) == (0.1, "post", True, 0.1)
    assert (t.lr_schedule, t.lr, t.warmup_steps, t.adam_betas, t.adam_eps) == ("inverse_sqrt", None, 4000, (0.9, 0.98), 1e-9)
    assert t.max_tokens * t.update_freq >= 25_000 and r.tokenizer.joint and r.tokenizer.vocab_size == 37000
    assert (r.decode.beam_size, r.decode.length_penalty) == (4, 0.6)


def test_overrides_are_typed_and_change_only_their_key():
    base = load_recipe(TINY)
    changed = load_recipe(TINY, ["train.max_steps=7", "model.norm=pre", "train.adam_betas=[0.9, 0.99]"])
    assert changed.train.max_steps == 7 and changed.model.norm == "pre" and changed.train.adam_betas == (0.9, 0.99)
    a, b = recipe_to_dict(base), recipe_to_dict(changed)
    a["train"].update(max_steps=7, adam_betas=[0.9, 0.99])
    a["model"]["norm"] = "pre"
    assert a == b


@pytest.mark.parametrize("override, message", [
    ("model.d_modle=3", "--set model.d_modle=3: model.d_modle: unknown key (did you mean model.d_model?)"),
    ("trian.max_steps=3", "trian: unknown key (did you mean train?)"),
    ("train.colour=3", "train.colour: unknown key"),
    ("train.max_steps=lots", "train.max_steps: Input should be a valid integer"),
    ("model.norm=middle", "model.norm: Input should be 'post' or 'pre'"),
    ("model.heads=5", "d_model (64) must be divisible by heads (5)"),
    ("train.max_steps", "expected KEY=VALUE"),
    # values outside what the key can mean: an error naming the key, not a crash or a silent misrun
    ("model.heads=0", "model.heads: Input should be greater than or equal to 1"),
    ("model.dropout=1.5", "model.dropout: Input should be less than 1"),
    ("train.max_tokens=0", "train.max_tokens: Input should be greater than or equal to 1"),
    ("train.label_smoothing=1", "train.label_smoothing: Input should be less than 1"),
    ("train.valid_every=0", "train.valid_every: Input should be greater than or equal to 1"),
    ("data.max_length_ratio=0.5", "data.max_length_ratio: Input should be greater than or equal to 1"),
    ("tokenizer.character_coverage=0", "tokenizer.character_coverage: Input should be greater than 0"),
    ("decode.beam_size=0", "decode.beam_size: Input should be greater than or equal to 1"),
    ("decode.temperature=0", "decode.temperature: Input should be greater than 0"),
    ("decode.top_p=1.5", "decode.top_p: Input should be less than or equal to 1"),
    ("decode.nbest=0", "decode.nbest: Input should be greater than or equal to 1"),
    ("decode.max_len_a=-1", "decode.max_len_a: Input should be greater than or equal to 0"),
    ("data.language_token_as_text=true", "data.language_token_as_text needs data.language_token: source (not none)"),
])
def test_bad_overrides_name_the_key(override, message):
    with pytest.raises(NmtError, match=re.escape(message)):
        load_recipe(TINY, [override])


def test_unknown_key_in_file_and_missing_section(tmp_path):
    raw = yaml.safe_load(TINY.read_text())
    raw["decode"]["beam_sise"] = 5
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(raw))
    line = path.read_text().splitlines().index("  beam_sise: 5") + 1
    with pytest.raises(NmtError, match=rf"bad.yaml: line {line}: decode.beam_sise: unknown key "
                                       r"\(did you mean decode.beam_size\?\)$"):
        load_recipe(path)
    with pytest.raises(NmtError, match=r"^--set decode.beam_sise=4: decode.beam_sise: unknown key"):
        load_recipe(path, ["decode.beam_sise=3", "decode.beam_sise=4"])  # the override that wrote it last
    with pytest.raises(NmtError, match=rf"bad.yaml: line {line}: decode.beam_sise: unknown key .*; "
                                       r"--set trian.x=1: trian: unknown key \(did you mean train\?\)$"):
        load_recipe(path, ["decode.beam_size=4", "trian.x=1"])
    del raw["data"]
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(NmtError, match="data: missing required key"):
        load_recipe(path)


def test_missing_recipe_and_invalid_yaml(tmp_path):
    with pytest.raises(NmtError, match="recipe file not found"):
        load_recipe(tmp_path / "nope.yaml")
    (tmp_path / "broken.yaml").write_text("model: [1, 2\n")
    with pytest.raises(NmtError, match="broken.yaml: line .* invalid YAML"):
        load_recipe(tmp_path / "broken.yaml")
    with pytest.raises(NmtError, match=r"override 'train.freeze=\[encoder': the value is not valid YAML: expected ',' or ']'"):
        load_recipe(TINY, ["train.freeze=[encoder"])
    (tmp_path / "binary.yaml").write_bytes(b"output_dir: x\ndata: \xff\xfe\n")
    with pytest.raises(NmtError, match=r"binary.yaml: line 2 is not UTF-8 text \(byte 20\)"):
        load_recipe(tmp_path / "binary.yaml")
    import torch

    torch.save({"format": "nmt-checkpoint-1"}, tmp_path / "best.pt")
    with pytest.raises(NmtError, match=r"best.pt: a checkpoint, not a recipe \(its run's recipe.yaml"):
        load_recipe(tmp_path / "best.pt")
    # a key without its colon is noticed on the line after it: the error names both
    (tmp_path / "colon.yaml").write_text("output_dir: x\ndata:\n  src_lang: en\n  tgt_lang de\n")
    with pytest.raises(NmtError, match=r"colon.yaml: line 5 invalid YAML: could not find expected ':' "
                                       r"\(while scanning a simple key on line 4\)$"):
        load_recipe(tmp_path / "colon.yaml")


def test_a_key_given_twice_is_an_error_naming_both_lines(tmp_path):
    """YAML loaders keep a repeated key's last value: a second `train:` section would silently drop
    the first's keys. Keys a `<<` merge brings in may still be overridden."""
    base = "output_dir: runs/x\ndata: {src_lang: en, tgt_lang: de, train: t, valid: v}\n"
    (tmp_path / "twice.yaml").write_text(base + "train:\n  max_steps: 5\nmodel:\n  d_model: 64\ntrain:\n  lr: 0.001\n")
    with pytest.raises(NmtError, match=r"twice.yaml: line 7 invalid YAML: train given twice \(first on line 3\)"):
        load_recipe(tmp_path / "twice.yaml")
    (tmp_path / "nested.yaml").write_text(base + "model:\n  d_model: 64\n  heads: 4\n  d_model: 128\n")
    with pytest.raises(NmtError, match=r"nested.yaml: line 6 invalid YAML: d_model given twice \(first on line 4\)"):
        load_recipe(tmp_path / "nested.yaml")
    (tmp_path / "merged.yaml").write_text(base + "model: &shape {d_model: 64, heads: 4}\n"
                                          "decode: {beam_size: 2}\ntrain: {lr: 0.001}\n")
    assert load_recipe(tmp_path / "merged.yaml").model.d_model == 64  # an anchor alone is fine
    from nmt.config import _RecipeLoader

    merged = yaml.load("a: &x {k: 1, j: 2}\nb:\n  <<: *x\n  k: 3\n", Loader=_RecipeLoader)
    assert merged["b"] == {"k": 3, "j": 2}


def test_a_renamed_key_still_loads_with_a_note(tmp_path, capsys):
    from nmt.config import load_recipe, recipe_from_dict

    recipe = tmp_path / "old.yaml"
    recipe.write_text("output_dir: runs/x\ndata: {src_lang: en, tgt_lang: de, train: t, valid: v}\n"
                      "decode: {batch_tokens: 1234}\n")
    assert load_recipe(recipe).decode.max_tokens == 1234
    assert capsys.readouterr().err.strip() == (f"note: {recipe}: decode.batch_tokens is now called decode.max_tokens "
                                               "(the old name still works)")
    assert load_recipe(recipe, ["decode.batch_tokens=99"]).decode.max_tokens == 99
    capsys.readouterr()
    old_checkpoint_recipe = {"output_dir": "x", "data": {"src_lang": "en", "tgt_lang": "de", "train": "t", "valid": "v"},
                             "decode": {"batch_tokens": 77}}
    assert recipe_from_dict(old_checkpoint_recipe).decode.max_tokens == 77
    assert capsys.readouterr().err == ""  # a checkpoint's recipe is read silently


def test_norwegian_stays_a_language_and_yaml_11_booleans_still_switch(tmp_path):
    """YAML 1.1 reads no, yes, on and off as booleans: `tgt_lang: no` (Norwegian) became False.
    Recipes read only true and false so, and a boolean key still takes no, yes, on and off."""
    (tmp_path / "nb.yaml").write_text("output_dir: runs/x\ndata: {src_lang: en, tgt_lang: no, train: t, valid: v}\n"
                                      "model: {share_embeddings: no}\ntrain: {compile: off, cuda_graphs: yes}\n")
    recipe = load_recipe(tmp_path / "nb.yaml", ["data.src_lang=on"])
    assert (recipe.data.src_lang, recipe.data.tgt_lang) == ("on", "no")
    assert (recipe.model.share_embeddings, recipe.train.compile, recipe.train.cuda_graphs) == (False, False, True)
