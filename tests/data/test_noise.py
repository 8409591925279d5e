"""Noised back-translation (Edunov et al. 2018): the noise by hand and over many words, and
`nmt back-translate --noise` writing a noised synthetic side beside the monolingual one."""

from __future__ import annotations

from typer.testing import CliRunner

from nmt.cli import app
from nmt.data.noise import FILLER, noised

runner = CliRunner()


def test_noise_deletes_replaces_and_shuffles_within_three_positions():
    words = [f"w{i}" for i in range(40)]
    line = " ".join(words)
    assert noised(line, seed=7) == noised(line, seed=7) != noised(line, seed=8)  # seeded per line
    assert noised(line, 1, delete=0.0, replace=0.0, max_shift=0) == line  # no noise: the line as it was
    kept = deleted = replaced = 0
    for seed in range(200):
        out = noised(line, seed).split()
        originals = [w for w in out if w != FILLER]
        assert len(set(originals)) == len(originals) and set(originals) <= set(words)
        # each word moves at most 3 places among the words that stay
        order = [i for i, w in enumerate(out) if w != FILLER]
        ranks = {w: r for r, w in enumerate(sorted(originals, key=lambda w: int(w[1:])))}
        assert all(abs(sum(1 for j in order if j < i) - ranks[out[i]]) <= 3 for i in order), out
        kept += len(originals)
        replaced += out.count(FILLER)
        deleted += len(words) - len(out)
    total = 200 * len(words)
    assert 0.08 < deleted / total < 0.12 and 0.08 < replaced / total < 0.12 and kept + deleted + replaced == total


def test_back_translate_noise_writes_noised_translations(trained_tiny, tmp_path):
    ckpt = str(trained_tiny.out / "checkpoints" / "best.pt")
    mono = tmp_path / "mono.en"
    mono.write_text("A dog runs on the beach .\n\nTwo men are talking while a woman looks at a red car .\n", encoding="utf-8")
    outs = {}
    for name, flags in (("plain", []), ("noised", ["--noise"])):
        result = runner.invoke(app, ["back-translate", "-c", ckpt, "-i", str(mono), "-o", str(tmp_path / name / "bt"), *flags])
        assert result.exit_code == 0, result.output
        outs[name] = (tmp_path / name / "bt.de").read_text(encoding="utf-8").splitlines()
        assert (tmp_path / name / "bt.en").read_text(encoding="utf-8") == mono.read_text(encoding="utf-8")
    assert "noised" in result.output and len(outs["noised"]) == 3 and outs["noised"][1] == ""
    assert outs["noised"] == [noised(line, trained_tiny.decode.seed + n) for n, line in enumerate(outs["plain"])]
    assert outs["noised"] != outs["plain"]
