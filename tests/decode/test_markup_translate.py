"""Markup and verbatim spans through translation with a trained model: the words are translated as
the line without them would be, and every tag and span comes back (nmt translate, jsonl)."""

from __future__ import annotations

import dataclasses
import html
import json
from collections import Counter

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.text.casing import hypothesis_text
from nmt.decode.text.markup import mark
from nmt.decode.text.paragraphs import join_alignments
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import translate_lines
from nmt.data.tokenizer import output_text
from tests.conftest import trained_once
from tests.data.test_tokenizer_options import WITH_OPTIONS
from tests.decode.test_markup import tags

LINE = "A black dog leaps over a log."
TAGGED = 'A <b>black</b> dog <a href="https://x.org/?a=1&amp;b=2" title="a > b">leaps <i>over</i></a> a log.<br/>'


def test_tags_change_nothing_in_the_translation_and_all_come_back(translator, cfg):
    [plain], [marked] = translate_lines(translator, [LINE], cfg), translate_lines(translator, [TAGGED], cfg, markup=True)
    assert marked[0].tokens == plain[0].tokens
    text = hypothesis_text(translator.tgt_tokenizer, marked[0])
    assert tags(text) == tags(TAGGED)
    assert mark(text, True, False).text == output_text(translator.tgt_tokenizer, plain[0].tokens)
    assert marked[0].alignment is None  # used to place the tags, given only when asked for


def test_verbatim_spans_are_copied_and_the_rest_translated_as_without_them(translator, cfg):
    words = LINE.split()
    items = ("42", "https://example.org/a?b=1", "🎉", "C-3PO", "3.5")
    inserted = [" ".join(words[:2] + [item] + words[2:]) for item in items]
    [plain] = translate_lines(translator, [LINE], cfg)
    # "42" before a word is a quantity, which stays in the line unless quantities_in_place is off
    everything_out = cfg.model_copy(update={"quantities_in_place": False})
    out = translate_lines(translator, inserted, everything_out)
    for line, hyps, item in zip(inserted, out, items):
        assert hyps[0].tokens == plain[0].tokens
        assert item in hypothesis_text(translator.tgt_tokenizer, hyps[0]), line
    assert [h[0].tokens for h in translate_lines(translator, inserted[1:], cfg)] == [h[0].tokens for h in out[1:]]
    off = cfg.model_copy(update={"copy_verbatim": False})
    assert translate_lines(translator, inserted[:1], off)[0][0].text is None


def test_text_in_letters_the_vocabulary_lacks_is_copied_and_the_rest_translated_as_without_it(translator, cfg):
    unk = translator.src_tokenizer.unk_id()
    assert all(unk in translator.src_tokenizer.encode(c) for c in "寿Мж")  # the tiny vocabulary lacks them
    words = LINE.split()
    items = ("寿司", '"Добро пожаловать"')
    inserted = [" ".join(words[:2] + [item] + words[2:]) for item in items]
    whole = "Мужчина едет на велосипеде."
    [plain] = translate_lines(translator, [LINE], cfg)
    warnings = []
    out = translate_lines(translator, [*inserted, whole], cfg, warnings.append, first_line=3)
    for hyps, item in zip(out, items):
        assert hyps[0].tokens == plain[0].tokens
        assert item in hypothesis_text(translator.tgt_tokenizer, hyps[0])
    assert out[2][0].text == whole  # nothing left to translate: the line as written
    assert [w.split(":")[0] for w in warnings] == ["line 3", "line 4", "line 5"]
    # without the rule the model reads unknown pieces and writes something else
    off = translate_lines(translator, [*inserted, whole], cfg.model_copy(update={"copy_unreadable": False}))
    assert all(item not in hypothesis_text(translator.tgt_tokenizer, hyps[0]) for hyps, item in zip(off, items))
    assert hypothesis_text(translator.tgt_tokenizer, off[2][0]) != whole


def test_a_vocabulary_with_byte_fallback_reads_every_letter(spelling_digits, cfg):
    line = "A dog sees 寿司."
    warnings = []
    [hyps] = translate_lines(spelling_digits, [line], cfg, warnings.append)
    assert warnings == [] and hyps[0].text is None  # nothing taken out: the model reads the bytes


QUANTITIES = ["A dog and 3 cats leap over a log.", "2 dogs run. A cat sleeps. Then 5 birds sing!",
              "A dog with 42 balls and the URL https://example.org/a?b=1 runs."]


@pytest.fixture(scope="module")
def spelling_digits(tmp_path_factory):
    """A tiny model whose vocabulary spells digits (byte fallback; the tiny model's has none)."""
    recipe = trained_once(tmp_path_factory, *WITH_OPTIONS)
    return load_engine([recipe.out / "checkpoints" / "last.pt"])


def searched_with(translator, monkeypatch, outputs: dict[str, str]) -> list[str]:
    """Each row's source text as the engine's search is given it, in order; a row whose source is
    a key of `outputs` gets that output, and every output is aligned word by word along the
    diagonal (word i of the output to word i of the source)."""
    import nmt.decode.text.alignment as alignment

    search, rows = translator.translate_batch, []

    def recorded(sources, settings, prefixes=None, constraints=None):
        hyps = search(sources, settings, prefixes, constraints)
        for ids, nbest in zip(sources, hyps):
            rows.append(translator.src_tokenizer.decode(ids))
            if rows[-1] in outputs:
                nbest[0].tokens = translator.tgt_tokenizer.encode(outputs[rows[-1]])
        return hyps

    monkeypatch.setattr(translator, "translate_batch", recorded)
    monkeypatch.setattr(alignment, "align_batch",
                        lambda attention, sources, *rest, **k: [" ".join(f"{i}-{i}" for i in range(40))] * len(sources))
    return rows


def test_a_quantity_stays_in_its_sentence_and_its_aligned_word_becomes_its_digits(spelling_digits, cfg, monkeypatch):
    """With quantities_in_place, the model reads a quantity where it stands (the other spans
    still taken out), and the output word aligned to it is written as its digits where the output
    lacks them: each sentence of a paragraph alike, the URL put back, the line's own words kept."""
    rows = searched_with(spelling_digits, monkeypatch, {
        "A dog and 3 cats leap over a log.": "Ein Hund und drei Katzen springen.",
        "2 dogs run.": "Zwei Hunde laufen.", "A cat sleeps.": "Eine Katze schläft.",
        "Then 5 birds sing!": "Dann singen 5 Vögel!",  # standing alone already: left as it is
        "A dog with 42 balls and the URL runs.": "Ein Hund mit vielen Bällen und die URL läuft."})
    warnings = []
    one, paragraph, url = [h[0] for h in translate_lines(spelling_digits, QUANTITIES, cfg, warn=warnings.append)]
    assert sorted(rows) == sorted(["A dog and 3 cats leap over a log.", "2 dogs run.", "A cat sleeps.",
                                   "Then 5 birds sing!", "A dog with 42 balls and the URL runs."])
    assert one.text == "Ein Hund und 3 Katzen springen."
    assert paragraph.text == "2 Hunde laufen. Eine Katze schläft. Dann singen 5 Vögel!"
    assert url.text.startswith("Ein Hund mit 42 Bällen und die URL") and "https://example.org/a?b=1" in url.text
    assert one.alignment is None and not warnings  # the alignments were read, not asked for
    [[aligned]] = translate_lines(spelling_digits, QUANTITIES[:1], cfg, extras=("alignments",))
    assert aligned.text == one.text and aligned.alignment.startswith("0-0 1-1 2-2 3-3")


def test_an_output_whose_quantity_has_no_word_without_digits_for_it_is_translated_with_it_taken_out(
        spelling_digits, cfg, monkeypatch):
    """Nothing is guessed: where the word aligned to a quantity holds digits (the model's own
    number "33", or "3er"), the line is translated again with its quantities taken out."""
    taken_out = cfg.model_copy(update={"quantities_in_place": False})
    [[expected], [plain]] = translate_lines(spelling_digits, [QUANTITIES[0], LINE], taken_out)
    for output in ("Ein Hund und 33 Katzen springen.", "Ein Hund und 3er Katzen springen."):
        rows = searched_with(spelling_digits, monkeypatch, {QUANTITIES[0]: output})
        [[kept], [other]] = translate_lines(spelling_digits, [QUANTITIES[0], LINE], cfg)
        monkeypatch.undo()
        assert rows[-1] == "A dog and cats leap over a log."  # the line again, alone, 3 taken out
        assert kept.tokens == expected.tokens and kept.text == expected.text and "3" in kept.text
        assert other.tokens == plain.tokens


def test_without_alignments_in_the_engine_quantities_are_taken_out(spelling_digits, cfg):
    class WithoutAlignments:  # the engine as an export without word alignments sees it
        def __init__(self, engine):
            self.engine = engine
            self.capabilities = dataclasses.replace(engine.capabilities, name="ctranslate2", alignments=False)

        def __getattr__(self, name):
            return getattr(self.engine, name)

    def texts(engine, settings):
        return [hypothesis_text(spelling_digits.tgt_tokenizer, h[0]) for h in translate_lines(engine, QUANTITIES, settings)]

    taken_out, engine = cfg.model_copy(update={"quantities_in_place": False}), WithoutAlignments(spelling_digits)
    searched = []
    search = spelling_digits.translate_batch
    engine.translate_batch = lambda sources, *a, **k: searched.extend(sources) or search(sources, *a, **k)
    assert texts(engine, cfg) == texts(engine, taken_out)
    assert "A dog and cats leap over a log." in [spelling_digits.src_tokenizer.decode(ids) for ids in searched]


def test_a_quantity_the_vocabulary_cannot_spell_is_taken_out(translator, cfg):
    """The tiny model's vocabulary has no digits: left in place, "3" would reach the model as an
    unknown token, so it is taken out and copied, as with quantities_in_place off."""
    assert "⁇" in translator.src_tokenizer.decode(translator.src_tokenizer.encode("3"))
    out = cfg.model_copy(update={"quantities_in_place": False})
    [[held]], [[taken_out]] = translate_lines(translator, QUANTITIES[:1], cfg), translate_lines(translator, QUANTITIES[:1], out)
    assert held.tokens == taken_out.tokens and "3" in held.text and "⁇" not in held.text


def test_lines_with_constraints_are_batched_apart_from_the_rest(translator, cfg, monkeypatch):
    """The constrained search runs for every line of a batch and searches differently, so a line
    without constraints never shares a batch with one that has them."""
    batches = []
    search = translator.translate_batch

    def recorded(sources, settings, prefixes=None, constraints=None):
        batches.append([bool(c) for c in constraints] if constraints else [False] * len(sources))
        return search(sources, settings, prefixes, constraints)

    monkeypatch.setattr(translator, "translate_batch", recorded)
    lines = [LINE, "A dog.", "2 dogs run.", "Two cats sit on a wall!", "A cat and 7 dogs."]
    translate_lines(translator, lines, cfg)
    translate_lines(translator, lines, cfg, constraints=[[], ["Hund"], [], [], ["Katze"]])
    assert len(batches) >= 4 and all(len(set(batch)) == 1 for batch in batches)


def test_a_paragraph_with_markup_is_split_and_its_alignment_joined(translator, cfg):
    """The joined alignment is each sentence's own alignment, its indices moved past the ones before."""
    second = "Two cats sit on a wall!"
    alone = translate_lines(translator, [LINE, second], cfg, extras=("alignments",))
    [joined] = translate_lines(translator, [f"{LINE} {second}"], cfg, extras=("alignments",))
    assert joined[0].tokens == alone[0][0].tokens + alone[1][0].tokens
    assert joined[0].alignment == join_alignments([alone[0][0].alignment, alone[1][0].alignment],
                                                  [len(LINE.split()), len(second.split())])
    [marked] = translate_lines(translator, [f"{LINE} <b>Two cats</b> sit on a wall!"], cfg, markup=True)
    assert marked[0].tokens == joined[0].tokens and tags(marked[0].text) == Counter({"<b>": 1, "</b>": 1})


def test_a_marked_line_longer_than_the_model_keeps_every_sentences_tags(translator, cfg):
    """40 marked sentences, past the model's positions: every sentence translated, its tags placed
    as in that sentence alone."""
    sentence = "A <b>black dog</b> leaps over a log."
    warnings = []
    [line], [short] = translate_lines(translator, [" ".join([sentence] * 40), "A <i>cat</i>."], cfg,
                                      warn=warnings.append, markup=True)
    [[alone]] = translate_lines(translator, [sentence], cfg, markup=True)
    assert len(translator.src_tokenizer.encode(" ".join(["A black dog leaps over a log."] * 40))) > translator.max_positions
    assert line.text == " ".join([alone.text] * 40) and tags(alone.text) == Counter({"<b>": 1, "</b>": 1})
    assert tags(short.text) == Counter({"<i>": 1, "</i>": 1}) and not warnings


def test_translate_markup_keeps_lines_warns_on_bad_markup_and_jsonl_asks_per_line(trained_tiny, tmp_path):
    source = tmp_path / "in.html"
    source.write_text(f"{TAGGED}\n\n<br/>\nA <b>dog\n", encoding="utf-8")
    runner = CliRunner()
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(source), "-o", str(tmp_path / "out"),
                                 "--input-format", "markup"])
    assert result.exit_code == 0, result.output
    assert "line 4: markup: <b> is not closed" in result.output
    out = (tmp_path / "out").read_text(encoding="utf-8").split("\n")
    assert len(out) == 5 and out[1] == "" and out[2] == "<br/>" and out[4] == ""
    assert tags(out[0]) == tags(TAGGED) and "<b>" in out[3]
    requests = tmp_path / "in.jsonl"
    requests.write_text(json.dumps({"text": "A <b>dog</b>.", "markup": True}) + "\n"
                        + json.dumps({"text": "A <b>dog</b>."}) + "\n" + json.dumps({"text": "x", "markup": "yes"}) + "\n",
                        encoding="utf-8")
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(requests), "-o", str(tmp_path / "out.jsonl"),
                                 "--input-format", "jsonl", "--output-format", "jsonl"])
    assert "line 3: markup: true or false is expected" in result.output
    first, second, third = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert tags(first["hypotheses"][0]["text"]) == Counter({"<b>": 1, "</b>": 1})
    assert "error" in third and "hypotheses" in second



@pytest.mark.parametrize("line, expected", [
    (TAGGED, True), ("Line<br/>break", True), ("<!-- note --> A dog.", True), ("Tom & <b>Jerry</b>", True),
    ("a < b and c > d", False), ("x<y", False), ("<b>unclosed", False), ("<b><i>crossed</b></i>", False),
    ("if a<b and c>d then", False), ("{0} files, %s left", False), ("1 < 2 <b>x</b>", False), ("I <3 you", False),
    (LINE, False), ("Tom &amp; Jerry", True), ("I &lt;3 you", True), ("AT&T &amp; co", False)])
def test_the_rule_by_which_plain_text_is_read_as_markup(line, expected):
    from nmt.decode.text.markup import read_as_markup

    assert read_as_markup(line) is expected


def test_plain_input_with_tags_is_read_as_markup_with_one_warning_and_text_opts_out(trained_tiny, tmp_path):
    """Without a flag, a line with well-formed tags comes out as with --input-format markup (the
    first such line warned about, once); a lone "<" stays text; --input-format text reads every
    line as text, as markup=False does, Markdown's marks included."""
    ckpt = str(trained_tiny.out / "checkpoints" / "last.pt")
    lines = [LINE, TAGGED, "A dog <i>runs</i>.", "a < b and a dog", "", "A **black** dog leaps over a log.",
             "A &quot;black&quot; dog &amp; a log &lt;3", 'A "black" dog & a log <3']
    source = tmp_path / "in.en"
    source.write_text("\n".join(lines) + "\n")
    runner = CliRunner()

    def run(*flags: str) -> tuple[list[str], str]:
        out = tmp_path / f"out{len(flags)}{flags[-1] if flags else ''}"
        result = runner.invoke(app, ["translate", "-c", ckpt, "-i", str(source), "-o", str(out), *flags])
        assert result.exit_code == 0, result.output
        return out.read_text().splitlines(), result.output

    plain, said = run()
    marked, _ = run("--input-format", "markup")
    text, said_text = run("--input-format", "text")
    assert plain[1:3] == marked[1:3] and tags(plain[1]) == tags(TAGGED) and tags(plain[2]) == tags("<i>x</i>")
    assert said.count("inline markup found") == 1 and "line 2:" in said and "inline markup" not in said_text
    engine = load_engine([ckpt])
    as_text = [hypothesis_text(engine.tgt_tokenizer, h[0]) for h in translate_lines(
        engine, lines, engine.recipe.decode.model_copy(update={"markdown": False}))]
    assert text == as_text and plain[3] == as_text[3] and plain[0] == as_text[0]
    assert len(plain) == len(lines) and plain[4] == ""
    assert plain[5].count("**") == 2 and plain[5].replace("**", "") == plain[0] != text[5]
    # text escaped for a page: translated as the text it stands for, and escaped again (said once)
    assert html.unescape(plain[6]) == plain[7] and "&lt;" in plain[6] and "<" not in plain[6]
    assert said.count("text escaped for markup") == 1 and "line 7:" in said
    assert text[6] != plain[6]  # read as typed, the references are pieces to the model


def test_thai_or_lao_markup_without_its_segmenter_is_said_once_per_stream(translator, cfg, monkeypatch):
    """Without nmt[thai] (nmt[lao]), tags around Thai (Lao) wrap whole runs between spaces: the first
    markup line with the script in its source or output says so, naming the extra, once for each
    script; lines without it do not."""
    from nmt.decode.stream import translate_stream
    from nmt.data import words

    lines = ["A <b>dog</b> runs.", "A <b>dog</b> สุนัขสีดำ runs.", "<i>สุนัข</i>สีดำ", "สุนัข <b>x</b>",
             "<b>ໝາ</b>ສີດຳ", "ໝາ <b>x</b>"]
    monkeypatch.setattr("nmt.data.words.segmenter", lambda script: None)
    said: list[str] = []
    outputs = list(translate_stream(translator, lines, cfg, warn=said.append, input_format="markup", chunk_lines=2))
    assert len(outputs) == 6
    thai = [line for line in said if "PyThaiNLP" in line]
    assert len(thai) == 1 and thai[0].startswith("line 2: Thai:") and "pip install 'nmt[thai]'" in thai[0]
    lao = [line for line in said if "LaoNLP" in line]
    assert len(lao) == 1 and lao[0].startswith("line 5: Lao:") and "pip install 'nmt[lao]'" in lao[0]
    monkeypatch.undo()
    if words.segmenter("Thai") is not None and words.segmenter("Lao") is not None:  # with it (nmt[thai], in dev): nothing to say
        said.clear()
        list(translate_stream(translator, lines, cfg, warn=said.append, input_format="markup"))
        assert not any("PyThaiNLP" in line or "LaoNLP" in line for line in said)


def test_an_unreadable_name_inside_a_sentence_is_left_to_the_names_rule_or_else_taken_out(translator, cfg, monkeypatch):
    import nmt.decode.text.names as names

    line = "A black Москва dog leaps over a log."

    def text(update: dict) -> str:
        [hyps] = translate_lines(translator, [line], cfg.model_copy(update=update))
        return hypothesis_text(translator.tgt_tokenizer, hyps[0])

    taken_out = text({"copy_names": False})  # without the names rule, a verbatim span
    assert "Москва" in taken_out
    # every output word doubtful: the names rule writes the name in place of the words aligned to
    # it, as it does with the name read as unknown pieces, and that output stands
    monkeypatch.setattr(names, "DOUBTFUL", 1.0)
    in_place = text({})
    assert "Москва" in in_place and in_place == text({"copy_unreadable": False}) != taken_out
    # no output word doubtful: the names rule writes nothing, and the line is translated again
    # with the name taken out
    monkeypatch.setattr(names, "DOUBTFUL", 1e-300)
    assert "Москва" not in text({"copy_unreadable": False}) and text({}) == taken_out
