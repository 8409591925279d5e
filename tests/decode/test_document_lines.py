"""Lines as documents have them: a line without a letter (a separator, a bullet, "...", a tag
alone), which has nothing to translate, and a list's marker in front of a line ("- ", "1. ")."""

from __future__ import annotations

import pytest

from nmt.decode.text.casing import hypothesis_text
from nmt.decode.text.list_markers import list_marker
from nmt.decode.text.paragraphs import join_texts
from nmt.decode.translate import translate_lines

LETTERLESS = ["...", "•", "---", "***", "?", ":)", "→", "1.", "(1)", "2)", "$", "  —  ",
              "<figure>", '</div> <div class="x">', "{name}", "<!DOCTYPE html>", '<?xml version="1.0"?>']  # tags alone, read as text: no letter outside them


def texts(translator, lines, cfg, **given) -> list[str]:
    return [hypothesis_text(translator.tgt_tokenizer, h[0]) for h in translate_lines(translator, lines, cfg, **given)]


def test_a_line_without_a_letter_is_copied_as_written_without_a_search(translator, cfg, monkeypatch):
    """A model asked to translate "..." makes up a sentence; such a line (its numbers taken out
    first: "1." leaves ".") comes back as written, and the search never sees it."""
    searched = []
    search = translator.translate_batch
    monkeypatch.setattr(translator, "translate_batch", lambda sources, *a, **k: searched.append(sources) or search(sources, *a, **k))
    assert texts(translator, LETTERLESS, cfg) == LETTERLESS and not searched
    for off in ({"copy_verbatim": False}, {"split_sentences": False, "normalize_case": False}):
        assert texts(translator, LETTERLESS, cfg.model_copy(update=off)) == LETTERLESS and not searched
    [[marked]] = translate_lines(translator, ["<b>...</b> <br/>"], cfg, markup=True)
    assert marked.text == "<b>...</b> <br/>" and not searched
    # n-best, token scores and alignments: one hypothesis without tokens or scores, its word linked to itself
    [[copied]] = translate_lines(translator, ["..."], cfg.model_copy(update={"nbest": 3, "beam_size": 4}),
                                 extras=("token_scores", "alignments"))
    assert (copied.text, copied.tokens, copied.token_log_probs, copied.alignment) == ("...", [], [], "0-0")
    assert not searched


def test_a_sentence_without_a_letter_is_copied_between_the_translated_ones(translator, cfg):
    [paragraph] = texts(translator, ["A black dog leaps over a log. ... Two cats sit on a wall!"], cfg)
    alone = texts(translator, ["A black dog leaps over a log.", "Two cats sit on a wall!"], cfg)
    assert paragraph == join_texts([alone[0], "...", alone[1]])[0]


def test_a_line_without_a_letter_but_with_a_prefix_or_constraints_is_searched_as_asked(translator, cfg):
    [[prefixed]] = translate_lines(translator, ["..."], cfg, prefixes=["Ein Hund"])
    assert hypothesis_text(translator.tgt_tokenizer, prefixed).startswith("Ein Hund")
    [[constrained]] = translate_lines(translator, ["..."], cfg, constraints=[["Hund"]])
    assert "Hund" in hypothesis_text(translator.tgt_tokenizer, constrained)


@pytest.mark.parametrize("line, marker", [
    ("- A dog.", "- "), ("* A dog.", "* "), ("• A dog.", "• "), ("-- A dog.", "-- "), ("> A dog.", "> "),
    ("  – A dog.", "  – "), ("1. A dog.", "1. "), ("12) A dog.", "12) "), ("(3) A dog.", "(3) "),
    ("b) A dog.", "b) "), ("(iv) A dog.", "(iv) "), ("XII. A dog.", "XII. "), ("A. Smith", "A. "),
    ("# Getting started", "# "), ("### Two dogs", "### "), ("#nmt is fun", ""), ("####### Seven", ""),
    ("A dog.", ""), ("I am.", ""), ("-1 degrees", ""), ("1.5 kg", ""), ("2024. A year", ""), ("#1 fan", ""),
    ("e.g. this", ""), ("Mr. Smith", ""), ("- ", ""), ("1.", ""), ("ok) fine", ""),
    ("  A dog.", "  "), ("\tA dog.", "\t"), ("    ", "")])  # an indentation alone: kept likewise
def test_a_list_marker_is_a_bullet_or_an_enumerator_before_a_space(line, marker):
    assert list_marker(line) == marker


LINE = "A black dog leaps over a log."


def test_a_list_marker_is_written_in_front_of_the_lines_translation(translator, cfg, monkeypatch):
    """The model never sees the marker: each marked line's output is the marker, then the line's
    own translation (tokens, text, in capitals as its line was, tags around their words)."""
    markers = ["- ", "• ", "1. ", "(a) ", "  > ", "    "]
    [plain], [upper] = translate_lines(translator, [LINE], cfg), translate_lines(translator, [LINE.upper()], cfg)
    for marker, [h] in zip(markers, translate_lines(translator, [marker + LINE for marker in markers], cfg)):
        assert h.tokens == plain[0].tokens and h.text == marker + hypothesis_text(translator.tgt_tokenizer, plain[0])
    [[shouted]] = translate_lines(translator, ["- " + LINE.upper()], cfg)
    assert shouted.text == "- " + hypothesis_text(translator.tgt_tokenizer, upper[0]) and shouted.text[2:].isupper()
    [[tagged]] = translate_lines(translator, ["1. A <b>black</b> dog leaps over a log."], cfg, markup=True)
    [[tagged_alone]] = translate_lines(translator, ["A <b>black</b> dog leaps over a log."], cfg, markup=True)
    assert tagged.text == "1. " + tagged_alone.text and "<b>" in tagged.text
    # copy_verbatim off, or a line with a prefix: the model is given the marker
    searched = []
    search = translator.translate_batch
    monkeypatch.setattr(translator, "translate_batch", lambda sources, *a, **k: searched.extend(sources) or search(sources, *a, **k))
    translate_lines(translator, ["- " + LINE], cfg.model_copy(update={"copy_verbatim": False}))
    translate_lines(translator, ["- " + LINE], cfg, prefixes=["Ein"])
    assert [translator.src_tokenizer.decode(ids) for ids in searched] == ["- " + LINE] * 2
