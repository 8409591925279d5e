"""How far a translation has got: the lines translated are heard after each batch (the counter
`nmt translate` shows), not only when a chunk of 5,000 lines is written."""

from __future__ import annotations

import pytest

from nmt.decode.stream import translate_stream

PARAGRAPH = "A black dog leaps over a log. Two cats sit on a wall! Is the man cold?"
LINES = ["A dog runs.", "", PARAGRAPH, "Two men talk in the street.", "A woman reads a book .",
         "A child plays.", "", "The boys swim in a lake near the house.", "A man rides a bike.", "Dogs."]


def _events(translator, cfg, chunk_lines: int) -> list[tuple[str, int]]:
    """("counted", n) for each count heard, ("output", i) for each output line, in the order they came."""
    events: list[tuple[str, int]] = []
    outputs = translate_stream(translator, LINES, cfg, chunk_lines=chunk_lines,
                               finished=lambda n: events.append(("counted", n)))
    for i, _ in enumerate(outputs):
        events.append(("output", i))
    return events


def test_each_batch_tells_how_many_more_lines_are_translated(translator, trained_tiny):
    """Small batches: several counts within one chunk, summing to the lines once each (the
    paragraph's three sentences make one line, counted when its last is done), all heard before
    the chunk's output comes."""
    cfg = trained_tiny.decode.model_copy(update={"max_tokens": 12, "split_sentences": True})
    events = _events(translator, cfg, chunk_lines=100)
    counts = [n for kind, n in events if kind == "counted"]
    assert len(counts) >= 4 and all(n >= 0 for n in counts)
    assert sum(counts) == len(LINES)
    first_output = events.index(("output", 0))
    assert all(kind == "counted" for kind, _ in events[:first_output])
    assert [i for kind, i in events if kind == "output"] == list(range(len(LINES)))


def test_chunks_are_counted_before_their_output_and_never_past_it(translator, trained_tiny):
    cfg = trained_tiny.decode.model_copy(update={"max_tokens": 12})
    events = _events(translator, cfg, chunk_lines=4)
    heard = 0
    for kind, n in events:
        if kind == "counted":
            heard += n
        else:  # output line n is written once its whole chunk is translated
            assert heard >= min((n // 4 + 1) * 4, len(LINES))
            assert heard <= (n // 4 + 1) * 4
    assert heard == len(LINES)


@pytest.mark.parametrize("mbr", [True, False], ids=["mbr", "token_scores"])
def test_work_after_the_search_is_counted_once_it_is_done(translator, trained_tiny, mbr):
    """With a choice among candidates (MBR) or annotations (token scores) after the search, the
    lines are final only at the end: one count for the chunk."""
    cfg = trained_tiny.decode.model_copy(update={"max_tokens": 12})
    if mbr:
        cfg = cfg.model_copy(update={"mbr": cfg.mbr.model_copy(update={"candidates": 4, "source": "beam"})})
    extras = () if mbr else ("token_scores",)
    counts: list[int] = []
    out = list(translate_stream(translator, LINES, cfg, output_format="jsonl" if extras else "plain", extras=extras,
                                chunk_lines=100, finished=counts.append))
    assert len(out) == len(LINES) and counts == [len(LINES)]
