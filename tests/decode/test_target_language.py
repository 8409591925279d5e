"""Sentences already in the target language, copied as written (nmt.decode.text.target_language):
the identifier's decisions on real sentences, and the rows the search never sees."""

from __future__ import annotations

import dataclasses

from nmt.decode.text.casing import hypothesis_text
from nmt.decode.text.target_language import in_target_language
from nmt.decode.translate import translate_lines

EN_DE = ("en", "de")
GERMAN = "Eine Gruppe von Menschen steht vor einem Iglu."
ENGLISH = "A group of people stand in front of an igloo."


def test_a_sentence_in_the_directions_target_language_is_found():
    found = in_target_language([GERMAN, ENGLISH, "Danke schön.", "Kindergarten", "Rucksack and Kindergarten are German words."],
                               [EN_DE] * 5)
    # one word is too little to tell; English with German words in it is English
    assert found == [True, False, True, False, False]
    # each line by its own direction: the codes as NLLB writes them; French into an English-German model
    # is not German; the same language on both sides, or one the identifier lacks, copies nothing
    assert in_target_language([GERMAN, GERMAN, "Un groupe de personnes devant un igloo.", GERMAN, GERMAN],
                              [("eng_Latn", "deu_Latn"), ("de", "en"), EN_DE, ("de", "de"), ("en", "xx")]) == [
        True, False, False, False, False]
    assert in_target_language([], []) == []


def test_a_line_in_the_target_language_is_copied_and_never_searched(translator, cfg, searched, monkeypatch):
    read = translator.src_tokenizer.decode(translator.src_tokenizer.encode(GERMAN))  # as the tiny vocabulary spells it
    [german, english] = translate_lines(translator, [GERMAN, ENGLISH], cfg)
    assert hypothesis_text(translator.tgt_tokenizer, german[0]) == GERMAN and german[0].tokens == []
    assert searched == [ENGLISH] and english[0].tokens
    # in a paragraph, only its German sentence; as jsonl with alignments, each word linked to itself
    searched.clear()
    [[h]] = translate_lines(translator, [f"{ENGLISH} {GERMAN}"], cfg, extras=("alignments",))
    assert hypothesis_text(translator.tgt_tokenizer, h).endswith(" " + GERMAN) and searched == [ENGLISH]
    # off, or asked for with a prefix: translated
    searched.clear()
    translate_lines(translator, [GERMAN], cfg.model_copy(update={"keep_target_language": False}))
    translate_lines(translator, [GERMAN], cfg, prefixes=["Eine"])
    assert searched == [read, read]
    # the direction decides: German is the source of a German-English direction
    searched.clear()
    monkeypatch.setattr(translator, "controls", dataclasses.replace(translator.controls, languages=("de", "en")))
    translate_lines(translator, [GERMAN], cfg)
    assert searched == [read]


def test_without_py3langid_every_sentence_is_translated_and_that_is_said_once(monkeypatch):
    import nmt.decode.text.target_language as target_language
    from nmt.errors import NmtError

    def missing(needed_by, probabilities=False):
        raise NmtError(f"{needed_by} needs py3langid: pip install 'nmt[langid]'")

    monkeypatch.setattr(target_language, "identifier", missing)
    monkeypatch.setattr(target_language, "_missing_said", False)
    said = []
    for _ in range(2):
        assert in_target_language([GERMAN, ENGLISH], [EN_DE] * 2, said.append) == [False, False]
    assert said == ["decode.keep_target_language needs py3langid: pip install 'nmt[langid]'; "
                    "every sentence is translated, none copied"]
