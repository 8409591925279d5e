"""Corpora another toolkit already segmented (subword-nmt's "@@ ") or tokenized (Moses's "@-@"):
counted by `nmt prepare`, which warns."""

from nmt.data.prepare import describe_preparation, prepare
from nmt.data.preprocessed import SIGNS, _may_hold_a_sign, signs_of, warnings
from nmt.data.tokenizer import train_tokenizer
from tests.conftest import TINY_DATA, tiny_recipe


def test_the_signs_of_bpe_and_of_the_moses_tokenizer_are_found_by_hand():
    assert signs_of("the trans@@ lation of a sent@@ ence", "die Übersetzung") == {"bpe_joins"}
    assert signs_of("a dog", "ein Hun@@") == {"bpe_joins"}  # a join at the line's end
    assert signs_of("a well @-@ known dog", "1 @,@ 000 Hunde") == {"moses_marks"}
    assert signs_of("trans@@ lation , well @-@ known", "x") == {"bpe_joins", "moses_marks", "tokenized_spacing"}
    assert signs_of("a dog runs .", "ein Hund , der rennt") == {"tokenized_spacing"}
    for text in ("mail me at anna@example.com", "@@ alone", "a @ b", "x@@y", "well-known", "@-@", "",
                 "3 , 5", "see .NET", "a dog runs."):
        assert signs_of(text, text) == set(), text
    # the quick test that keeps the patterns off most lines lets every sign's hints through
    assert all(_may_hold_a_sign(hint) for sign in SIGNS.values() for hint in sign.hints)
    assert warnings({"bpe_joins": 1}, 100) == [
        "warning: 1 pair holds subword-nmt's \"@@ \" joins (text already segmented by BPE): nmt segments text itself "
        "and scores outputs as written, so give nmt the text before BPE (sed -E 's/(@@ )|(@@ ?$)//g')"]
    assert warnings({"bpe_joins": 1}, 101) == []  # under 1 % of the pairs: text that happens to hold one
    assert warnings({"tokenized_spacing": 19}, 29_000) == []  # Multi30k's German side: a typo now and then
    assert len(warnings({"tokenized_spacing": 20}, 100)) == 1
    [moses] = warnings({"moses_marks": 30, "bpe_joins": 0}, 30)
    assert moses.startswith('warning: 30 pairs hold the Moses tokenizer\'s "@-@" marks') and "sacremoses detokenize" in moses


def test_prepare_counts_and_warns_of_a_corpus_segmented_by_bpe_per_split(tmp_path):
    en = (TINY_DATA / "train.en").read_text().splitlines()
    de = (TINY_DATA / "train.de").read_text().splitlines()

    def bpe(line: str) -> str:  # every word of more than 4 letters in two pieces, as subword-nmt writes them
        return " ".join(f"{w[:3]}@@ {w[3:]}" if len(w) > 4 else w for w in line.split())

    for lang, lines in (("en", en), ("de", de)):
        (tmp_path / f"bpe.{lang}").write_text("\n".join(bpe(line) for line in lines) + "\n")
    recipe = tiny_recipe(tmp_path / "run", f"data.train={tmp_path / 'bpe'}")
    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
    report = prepare(recipe.data, recipe.tokenizer, recipe.out)
    segmented = sum(bool(signs_of(bpe(a), bpe(b))) for a, b in zip(en, de))
    assert segmented > 0.5 * len(en) and report["splits"]["train"]["preprocessed"] == {"bpe_joins": segmented}
    assert "preprocessed" not in report["splits"]["valid"]  # valid is the shipped text
    printed = describe_preparation(report, recipe.out)
    assert [line for line in printed if "@@" in line] == [
        f"    warning: {segmented} pairs hold subword-nmt's \"@@ \" joins (text already segmented by BPE): nmt segments "
        "text itself and scores outputs as written, so give nmt the text before BPE (sed -E 's/(@@ )|(@@ ?$)//g')"]


def test_nmt_score_warns_of_hypotheses_or_references_that_another_toolkit_segmented_or_tokenized(tmp_path):
    """fairseq's `generate` writes BPE pieces unless told to join them, and its prepared test sets
    are tokenized: BLEU then counts "@@" and "@-@" as words. Said once per file, on stderr; the
    score is sacreBLEU's all the same."""
    from typer.testing import CliRunner

    from nmt.cli import app

    (tmp_path / "hyp.de").write_text("ein Hun@@ d läuft.\nein gut @-@ gelaunter Mann.\n")
    (tmp_path / "ref.de").write_text("ein Hund läuft .\nein gut gelaunter Mann .\n")
    (tmp_path / "clean.de").write_text("Ein Hund läuft.\nEin gut gelaunter Mann.\n")
    result = CliRunner().invoke(app, ["score", str(tmp_path / "hyp.de"), "-r", str(tmp_path / "ref.de")])
    assert result.exit_code == 0 and result.stdout.startswith("BLEU = ")
    assert result.stderr.splitlines() == [
        f"warning: {tmp_path / 'hyp.de'}: 1 of 2 lines hold subword-nmt's \"@@ \" joins (text already segmented by "
        "BPE), which BLEU and chrF count as text: join the pieces first (sed -E 's/(@@ )|(@@ ?$)//g')",
        f"warning: {tmp_path / 'hyp.de'}: 1 of 2 lines hold the Moses tokenizer's \"@-@\" marks (text tokenized by "
        "tokenizer.perl -a), which BLEU and chrF count as text: score detokenized text, as sacreBLEU expects "
        "(sacremoses detokenize)",
        f"warning: {tmp_path / 'ref.de'}: 2 of 2 lines hold a space before their full stop or comma (\"a dog runs "
        ".\"; text tokenized as by Moses), which BLEU and chrF count as text: score detokenized text, as sacreBLEU "
        "expects (sacremoses detokenize)"]
    clean = CliRunner().invoke(app, ["score", str(tmp_path / "clean.de"), "-r", str(tmp_path / "clean.de")])
    assert clean.exit_code == 0 and clean.stderr == ""
