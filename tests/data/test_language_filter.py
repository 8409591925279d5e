"""data.language_filter: `nmt prepare` drops the training pairs a side of which a language
identifier (py3langid) finds in another language than its corpus's (nmt.data.language_filter)."""

from __future__ import annotations

import gzip
import sys

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.data.language_filter import LanguageFilter
from nmt.data.prepare import prepare
from nmt.data.shards import ParallelShards
from nmt.data.tokenizer import load_processor, tokenizer_paths, train_tokenizer
from nmt.errors import NmtError
from tests.conftest import ROOT, TINY, TINY_DATA, one_line_error, tiny_recipe

FRENCH = gzip.open(ROOT / "data" / "multi30k" / "train.fr.gz", "rt", encoding="utf-8").read().splitlines()[:2]


def noisy_corpus(folder) -> tuple[list[tuple[str, str]], list[int], dict]:
    """The tiny corpus with 4 of its 48 pairs spoiled as crawled corpora are: two targets in French,
    one untranslated (the English copied), one pair the wrong way round (German source, English
    target); (the pairs, the spoiled lines, what the filter must say of them)."""
    en = (TINY_DATA / "train.en").read_text(encoding="utf-8").splitlines()
    de = (TINY_DATA / "train.de").read_text(encoding="utf-8").splitlines()
    pairs = list(zip(en, de))
    pairs[3], pairs[10] = (en[3], FRENCH[0]), (en[10], FRENCH[1])
    pairs[20] = (en[20], en[20])
    pairs[30] = (de[30], en[30])
    for lang, side in (("en", 0), ("de", 1)):
        (folder / f"noisy.{lang}").write_text("\n".join(p[side] for p in pairs) + "\n", encoding="utf-8")
    return pairs, [3, 10, 20, 30], {"target in another language": 3, "source in another language": 1}


def test_pairs_in_another_language_are_dropped_counted_and_the_rest_kept_in_order(tmp_path):
    pairs, spoiled, reasons = noisy_corpus(tmp_path)
    # (data.remove_copies off: the untranslated pair reaches the identifier, which finds English)
    recipe = tiny_recipe(tmp_path / "out", f"data.train={tmp_path / 'noisy'}", "data.language_filter=0.5",
                         "data.remove_copies=false")
    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
    train = prepare(recipe.data, recipe.tokenizer, recipe.out)["splits"]["train"]
    assert (train["read"], train["kept"], train["dropped"]) == (48, 44, reasons)
    with_copies_removed = tiny_recipe(tmp_path / "out", f"data.train={tmp_path / 'noisy'}", "data.language_filter=0.5")
    train = prepare(with_copies_removed.data, with_copies_removed.tokenizer, with_copies_removed.out)["splits"]["train"]
    assert train["kept"] == 44 and train["dropped"] == {  # the copy goes first, by the cheaper rule
        "target copies source": 1, "target in another language": 2, "source in another language": 1}

    sp_src, sp_tgt = (load_processor(path) for path in tokenizer_paths(recipe.out, recipe.tokenizer.joint))
    kept = ParallelShards(recipe.out / "data", "train")
    genuine = [pair for line, pair in enumerate(pairs) if line not in spoiled]
    assert [kept.src[i].tolist() for i in range(len(kept))] == sp_src.encode([s for s, _ in genuine])
    assert [kept.tgt[i].tolist() for i in range(len(kept))] == sp_tgt.encode([t for _, t in genuine])

    unfiltered = tiny_recipe(tmp_path / "out", f"data.train={tmp_path / 'noisy'}")  # off: the spoiled pairs stay
    train = prepare(unfiltered.data, unfiltered.tokenizer, unfiltered.out)["splits"]["train"]
    assert train["kept"] > 44 and not any("language" in reason for reason in train["dropped"]), train
    assert train["dropped"]["target copies source"] == 1  # the untranslated pair, by data.remove_copies


def test_worker_processes_keep_the_same_pairs_as_one(tmp_path, monkeypatch):
    """With --threads 2 the identifier runs in two worker processes, each on half of every chunk's
    pairs (at least 8 each here, where a real corpus needs 2,000): the same pairs are dropped for
    the same reasons, and the shards are byte for byte those of one process."""
    import nmt.data.language_filter as language_filter

    noisy_corpus(tmp_path)
    monkeypatch.setattr(language_filter, "PAIRS_PER_PROCESS", 8)
    pooled = []
    close = language_filter.LanguageFilter.close
    monkeypatch.setattr(language_filter.LanguageFilter, "close", lambda self: (pooled.append(self._pool is not None),
                                                                              close(self)))
    reports, shards = [], []
    for threads in (1, 2):
        recipe = tiny_recipe(tmp_path / f"threads{threads}", f"data.train={tmp_path / 'noisy'}", "data.language_filter=0.5")
        train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
        reports.append(prepare(recipe.data, recipe.tokenizer, recipe.out, threads=threads)["splits"])
        shards.append([(recipe.out / "data" / f"train.{side}.{kind}").read_bytes()
                       for side in ("src", "tgt") for kind in ("bin", "idx")])
    assert pooled == [False, True]  # one process, then a pool of two
    assert reports[0] == reports[1] and reports[1]["train"]["kept"] == 44
    assert shards[0] == shards[1]


def test_the_threshold_is_the_other_languages_probability():
    """An English target is in another language than German at the identifier's probability p:
    dropped under a threshold below p, kept above it; a German one never."""
    language_filter = LanguageFilter(0.5)
    source, english = "A dog runs in the snow.", "A man is riding a bicycle through the city."
    found, p = language_filter.ident.classify(english)
    assert found == "en" and 0.5 < p < 1
    assert LanguageFilter(p - 1e-3).reason(source, english, ("en", "de")) == "target in another language"
    assert LanguageFilter(p + (1 - p) / 2).reason(source, english, ("en", "de")) is None
    assert language_filter.reason(source, "Ein Mann fährt mit dem Fahrrad durch die Stadt.", ("en", "de")) is None
    assert language_filter.labels("eng_Latn", "deu", "corpus") == ("en", "de")  # NLLB's and three-letter codes


def test_a_language_the_identifier_lacks_is_a_one_line_error_before_anything_is_written(tmp_path):
    for lang, name in (("en", "train.en"), ("xa", "train.de")):
        (tmp_path / f"toy.{lang}").write_text((TINY_DATA / name).read_text(encoding="utf-8"), encoding="utf-8")
        (tmp_path / f"dev.{lang}").write_text((TINY_DATA / name).read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "out"
    settings = [arg for s in (f"output_dir={out}", f"data.train={tmp_path / 'toy'}", f"data.valid={tmp_path / 'dev'}",
                              "data.test=null", "data.tgt_lang=xa", "data.language_filter=0.5") for arg in ("--set", s)]
    runner = CliRunner()
    assert runner.invoke(app, ["tokenizer", str(TINY), *settings]).exit_code == 0
    before = sorted(p.name for p in out.iterdir())
    one_line_error(runner.invoke(app, ["prepare", str(TINY), *settings]),
                   f"data.language_filter: xa (the language of {tmp_path / 'toy'}): not a language the identifier knows")
    assert sorted(p.name for p in out.iterdir()) == before  # no data folder


def test_without_py3langid_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "py3langid.langid", None)  # import fails
    with pytest.raises(NmtError, match=r"^data.language_filter needs py3langid: pip install 'nmt\[langid\]'$"):
        LanguageFilter(0.5)
