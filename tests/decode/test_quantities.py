"""Quantities written as digits in a translation by hand-made word alignments
(nmt.decode.text.quantities)."""

from __future__ import annotations

from nmt.decode.text.markup import mark, render
from nmt.decode.text.quantities import with_quantities


def every(_: str) -> bool:
    return True


def test_the_word_aligned_to_a_quantity_becomes_its_digits():
    source, output = "A man walks 3 dogs", "Ein Mann geht mit drei Hunden"
    # A-Ein man-Mann walks-geht,mit 3-drei dogs-Hunden
    assert with_quantities(source, output, "0-0 1-1 2-2 2-3 3-4 4-5", every)[:2] == ("Ein Mann geht mit 3 Hunden", ())
    # two quantities; the other word order; a quantity already there on its own is left alone
    assert with_quantities("2 men and 3 dogs", "drei Hunde und zwei Männer", "3-0 4-1 2-2 0-3 1-4", every)[:2] == (
        "3 Hunde und 2 Männer", ())
    assert with_quantities("2 men and 3 dogs", "2 Männer und drei Hunde", "0-0 1-1 2-2 3-3 4-4", every)[:2] == (
        "2 Männer und 3 Hunde", ())
    # only the quantities `keep` kept in the sentence
    assert with_quantities("2 men and 3 dogs", "zwei Männer und drei Hunde", "0-0 1-1 2-2 3-3 4-4",
                           lambda number: number == "3")[:2] == ("zwei Männer und 3 Hunde", ())


def test_a_run_of_words_aligned_to_it_becomes_its_digits():
    source = "A man walks 3 dogs"
    # one run of neighbours: "mit drei"; punctuation at the run's edges kept
    assert with_quantities(source, "Ein Mann geht mit drei Hunden", "0-0 1-1 2-2 3-3 3-4 4-5", every)[:2] == (
        "Ein Mann geht 3 Hunden", ())
    assert with_quantities("He saw 5 cats", "Er sah (fünf) Katzen.", "0-0 1-1 2-2 3-3", every)[:2] == (
        "Er sah (5) Katzen.", ())
    # two runs: the one beside the words of "dogs", the source word after the quantity
    assert with_quantities(source, "drei Männer gehen mit drei Hunden", "3-0 1-1 2-2 2-3 3-4 4-5", every)[:2] == (
        "drei Männer gehen mit 3 Hunden", ())


def test_nothing_is_guessed_where_no_run_of_words_without_digits_is_aligned_to_it():
    source = "A man walks 3 dogs"
    assert with_quantities(source, "Ein Mann geht mit Hunden", "0-0 1-1 2-2 2-3 4-4", every) is None  # none
    # a word with digits: the model's own number, or digits joined to letters
    assert with_quantities(source, "Ein Mann geht mit 33 Hunden", "0-0 1-1 2-2 2-3 3-4 4-5", every) is None
    assert with_quantities(source, "Ein Mann geht mit 3er Hunden", "0-0 1-1 2-2 2-3 3-4 4-5", every) is None
    # two runs, neither beside the words of "dogs"
    assert with_quantities(source, "drei Männer gehen drei mit Hunden", "3-0 1-1 2-2 3-3 2-4 4-5", every) is None
    # one word aligned to two quantities
    assert with_quantities("2 men and 3 dogs", "viele Männer und Hunde", "0-0 1-1 2-2 3-0 4-3", every) is None


def test_offsets_where_sentences_meet_without_a_space_move_with_the_replaced_word():
    source = "A boy sees 12 dogs. They run."
    output = "Ein Junge sieht zwölf Hunde。他们跑"  # the second sentence joined without a space
    join = output.index("他")
    alignment = "0-0 1-1 2-2 3-3 4-4 5-5 6-6 7-7"
    text, joins, _ = with_quantities(source, output, alignment, every, (join,))
    assert text == "Ein Junge sieht 12 Hunde。他们跑" and joins == (text.index("他"),) == (join - 3,)


def test_the_alignment_follows_the_replaced_words_so_that_spans_after_them_land_where_they_stood():
    """A run of words replaced by one moves every later word; the alignment given back is the new
    output's, and a verbatim span placed by it lands beside its own neighbour ("zu"), not a word
    further on, where the alignment read before the replacement would put it."""
    marked = mark("A man walks 3 dogs to https://x.org in the park", False, True, keep_quantity=every)
    assert marked.text == "A man walks 3 dogs to in the park"
    output = "Ein Mann geht mit ein paar Hunden zu im Park"
    before = "0-0 1-1 2-2 3-4 3-5 4-6 5-7 6-8 7-8 8-9"
    text, joins, alignment = with_quantities(marked.text, output, before, every)
    assert text == "Ein Mann geht mit 3 Hunden zu im Park"
    assert alignment == "0-0 1-1 2-2 3-4 4-5 5-6 6-7 7-7 8-8"
    assert render(marked, text, alignment) == "Ein Mann geht mit 3 Hunden zu https://x.org im Park"
    assert render(marked, text, before) == "Ein Mann geht mit 3 Hunden zu im https://x.org Park"
