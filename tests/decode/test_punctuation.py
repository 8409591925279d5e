"""Punctuation the source vocabulary lacks, given to the model as the nearest mark it has
(nmt.decode.text.punctuation): by hand, and through translation with the tiny model."""

from __future__ import annotations

from nmt.decode.text.casing import hypothesis_text
from nmt.decode.text.punctuation import with_nearest_marks
from nmt.decode.translate import translate_lines


def test_a_mark_the_vocabulary_lacks_is_written_as_the_nearest_it_reads():
    ascii_only = str.isascii
    assert with_nearest_marks("A man — in a hat — says «hi» • it’s 3×4.", ascii_only) == (
        "A man - in a hat - says \"hi\" - it's 3x4.")
    # a mark the vocabulary reads stays, and so does one whose nearest it lacks too
    assert with_nearest_marks("A man — «hi»", lambda c: c.isascii() or c == "—") == 'A man — "hi"'
    assert with_nearest_marks("A man — hi", lambda c: c.isascii() and c != "-") == "A man — hi"
    assert with_nearest_marks("A plain line.", ascii_only) == "A plain line."


def test_em_dashes_are_read_as_hyphens_and_copied_spans_keep_theirs(translator, cfg):
    unk = translator.src_tokenizer.unk_id()
    assert unk in translator.src_tokenizer.encode("—") and unk not in translator.src_tokenizer.encode("-")
    dashes, hyphens, url = translate_lines(translator, [
        "A black dog — a big one — leaps over a log.", "A black dog - a big one - leaps over a log.",
        "A black dog leaps over https://x.org/a—b here."], cfg)
    assert dashes[0].tokens == hyphens[0].tokens
    assert "https://x.org/a—b" in hypothesis_text(translator.tgt_tokenizer, url[0])
