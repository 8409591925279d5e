"""Names copied into a translation as written (nmt.decode.text.names): found by hand-made piece
counts, written in by hand-made alignments and probabilities, and through translate_lines."""

from __future__ import annotations

import dataclasses
import math

from nmt.decode.text.casing import hypothesis_text
from nmt.decode.text.names import capitals_mark_names, doubtful_words, name_spans, with_names
from nmt.decode.translate import translate_lines

# a word's pieces as a small vocabulary would count them: known words one piece, names several
KNOWN = {"A", "a", "The", "the", "is", "on", "of", "top", "girl", "sits", "dog", "runs", "in", "named", "boat",
         "Frisbee", "frisbee", "festival", "Terrier", "shirt", "to", "and"}


def pieces(word: str) -> int:
    return 1 if word in KNOWN else 2 + len(word) // 4


def names_of(line: str) -> list[str]:
    return [line[a:b] for a, b in name_spans(line, pieces)]


def test_a_capitalized_word_inside_a_sentence_that_the_vocabulary_spells_in_pieces_is_a_name():
    assert names_of("A girl sits on top of a Hummer.") == ["Hummer"]
    # the capitalized words beside it join it; a sentence's first word only where it is unknown too
    assert names_of("A Boston Terrier runs.") == ["Boston Terrier"]
    assert names_of("Lynyrd Skynyrd is on.") == ["Lynyrd Skynyrd"]
    assert names_of('A boat named "El Corazon" runs.') == ["El Corazon"]
    assert names_of("A dog in Kids Food Basket, Boston.") == ["Kids Food Basket", "Boston"]  # a comma ends a name
    # not names: a word the vocabulary knows (one piece), or spells in fewer pieces in lower case
    # ("Festival"), a sentence's first word alone, words in capitals, lines without capitals inside
    assert names_of("A dog runs to the Frisbee festival.") == []
    assert names_of("A dog runs to the Festival.") == []
    assert names_of("Hummer runs. Boston is on top.") == []
    assert names_of("A dog runs. Boston is on top of a Hummer.") == ["Hummer"]
    assert names_of("A dog in AMC and a shirt.") == []


def test_a_language_that_capitalizes_every_noun_has_no_names_by_capitals():
    assert [capitals_mark_names(lang) for lang in ("en", "fr", "en_US", "eng_Latn", None)] == [True] * 5
    assert [capitals_mark_names(lang) for lang in ("de", "de-AT", "deu_Latn", "lb", "ltz_Latn")] == [False] * 5


def test_the_words_holding_a_token_of_low_probability_are_doubtful():
    sure, unsure = math.log(0.9), math.log(0.05)
    pieces_ = ["▁Ein", "▁Mäd", "chen", "▁auf", "▁einer", "▁Hi", "tze", "."]
    assert doubtful_words(pieces_, [sure, sure, unsure, sure, sure, sure, unsure, sure], 5) == {1, 4}
    assert doubtful_words(pieces_, [sure] * 8, 5) == set()
    # pieces whose words are not the output's (a text written otherwise than its tokens): none
    assert doubtful_words(pieces_, [unsure] * 8, 6) == set()


def test_the_doubtful_words_aligned_to_a_name_are_replaced_by_it():
    source = "A girl sits on top of a Hummer."
    output = "Ein Mädchen sitzt oben auf einer Hitze."
    spans = name_spans(source, pieces)
    # A-Ein girl-Mädchen sits-sitzt on,top-oben of-auf a-einer Hummer-einer,Hitze
    alignment = "0-0 1-1 2-2 3-3 4-3 5-4 6-5 7-5 7-6"
    # of the two words aligned to it, the one the model was unsure of; the full stop stays
    assert with_names(source, spans, output, alignment, {6}) == (
        "Ein Mädchen sitzt oben auf einer Hummer.", (), "0-0 1-1 2-2 3-3 4-3 5-4 6-5 7-5 7-6")
    assert with_names(source, spans, output, alignment, {5, 6})[0] == "Ein Mädchen sitzt oben auf Hummer."
    # nothing doubtful, or the name there already: the output as the model wrote it
    assert with_names(source, spans, output, alignment, set())[0] == output
    assert with_names(source, spans, "Ein Mädchen sitzt auf einem Hummer.", alignment, {6})[0] == (
        "Ein Mädchen sitzt auf einem Hummer.")


def test_the_names_words_the_output_has_beside_the_run_are_not_written_twice_and_digits_are_not_replaced():
    source = "A Boston Terrier runs."
    spans = name_spans(source, pieces)
    # A-Ein Boston-Rallye Terrier-Rallye,Terrier runs-rennt
    alignment = "0-0 1-1 2-1 2-2 3-3"
    assert with_names(source, spans, "Ein Rallye Terrier rennt.", alignment, {1})[0] == "Ein Boston Terrier rennt."
    assert with_names(source, spans, "Ein Rallye Hund rennt.", alignment, {1})[0] == "Ein Boston Terrier Hund rennt."
    # a word with digits (a quantity or number copied there) is never a name's place
    assert with_names(source, spans, "Ein 32 Terrier rennt.", alignment, {1})[0] == "Ein 32 Terrier rennt."


def test_a_name_of_several_words_takes_the_place_of_one_and_the_alignment_follows():
    source = "A dog runs to Vitamin Shoppe today"
    spans = name_spans(source, pieces)
    output = "Ein Hund läuft zum Geschäft heute"
    text, joins, alignment = with_names(source, spans, output, "0-0 1-1 2-2 3-3 4-4 5-4 6-5", {4})
    assert text == "Ein Hund läuft zum Vitamin Shoppe heute"
    # both source words linked to both new words; "today" to "heute", now the sixth word
    assert alignment == "0-0 1-1 2-2 3-3 4-4 5-4 4-5 5-5 6-6"
    # two runs aligned to it: the one beside the next source word's words
    text, _, _ = with_names(source, spans, "Geschäft Ein Hund läuft zum Laden heute", "4-0 0-1 1-2 2-3 3-4 5-5 6-6",
                            {0, 5})
    assert text == "Geschäft Ein Hund läuft zum Vitamin Shoppe heute"


def test_names_through_translation(translator, cfg, monkeypatch):
    """translate_lines with the tiny model: the output words aligned to a name, where the model
    gave them a low probability, become the name; with copy_names off, or sure outputs, or a German
    source, the model's own words; the alignment asked for describes the output given."""
    import nmt.decode.text.alignment as alignment

    line = "A dog runs to Hummer."
    spans = name_spans(line, lambda w: len(translator.src_tokenizer.encode(w)))
    assert [line[a:b] for a, b in spans] == ["Hummer"]
    search, score = translator.translate_batch, translator.score_batch
    probability = {"value": 0.01}

    def searched(sources, settings, prefixes=None, constraints=None):
        hyps = search(sources, settings, prefixes, constraints)
        for nbest in hyps:
            nbest[0].tokens = translator.tgt_tokenizer.encode("Ein Hund läuft zu Hitze.")
        return hyps

    monkeypatch.setattr(translator, "translate_batch", searched)
    monkeypatch.setattr(translator, "score_batch", lambda srcs, outs: [
        [math.log(probability["value"])] * len(out) for out in score(srcs, outs)])
    monkeypatch.setattr(alignment, "align_batch",
                        lambda attention, sources, *rest, **k: [" ".join(f"{i}-{i}" for i in range(5))] * len(sources))

    def text(settings, extras=()):
        [[h]] = translate_lines(translator, [line], settings, extras=extras)
        return hypothesis_text(translator.tgt_tokenizer, h), h

    assert text(cfg)[0] == "Ein Hund läuft zu Hummer."
    written, h = text(cfg, extras=("alignments",))
    assert written == "Ein Hund läuft zu Hummer." and h.alignment == "0-0 1-1 2-2 3-3 4-4" and h.token_log_probs is None
    assert text(cfg.model_copy(update={"copy_names": False}))[0] == "Ein Hund läuft zu Hitze."
    probability["value"] = 0.9
    assert text(cfg)[0] == "Ein Hund läuft zu Hitze."
    probability["value"] = 0.01
    # each sentence of a paragraph by its own tokens, beside one copied rather than translated
    german = "Eine Gruppe von Menschen steht vor einem Iglu."
    [[h]] = translate_lines(translator, [f"{line} {german}"], cfg)
    assert hypothesis_text(translator.tgt_tokenizer, h) == f"Ein Hund läuft zu Hummer. {german}"
    monkeypatch.setattr(translator, "controls", dataclasses.replace(translator.controls, languages=("de", "en")))
    assert text(cfg)[0] == "Ein Hund läuft zu Hitze."


def test_a_line_or_sentence_in_capitals_or_title_case_has_no_names_by_capitals():
    assert names_of("A Girl Sits On Top Of A Hummer") == []
    assert names_of("A GIRL SITS ON A HUMMER. A dog runs to Boston.") == ["Boston"]
    assert names_of("A Girl Sits On Top Of A Hummer. A dog runs to Boston.") == ["Boston"]
