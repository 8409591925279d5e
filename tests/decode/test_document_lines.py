"""Lines as documents have them: a line without a letter (a separator, a bullet, "..."), which
has nothing to translate."""

from __future__ import annotations

import pytest

from nmt.decode.engines.engine import load_engine
from nmt.decode.text.casing import hypothesis_text
from nmt.decode.text.paragraphs import join_texts
from nmt.decode.translate import translate_lines

LETTERLESS = ["...", "•", "---", "***", "?", ":)", "→", "1.", "(1)", "2)", "$", "  —  "]


@pytest.fixture(scope="module")
def translator(trained_tiny):
    return load_engine([trained_tiny.out / "checkpoints" / "last.pt"])


@pytest.fixture(scope="module")
def cfg(trained_tiny):
    return trained_tiny.decode.model_copy(update={"precision": "fp32"})


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
    # n-best, token scores and alignments: one hypothesis without tokens, scores or links
    [[copied]] = translate_lines(translator, ["..."], cfg.model_copy(update={"nbest": 3, "beam_size": 4}),
                                 extras=("token_scores", "alignments"))
    assert (copied.text, copied.tokens, copied.token_log_probs, copied.alignment) == ("...", [], [], "")
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
