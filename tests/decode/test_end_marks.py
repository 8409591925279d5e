"""Question and exclamation marks kept (nmt.decode.text.end_marks): the rule by hand-made cases in
several target languages, and through translate_lines, against the same line translated with
decode.end_marks off."""

from __future__ import annotations

from nmt.decode.text.casing import hypothesis_text
from nmt.decode.text.end_marks import end_marks, with_end_marks, without_stop_its_source_lacks
from nmt.decode.text.fragments import completed
from nmt.decode.translate import translate_lines


def test_a_sentences_end_marks_are_read_in_any_script():
    assert end_marks("Is the man riding a bike?") == "?"
    assert end_marks("Wow!!") == "!!" and end_marks("Really?!") == "?!"
    assert end_marks("你好吗？") == "?" and end_marks("كيف حالك؟") == "?"
    assert end_marks("A dog runs.") == "" and end_marks("A dog runs") == "" and end_marks("") == ""
    assert end_marks('He asked "why?"') == ""  # the mark is the quotation's, inside it
    assert end_marks("No!!!!") == ""  # a longer run is emphasis, left as typed
    # Greek asks with a semicolon; elsewhere a semicolon ends a clause
    assert end_marks("Τι κάνεις;", "el") == "?" and end_marks("Τι κάνεις;", "ell_Grek") == "?"
    assert end_marks("one; two;", "en") == ""
    # an ellipsis as typed, a colon, a comma; a full stop is the model's own ending
    assert end_marks("A dog runs...") == "..." and end_marks("A dog runs…") == "…" and end_marks("A dog....") == ""
    assert end_marks("Ingredients:") == ":" and end_marks("材料：") == ":" and end_marks("A dog runs,") == ","
    assert end_marks("一只狗，") == "," and end_marks("A dog runs. ") == ""


def test_the_output_ends_in_the_marks_as_its_language_writes_them():
    assert with_end_marks("Ein Hund springt.", "!", "de") == "Ein Hund springt!"
    assert with_end_marks("Wirklich", "?!", "de") == "Wirklich?!"
    assert with_end_marks("Er ist 3", "?", "de") == "Er ist 3?"
    # the model's own ending stays: its marks, an ellipsis, a closing quote or bracket
    for output in ("Warum?", "Halt!", "Warte...", "Warte…", "Er sagte „Halt“", "(ja)"):
        assert with_end_marks(output, "?", "de") == output
    assert with_end_marks("一只狗在跑。", "?", "zh") == "一只狗在跑？"
    assert with_end_marks("犬が走る", "!", "ja") == "犬が走る！"
    assert with_end_marks("Τι κάνεις.", "?", "el") == "Τι κάνεις;"
    assert with_end_marks("كيف حالك.", "?", "ar") == "كيف حالك؟"
    assert with_end_marks("आप कैसे हैं।", "?", "hi") == "आप कैसे हैं?"
    # Spanish opens the sentence too, where the output has no opening mark of its own
    assert with_end_marks("Está bien.", "?", "spa_Latn") == "¿Está bien?"
    assert with_end_marks("Qué bien.", "!", "es") == "¡Qué bien!"
    assert with_end_marks("Oye, ¿estás bien.", "?", "es") == "Oye, ¿estás bien?"
    assert with_end_marks("Ein Hund.", "", "de") == "Ein Hund."
    assert with_end_marks("Zwei .", "!", "de") == "Zwei!"  # a stop the model wrote apart
    assert with_end_marks("Un chien court.", "!", "fr") == "Un chien court !"  # French spaces its marks
    assert with_end_marks("Ingrédients.", ":", "fr") == "Ingrédients :" and with_end_marks("Un chien,", ",", "fr") == "Un chien,"
    assert with_end_marks("Ein Hund rennt im Park.", "...", "de") == "Ein Hund rennt im Park..."
    assert with_end_marks("Ein Hund rennt im Park", "…", "de") == "Ein Hund rennt im Park…"
    assert with_end_marks("Zutaten.", ":", "de") == "Zutaten:" and with_end_marks("und ein Hund.", ",", "de") == "und ein Hund,"
    assert with_end_marks("材料。", ":", "zh") == "材料：" and with_end_marks("一只狗。", ",", "ja") == "一只狗、"
    assert with_end_marks("قال.", ",", "ar") == "قال،"
    assert with_end_marks("Los ingredientes.", ":", "es") == "Los ingredientes:"  # no opening mark but for ? and !


def test_an_end_mark_but_a_question_is_completed_as_a_full_stop_only_where_the_mark_comes_back():
    assert completed("a dog jumps!", marks_restored=True) == ("A dog jumps.", False)
    assert completed("a dog jumps!") == ("A dog jumps!", False)
    assert completed("does a dog jump?", marks_restored=True) == ("Does a dog jump?", False)  # a question is asked as typed
    assert completed("你好！", marks_restored=True) == ("你好！", False)  # Chinese ends otherwise
    assert completed("a dog jumps!", ends=False, marks_restored=True) == ("A dog jumps!", False)
    assert completed("ingredients:", marks_restored=True) == ("Ingredients.", False)
    assert completed("a dog runs...", marks_restored=True) == ("A dog runs.", False)
    assert completed("a dog runs,", marks_restored=True) == ("A dog runs.", False)


def test_translations_end_in_their_sources_marks(translator, cfg, searched):
    off = cfg.model_copy(update={"end_marks": False})
    lines = ["A black dog leaps over a log!", "Is a man riding a bike?", "A dog runs? Two cats sit!"]
    with_marks = [hypothesis_text(translator.tgt_tokenizer, h[0]) for h in translate_lines(translator, lines, cfg)]
    without = [hypothesis_text(translator.tgt_tokenizer, h[0]) for h in translate_lines(translator, lines, off)]
    assert searched[:4] == searched[4:]  # the model reads the same sentences either way
    assert with_marks[0] == with_end_marks(without[0], "!", "de") and with_marks[0].endswith("!")
    assert with_marks[1] == with_end_marks(without[1], "?", "de") and with_marks[1].endswith("?")
    assert with_marks[2].endswith("!") and with_marks[2] != without[2]
    # each sentence of a paragraph ends as its source does
    [first, second] = (hypothesis_text(translator.tgt_tokenizer, h[0])
                       for h in translate_lines(translator, ["A dog runs?", "Two cats sit!"], cfg))
    assert with_marks[2] == f"{first} {second}"
    # with complete_sentences, the model reads an exclamation with a full stop; the output ends in "!"
    searched.clear()
    [[exclaimed]] = translate_lines(translator, ["a black dog leaps over a log!"],
                                    cfg.model_copy(update={"complete_sentences": True}))
    assert searched == ["A black dog leaps over a log."]
    assert hypothesis_text(translator.tgt_tokenizer, exclaimed).endswith("!")


def test_a_line_with_a_prefix_or_without_letters_keeps_its_own_ending(translator, cfg):
    [[copied]] = translate_lines(translator, ["?!"], cfg)
    assert hypothesis_text(translator.tgt_tokenizer, copied) == "?!" and not copied.tokens
    [[prefixed]], [[plain]] = (translate_lines(translator, ["A dog runs?"], settings, prefixes=["Ein"])
                               for settings in (cfg, cfg.model_copy(update={"end_marks": False})))
    assert hypothesis_text(translator.tgt_tokenizer, prefixed) == hypothesis_text(translator.tgt_tokenizer, plain)


def test_a_full_stop_the_model_added_goes_where_its_source_ends_in_no_mark():
    """A title, a heading, a button's label: a bracket or quote closing it is not its end mark."""
    assert without_stop_its_source_lacks("Save file", "Datei speichern.") == "Datei speichern"
    assert without_stop_its_source_lacks("Internationalization (i18n)", "Internationalisierung (i18n).") == "Internationalisierung (i18n)"
    assert without_stop_its_source_lacks("Settings [beta]", "Einstellungen [Beta].") == "Einstellungen [Beta]"
    assert without_stop_its_source_lacks("Open <b>file</b>", "Datei <b>öffnen</b>.") == "Datei <b>öffnen</b>"
    assert without_stop_its_source_lacks("(He ran.)", "(Er rannte.)") == "(Er rannte.)"
    assert without_stop_its_source_lacks('Say "hi."', 'Sag "hallo."') == 'Sag "hallo."'
    assert without_stop_its_source_lacks("A dog runs.", "Ein Hund rennt.") == "Ein Hund rennt."
    assert without_stop_its_source_lacks("Wait", "Warte...") == "Warte..."  # an ellipsis is the model's own
