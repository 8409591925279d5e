"""Markup and verbatim spans through translation with a trained model: the words are translated as
the line without them would be, and every tag and span comes back (nmt translate, jsonl)."""

from __future__ import annotations

import dataclasses
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


@pytest.fixture(scope="module")
def translator(trained_tiny):
    return load_engine([trained_tiny.out / "checkpoints" / "last.pt"])


@pytest.fixture(scope="module")
def cfg(trained_tiny):
    return trained_tiny.decode.model_copy(update={"precision": "fp32"})


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


QUANTITIES = ["A dog and 3 cats leap over a log.", "2 dogs run. A cat sleeps. Then 5 birds sing!",
              "A dog with 42 balls and the URL https://example.org/a?b=1 runs."]


@pytest.fixture(scope="module")
def spelling_digits(tmp_path_factory):
    """A tiny model whose vocabulary spells digits (byte fallback; the tiny model's has none)."""
    recipe = trained_once(tmp_path_factory, *WITH_OPTIONS)
    return load_engine([recipe.out / "checkpoints" / "last.pt"])


def searched_with(translator, monkeypatch, output: str | None = None) -> list[tuple[str, list[str]]]:
    """Each row the engine's search is given, as (source text, constraint texts), in order; with
    `output`, every constrained row's best output is made that text."""
    search, rows = translator.translate_batch, []

    def recorded(sources, settings, prefixes=None, constraints=None):
        constraints = constraints or [[] for _ in sources]
        rows.extend((translator.src_tokenizer.decode(ids), [translator.tgt_tokenizer.decode(p) for p in phrases])
                    for ids, phrases in zip(sources, constraints))
        hyps = search(sources, settings, prefixes, constraints)
        for nbest, phrases in zip(hyps, constraints):
            if output is not None and phrases:
                nbest[0].tokens = translator.tgt_tokenizer.encode(output)
        return hyps

    monkeypatch.setattr(translator, "translate_batch", recorded)
    return rows


def test_each_sentence_is_searched_as_written_with_its_quantities_as_constraints(spelling_digits, cfg, monkeypatch):
    """With quantities_in_place, a sentence keeps its quantities and is searched with them as
    lexical constraints, each sentence of a paragraph with its own, the other spans still taken
    out; an output with each quantity standing alone is the line's translation, its constraints
    not reported (none were asked for)."""
    translator = spelling_digits
    rows = searched_with(translator, monkeypatch, output="Hunde 3 Katzen")
    warnings = []
    [one, _, mixed] = translate_lines(translator, QUANTITIES, cfg, warn=warnings.append)
    assert sorted(rows[:5]) == sorted([("A dog and 3 cats leap over a log.", ["3"]), ("2 dogs run.", ["2"]),
                                       ("A cat sleeps.", []), ("Then 5 birds sing!", ["5"]),
                                       ("A dog with 42 balls and the URL runs.", ["42"])])
    assert hypothesis_text(translator.tgt_tokenizer, one[0]) == "Hunde 3 Katzen" and one[0].constraints_met is None
    # no output made "Hunde 3 Katzen" holds 2, 5 or 42: those lines alone are searched again, their numbers taken out
    assert sorted(rows[5:]) == sorted([("dogs run.", []), ("A cat sleeps.", []), ("Then birds sing!", []),
                                       ("A dog with balls and the URL runs.", [])])
    assert "42" in mixed[0].text and "https://example.org/a?b=1" in mixed[0].text
    assert not warnings


def test_without_constraints_in_the_engine_or_with_sampling_quantities_are_taken_out(spelling_digits, cfg):
    translator = spelling_digits

    def texts(engine, settings):
        return [hypothesis_text(translator.tgt_tokenizer, h[0]) for h in translate_lines(engine, QUANTITIES, settings)]

    out = cfg.model_copy(update={"quantities_in_place": False})
    sampled = {"sampling": True, "beam_size": 1}
    assert texts(translator, cfg.model_copy(update=sampled)) == texts(translator, out.model_copy(update=sampled))

    class WithoutConstraints:  # the engine as one without lexical constraints (CTranslate2) sees it
        def __init__(self, engine):
            self.engine = engine
            self.capabilities = dataclasses.replace(engine.capabilities, constraints=False)

        def __getattr__(self, name):
            return getattr(self.engine, name)

    assert texts(WithoutConstraints(translator), cfg) == texts(translator, out)


def test_an_output_that_has_a_quantity_only_inside_a_longer_number_is_translated_with_it_taken_out(
        spelling_digits, cfg, monkeypatch):
    """A constraint holds tokens, not a whole number: "3" is met by "33" or "3er". Such an output is
    replaced by the translation with the quantity taken out, which copies it exactly."""
    translator = spelling_digits
    for output in ("33 Hunde", "3er Hunde"):
        rows = searched_with(translator, monkeypatch, output)
        [[kept], [other]] = translate_lines(translator, [QUANTITIES[0], LINE], cfg)
        monkeypatch.undo()
        taken_out = cfg.model_copy(update={"quantities_in_place": False})
        [[expected], [plain]] = translate_lines(translator, [QUANTITIES[0], LINE], taken_out)
        assert [constraints for _, constraints in rows] == [[], ["3"], []]  # the line again, alone, unconstrained
        assert kept.tokens == expected.tokens and kept.text == expected.text and "3" in kept.text
        assert other.tokens == plain.tokens


def test_a_quantity_the_vocabulary_cannot_spell_is_taken_out(translator, cfg):
    """The tiny model's vocabulary has no digits: held in place, "3" would be forced into the output
    as an unknown token, so it is taken out and copied, as with quantities_in_place off."""
    assert "⁇" in translator.tgt_tokenizer.decode(translator.tgt_tokenizer.encode("3"))
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
    (LINE, False)])
def test_the_rule_by_which_plain_text_is_read_as_markup(line, expected):
    from nmt.decode.text.markup import looks_like_markup

    assert looks_like_markup(line) is expected


def test_plain_input_with_tags_is_read_as_markup_with_one_warning_and_text_opts_out(trained_tiny, tmp_path):
    """Without a flag, a line with well-formed tags comes out as with --input-format markup (the
    first such line warned about, once); a lone "<" stays text; --input-format text reads every
    line as text, as markup=False does."""
    ckpt = str(trained_tiny.out / "checkpoints" / "last.pt")
    lines = [LINE, TAGGED, "A dog <i>runs</i>.", "a < b and a dog", ""]
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
    as_text = [hypothesis_text(engine.tgt_tokenizer, h[0]) for h in translate_lines(engine, lines, engine.recipe.decode)]
    assert text == as_text and plain[3] == as_text[3] and plain[0] == as_text[0]
    assert len(plain) == len(lines) and plain[4] == ""


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
