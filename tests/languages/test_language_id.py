"""The language of outputs (`nmt score --langid`, nmt.language_id): py3langid's share of lines in
the expected language."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from nmt.cli import app
from nmt.language_id import language_shares
from tests.conftest import one_line_error

LINES = ["Ein Mann fährt mit dem Fahrrad durch die Stadt.", "", "Zwei Hunde spielen im Schnee.",
         "A woman is reading a book in the park.", "Eine Frau sitzt auf einer Bank und liest."]


def test_share_of_lines_in_the_expected_language():
    result = language_shares(LINES, "de")
    assert (result["lines"], result["share"]) == (4, 0.75)  # the empty line not counted
    assert result["languages"] == {"de": 0.75, "en": 0.25}
    assert language_shares(LINES, "en")["share"] == 0.25


def test_score_langid_on_the_command_line(tmp_path):
    hyp, ref = tmp_path / "hyp.de", tmp_path / "ref.de"
    hyp.write_text("\n".join(LINES) + "\n")
    ref.write_text("\n".join(LINES[:3] + ["Eine Frau liest ein Buch im Park.", LINES[4]]) + "\n")
    runner = CliRunner()
    alone = runner.invoke(app, ["score", str(hyp), "--langid", "de"])
    assert alone.exit_code == 0, alone.output
    assert "langid de: 75.0% of 4 non-empty lines (others: en 25.0%)" in alone.output
    both = runner.invoke(app, ["score", str(hyp), "-r", str(ref), "--langid", "de", "--json"])
    assert both.exit_code == 0, both.output
    bleu, langid = json.loads(both.output)
    assert bleu["name"] == "BLEU" and langid["share"] == 0.75
    paired = runner.invoke(app, ["score", str(hyp), str(ref), "-r", str(ref), "--langid", "de"])
    assert paired.exit_code == 0 and "in de 75.0%" in paired.output and "in de 100.0%" in paired.output
    one_line_error(runner.invoke(app, ["score", str(hyp), "--langid", "xx"]), "--langid xx")
    nllb = runner.invoke(app, ["score", str(hyp), "--langid", "deu_Latn"])  # an imported model's code for it
    assert nllb.exit_code == 0 and "langid de (deu_Latn): 75.0% of 4" in nllb.output, nllb.output
