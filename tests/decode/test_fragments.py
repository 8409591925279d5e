"""Sentences typed as in a chat (nmt.decode.text.fragments): completed for the model by hand-made
cases, and through translate_lines, where the output loses the full stop it did not have."""

from __future__ import annotations

from nmt.decode.text.casing import hypothesis_text
from nmt.decode.text.fragments import completed, without_added_stop
from nmt.decode.translate import translate_lines


def test_a_sentence_begins_with_a_capital_and_ends_with_a_full_stop():
    assert completed("a dog runs") == ("A dog runs.", True)
    assert completed("A dog runs.") == ("A dog runs.", False)
    assert completed("two dogs run!") == ("Two dogs run!", False)
    assert completed("the dog is 3") == ("The dog is 3.", True)
    # a first word with a capital inside, or none at the start; an end that is not a letter or digit
    assert completed("iPhone users queue") == ("iPhone users queue.", True)
    assert completed('"a dog," he said') == ('"a dog," he said.', True)
    assert completed("a list:") == ("A list:", False)
    assert completed("我爱你") == ("我爱你", False)  # Chinese ends its sentences otherwise
    # the parts of a sentence cut in parts: only its first begins it, only its last ends it
    assert completed("a man rides,", begins=True, ends=False) == ("A man rides,", False)
    assert completed("and a dog runs", begins=False, ends=True) == ("and a dog runs.", True)
    assert without_added_stop("Ein Hund rennt.") == "Ein Hund rennt"
    assert without_added_stop("Ein Hund rennt...") == "Ein Hund rennt..."


def test_the_model_reads_the_completed_sentence_and_the_output_loses_the_added_stop(translator, cfg, searched):
    on = cfg.model_copy(update={"complete_sentences": True})  # off by default
    [typed], [written] = (translate_lines(translator, [line], on) for line in ("a black dog leaps over a log",
                                                                             "A black dog leaps over a log."))
    assert searched == ["A black dog leaps over a log."] * 2 and typed[0].tokens == written[0].tokens
    text = hypothesis_text(translator.tgt_tokenizer, written[0])
    assert text.endswith(".") and hypothesis_text(translator.tgt_tokenizer, typed[0]) == text[:-1]
    # each sentence of a paragraph; off (the default), the line as typed
    searched.clear()
    translate_lines(translator, ["a dog runs. two cats sit"], on)
    translate_lines(translator, ["a dog runs"], cfg)
    assert searched == ["A dog runs.", "Two cats sit.", "a dog runs"]
    # a sentence copied, not translated (here one in the target language): as typed, not as completed
    german = "eine gruppe von menschen steht vor einem iglu"
    [[copied]] = translate_lines(translator, [german], on)
    assert hypothesis_text(translator.tgt_tokenizer, copied) == german and not copied.tokens
