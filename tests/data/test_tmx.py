"""Translation memories (TMX) as a corpus: the pairs a hand-written file holds, the same prepared
data as text files, and one-line errors for files that are not TMX."""

import codecs
import re
import gzip
from xml.sax.saxutils import escape

import pytest
from typer.testing import CliRunner

from nmt.data.corpora import open_corpus
from nmt.data.shards import ParallelShards
from nmt.errors import NmtError
from tests.conftest import TINY, TINY_DATA, one_line_error, prepared_tiny

MEMORY = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE tmx SYSTEM "tmx14.dtd">
<tmx version="1.4">
  <header creationtool="hand" srclang="en" adminlang="en" datatype="plaintext" o-tmf="none" segtype="sentence"/>
  <body>
    <tu tuid="1">
      <prop type="x-domain">pets</prop>
      <tuv xml:lang="en-GB"><seg>A <bpt i="1">&lt;b&gt;</bpt>big<ept i="1">&lt;/b&gt;</ept> dog
        runs.</seg></tuv>
      <tuv xml:lang="DE-de"><seg>Ein <hi type="emph">großer</hi> Hund<ph x="2">&lt;br/&gt;</ph> rennt.</seg></tuv>
    </tu>
    <tu><tuv xml:lang="fr"><seg>Un chat.</seg></tuv><tuv xml:lang="en"><seg>A cat.</seg></tuv></tu>
    <tu><tuv lang="EN"><seg>Two &amp; three</seg></tuv><tuv lang="de_AT"><seg>Zwei &amp; drei</seg></tuv></tu>
  </body>
</tmx>
"""


def test_a_unit_in_both_languages_is_a_pair(tmp_path):
    """Codes match in any case, `_` or `-`, and without a region; inline codes are left out, `<hi>`
    kept, line breaks made spaces; a unit lacking a language is left out."""
    path = tmp_path / "memory.tmx"
    path.write_text(MEMORY)
    pairs = [("A big dog runs.", "Ein großer Hund rennt."), ("Two & three", "Zwei & drei")]
    assert list(open_corpus(str(path), "en", "de").pairs()) == pairs
    assert list(open_corpus(str(path), "en", "de-AT").pairs()) == pairs[1:]  # a region takes that region only
    assert list(open_corpus(str(path), "EN", "fr").pairs()) == [("A cat.", "Un chat.")]
    assert list(open_corpus(str(path), "de", "en").pairs()) == [(b, a) for a, b in pairs]
    assert list(open_corpus(str(path), "eng_Latn", "deu_Latn").pairs()) == pairs  # NLLB-200's codes
    # gzip, and UTF-16 as its declaration and byte order mark say (as some CAT tools write)
    packed = tmp_path / "memory.tmx.gz"
    packed.write_bytes(gzip.compress(MEMORY.encode()))
    wide = tmp_path / "wide.tmx"
    wide.write_bytes(codecs.BOM_UTF16_LE + MEMORY.replace("UTF-8", "UTF-16").encode("utf-16-le"))
    for other in (packed, wide):
        corpus = open_corpus(str(other), "en", "de")
        assert list(corpus.pairs()) == pairs
        assert corpus.count_pairs() == 3  # the units, counted in the bytes


def _memory_of(en: list[str], de: list[str]) -> str:
    units = "".join(f'<tu><tuv xml:lang="en"><seg>{escape(a)}</seg></tuv><tuv xml:lang="de"><seg>{escape(b)}</seg></tuv></tu>\n'
                    for a, b in zip(en, de))
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<tmx version="1.4"><header srclang="en"/><body>\n{units}</body></tmx>\n'


def test_a_memory_prepares_like_its_text_files(tmp_path):
    en = (TINY_DATA / "train.en").read_text().splitlines()
    de = (TINY_DATA / "train.de").read_text().splitlines()
    memory = tmp_path / "train.tmx"
    memory.write_text(_memory_of(en, de))
    text, tmx = prepared_tiny(tmp_path / "text"), prepared_tiny(tmp_path / "tmx", f"data.train={memory}")
    for split in ("train", "valid"):
        a, b = ParallelShards(text.out / "data", split), ParallelShards(tmx.out / "data", split)
        assert len(a) == len(b) > 0
        assert all(a.src[i].tolist() == b.src[i].tolist() and a.tgt[i].tolist() == b.tgt[i].tolist() for i in range(len(a)))
    corpus = open_corpus(str(memory), "en", "de")
    assert corpus.count_pairs() == len(list(corpus.pairs())) == len(en)
    # units in one language alone: not pairs, and reported
    from nmt.data.prepare import describe_preparation, prepare

    one_side = tmp_path / "more.tmx"
    one_side.write_text(_memory_of(en, de).replace("</body>", '<tu><tuv xml:lang="en"><seg>Alone.</seg></tuv></tu></body>'))
    recipe = prepared_tiny(tmp_path / "more", f"data.train={one_side}")
    report = prepare(recipe.data, recipe.tokenizer, recipe.out)
    assert report["splits"]["train"]["units_without_both_languages"] == 1 and report["splits"]["train"]["read"] == len(en)
    assert "    translation memory units without both languages (not pairs, left out): 1" in \
        describe_preparation(report, recipe.out)


@pytest.mark.parametrize("content, problem", [
    ("", "memory.tmx: empty file (no translation units)"),
    ("<html><body/></html>", "memory.tmx: not a TMX file (its root element is <html>, not <tmx>)"),
    ('<tmx><body><tu><tuv xml:lang="en"><seg>a</seg></tuv>\n<tuv xml:lang="de"><seg>b</sg></tuv></tu></body></tmx>',
     "memory.tmx:2:28: not well-formed XML (mismatched tag)"),
    ('<tmx><body><tu><tuv xml:lang="en"><seg>a</seg></tuv><tuv xml:lang="fr"><seg>b</seg></tuv></tu></body></tmx>',
     "memory.tmx: no translation unit has segments in both 'en' and 'de' (the languages found: en, fr)"),
])
def test_a_bad_memory_is_a_one_line_error_of_nmt_prepare(tmp_path, content, problem):
    from nmt.cli import app

    memory = tmp_path / "memory.tmx"
    memory.write_text(content)
    problem = f"{tmp_path}/{problem}"
    with pytest.raises(NmtError, match="^" + re.escape(problem) + "$"):
        list(open_corpus(str(memory), "en", "de").pairs())
    recipe = prepared_tiny(tmp_path / "run")
    sets = [arg for pair in (("--set", f"output_dir={recipe.out}"), ("--set", f"data.train={memory}"),
                             ("--set", f"data.valid={TINY_DATA / 'valid'}")) for arg in pair]
    one_line_error(CliRunner().invoke(app, ["prepare", str(TINY), *sets]), problem)
