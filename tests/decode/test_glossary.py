"""Glossaries (nmt.decode.glossary): the terms a sentence holds, found by hand-checked rules; each
sentence holding one translated by the constrained search with its terms' translations; bad files
and settings are one-line errors."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.glossary import MOST_TERMS, glossary_of, read_glossary
from nmt.decode.translate import translate_lines
from nmt.errors import NmtError
from tests.conftest import one_line_error


def _glossary(tmp_path, text: str):
    path = tmp_path / "terms.tsv"
    path.write_text(text, encoding="utf-8")
    return read_glossary(path)


def test_a_sentence_holds_the_terms_it_has_as_whole_words_in_any_case(tmp_path):
    glossary = _glossary(tmp_path, "card\tKarte\ncredit  card\tKreditkarte\n\nInvoice\tRechnung\nC++\tC++\n寿司\tSushi\n")
    assert glossary.constraints("Pay the INVOICE by credit card, or by card.") == ("Rechnung", "Kreditkarte", "Karte")
    assert glossary.constraints("A credit\ncard.") == ("Kreditkarte",)  # spaces of any kind
    assert glossary.constraints("Cards and invoices, a discard.") == ()  # whole words only
    assert glossary.constraints("I write C++ code and eat 寿司を食べる.") == ("C++", "Sushi")  # without spaces: anywhere
    assert glossary.constraints("Card, card, CARD.") == ("Karte",)  # each once
    # an output holds a translation as a word, a compound's head, or with an ending of two letters at most
    assert glossary.holds("Ein PICKNICKTISCH und den Hunden.", ("Tisch", "Hund"))
    assert not glossary.holds("Ein Tischler.", ("Tisch",)) and not glossary.holds("Eine Hundeleine.", ("Hund",))
    many = _glossary(tmp_path, "".join(f"w{n}\tt{n}\n" for n in range(MOST_TERMS + 3)))
    assert many.constraints(" ".join(f"w{n}" for n in range(MOST_TERMS + 3))) == tuple(f"t{n}" for n in range(MOST_TERMS))


TBX_2008 = """<?xml version="1.0" encoding="UTF-8"?>
<martif type="TBX" xml:lang="en"><text><body>
  <termEntry id="c1">
    <langSet xml:lang="en-US"><tig><term>invoice</term></tig><tig><term>bill</term></tig></langSet>
    <langSet xml:lang="de-DE"><tig><term>Rechnung</term></tig><tig><term>Faktura</term></tig></langSet>
  </termEntry>
  <termEntry id="c2"><langSet xml:lang="fr"><tig><term>carte</term></tig></langSet>
    <langSet xml:lang="en"><ntig><termGrp><term>credit card</term></termGrp></ntig></langSet></termEntry>
  <termEntry id="c3"><langSet xml:lang="en"><tig><term>bill</term></tig></langSet>
    <langSet xml:lang="de"><tig><term>Schnabel</term></tig></langSet></termEntry>
</body></text></martif>
"""
TBX_3 = """<tbx xmlns="urn:iso:std:iso:30042:ed-2" type="TBX-Basic" style="dca" xml:lang="en"><text><body>
  <conceptEntry id="c1"><langSec xml:lang="en"><termSec><term>invoice</term></termSec></langSec>
    <langSec xml:lang="de"><termSec><term>Rechnung</term></termSec></langSec></conceptEntry>
</body></text></tbx>
"""


def test_glossaries_as_csv_and_tbx(tmp_path):
    """A .csv file of two columns (DeepL's glossaries), and TermBase eXchange (TBX 2008 and v3):
    each entry's source terms (synonyms too) to its first target term, a term in two entries the
    first's, codes matched as TMX's are (en takes en-US, eng_Latn takes en)."""
    (tmp_path / "terms.csv").write_text('invoice,Rechnung\n"credit card, gold",Goldkarte\n')
    assert read_glossary(tmp_path / "terms.csv").constraints("The invoice, by credit card, gold.") == ("Rechnung", "Goldkarte")
    (tmp_path / "bad.csv").write_text("invoice;Rechnung\n")
    with pytest.raises(NmtError, match="bad.csv:1: expected a term, a comma and its translation"):
        read_glossary(tmp_path / "bad.csv")
    (tmp_path / "terms.tbx").write_text(TBX_2008)
    glossary = read_glossary(tmp_path / "terms.tbx", "eng_Latn", "de")
    assert glossary.targets == {"invoice": "Rechnung", "bill": "Rechnung"}  # credit card: no German term
    assert read_glossary(tmp_path / "terms.tbx", "de", "en").targets == {"rechnung": "invoice", "faktura": "invoice",
                                                                        "schnabel": "bill"}
    (tmp_path / "v3.tbx").write_text(TBX_3)
    assert read_glossary(tmp_path / "v3.tbx", "en", "de").targets == {"invoice": "Rechnung"}
    with pytest.raises(NmtError, match=r"v3.tbx: no entry has terms in both en and cs \(the languages found: de, en\)"):
        read_glossary(tmp_path / "v3.tbx", "en", "cs")
    (tmp_path / "page.tbx").write_text("<html/>")
    with pytest.raises(NmtError, match=r"page.tbx: not a TBX file \(its root element is <html>\)"):
        read_glossary(tmp_path / "page.tbx", "en", "de")


@pytest.mark.parametrize("content, problem", [
    ("dog\tHund\ncat\n", "terms.tsv:2: expected a term, a tab and its translation"),
    ("dog\tHund\tHündin\n", "terms.tsv:1: expected a term, a tab and its translation"),
    ("dog\tHund\n\nDOG\tRüde\n", "terms.tsv:3: 'DOG' is given twice (line 1 first)"),
    ("\n\n", "terms.tsv: empty glossary (no terms)"),
])
def test_a_bad_glossary_is_an_error_naming_its_line(tmp_path, content, problem):
    with pytest.raises(NmtError, match="^" + str(tmp_path / problem).replace("(", r"\(").replace(")", r"\)") + "$"):
        _glossary(tmp_path, content)


def test_a_glossary_needs_the_constrained_search(tmp_path, trained_tiny):
    (tmp_path / "terms.tsv").write_text("dog\tHund\n")
    cfg = trained_tiny.decode.model_copy(update={"glossary": str(tmp_path / "terms.tsv")})
    ctranslate2 = SimpleNamespace(capabilities=SimpleNamespace(name="ctranslate2", constraints=False))
    with pytest.raises(NmtError, match="decode.glossary: constraints: CTranslate2 has no lexical constraints"):
        glossary_of(ctranslate2, cfg)
    torch_engine = SimpleNamespace(capabilities=SimpleNamespace(name="torch", constraints=True),
                                   controls=SimpleNamespace(languages=("en", "de")))
    with pytest.raises(NmtError, match="decode.glossary needs beam search"):
        glossary_of(torch_engine, cfg.model_copy(update={"sampling": True}))
    assert glossary_of(torch_engine, cfg) is glossary_of(torch_engine, cfg)  # read once
    (tmp_path / "terms.tsv").write_text("dog\tHund\ncat\tKatze\n")  # ... while the file is unchanged
    assert glossary_of(torch_engine, cfg).constraints("a cat") == ("Katze",)


def test_each_sentence_holding_a_term_translates_it_as_given(tmp_path, trained_tiny, translator, cfg, searched):
    (tmp_path / "terms.tsv").write_text("dog\tZebra\n")
    with_glossary = cfg.model_copy(update={"glossary": str(tmp_path / "terms.tsv")})
    from nmt.decode.text.casing import hypothesis_text

    def texts(lines, settings):
        return [hypothesis_text(translator.tgt_tokenizer, hyps[0]) for hyps in translate_lines(translator, lines, settings)]

    lines = ["A DOG runs.", "A man sleeps.", "A man sleeps. A dog runs."]
    plain, termed = texts(lines, cfg), texts(lines, with_glossary)
    assert "Zebra" in termed[0] and "Zebra" not in plain[0]
    assert termed[1] == plain[1]  # no term: as without the glossary
    [first] = texts(["A man sleeps."], cfg)
    assert termed[2].startswith(first) and "Zebra" in termed[2][len(first):]  # the sentence without it as ever
    # an output that holds its terms already is kept: searched once, as without the glossary
    word = next(w for w in plain[1].split() if len(w) > 2 and w.isalpha())
    (tmp_path / "held.tsv").write_text(f"man\t{word}\n")
    searched.clear()
    assert texts(lines[1:2], cfg.model_copy(update={"glossary": str(tmp_path / "held.tsv")})) == plain[1:2]
    assert len(searched) == 1
    searched.clear()
    texts(lines[:1], with_glossary)  # one that lacks it: searched again, constrained
    assert len(searched) == 2
    # through nmt translate, and its errors
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n")
    run = ["translate", "-c", checkpoint, "-i", str(tmp_path / "in.txt"), "--set", "decode.precision=fp32"]
    result = CliRunner().invoke(app, [*run, "-o", str(tmp_path / "out.txt"), "--glossary", str(tmp_path / "terms.tsv")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out.txt").read_text().splitlines() == termed
    (tmp_path / "bad.tsv").write_text("dog Zebra\n")
    for glossary, problem in (("bad.tsv", "bad.tsv:1: expected a term, a tab and its translation"),
                              ("none.tsv", "none.tsv: glossary not found (--glossary, decode.glossary)")):
        result = CliRunner().invoke(app, [*run, "-o", str(tmp_path / "x.txt"), "--glossary", str(tmp_path / glossary)])
        one_line_error(result, problem)
        assert not (tmp_path / "x.txt").exists()
    result = CliRunner().invoke(app, [*run, "-o", str(tmp_path / "x.txt"), "--glossary", str(tmp_path / "terms.tsv"),
                                      "--sampling"])
    one_line_error(result, "decode.glossary needs beam search")
