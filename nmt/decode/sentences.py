"""A line's sentences through the engine: split (decode.split_sentences), put in sentence case
where they are in capitals or Title Case, completed where typed as in a chat, searched as rows
(nmt.decode.rows), their names and end marks written, and joined again into the line's hypotheses.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from collections.abc import Callable, Iterable

from nmt.config import DecodeConfig
from nmt.data.tokenizer import encode_lines
from nmt.decode.glossary import glossary_of
from nmt.decode.memory import remembered
from nmt.decode.request import Line
from nmt.decode.rows import direction, search_rows, source_pieces
from nmt.decode.search import Hypothesis
from nmt.decode.text.casing import hypothesis_text, sentence_case, source_case
from nmt.decode.text.end_marks import end_marks, with_end_marks
from nmt.decode.text.fragments import completed, without_added_stop
from nmt.decode.text.markup import output_words
from nmt.decode.text.names import doubtful_words, name_spans, with_names
from nmt.decode.text.paragraphs import SplitLines, join_hypotheses, split_lines


def sentence_hypotheses(translator, requests: list[Line], cfg: DecodeConfig, warn: Callable[[str], None],
                        numbers: list[int], extras: Iterable[str],
                        finished: Callable[[list[int]], None] = lambda _: None,
                        find_names: list[bool] | None = None, remember: bool = False) -> list[list[Hypothesis]]:
    """Each line's sentences (decode.split_sentences) translated in one run of `search_rows`,
    each in sentence case where it, or its whole line, is in capitals or Title Case
    (decode.normalize_case), completed where typed as in a chat (decode.complete_sentences), its
    output ending in its end mark ("?", "!", "...", ":", ","; decode.end_marks), none of it for a line
    with a prefix or constraints (translated as written), each constrained to the translations of
    the terms it holds of decode.glossary (nmt.decode.glossary); and joined again into the line's
    hypotheses (`requests`: the lines, each with what it asks, as text the model reads). In the sentences of a line that
    `find_names` marks, the names are written as they stand (`_write_names`; their hypotheses
    carry alignments and token scores). With `remember` (lines whose outputs need no alignment nor
    scores), a sentence that decode.memory holds is given its translation there (nmt.decode.memory).
    `finished` hears of each line once its last sentence is translated."""
    lines = [request.text for request in requests]
    as_written = [bool(request.prefix or request.constraints) for request in requests]
    if cfg.split_sentences:
        room = translator.max_positions - 1 - len(translator.controls.source)
        split = split_lines(lines, translator.recipe.data.src_lang,
                            [bool(request.constraints) for request in requests],
                            lambda parts: [len(ids) for ids in encode_lines(translator.src_tokenizer, parts)],
                            room, warn, numbers)
    else:
        split = SplitLines(list(lines), list(range(len(lines))), [False] * len(lines), [True] * len(lines),
                           [True] * len(lines))
    owner = split.line_of
    cases: list[str | None] = [None] * len(owner)
    if cfg.normalize_case:
        line_cases = [None if fixed else source_case(line) for line, fixed in zip(lines, as_written)]
        cases = [None if as_written[i] else line_cases[i] or (source_case(sentence) if sentence != lines[i] else None)
                 for sentence, i in zip(split.sentences, owner)]
    rows = [sentence_case(sentence) if case else sentence for sentence, case in zip(split.sentences, cases)]
    typed = list(rows)
    # each row's end mark ("?!", "...", ":", ","), which its output ends in (decode.end_marks)
    marks = [end_marks(sentence, direction(translator, requests[i].controls)[0])
             if cfg.end_marks and ends and not as_written[i] else ""
             for sentence, i, ends in zip(typed, owner, split.ends)]
    stops = [False] * len(rows)  # rows given a full stop (decode.complete_sentences), which the output loses
    if cfg.complete_sentences:
        room = translator.max_positions - 1 - len(translator.controls.source)
        for row, (i, begins, ends) in enumerate(zip(owner, split.begins, split.ends)):
            if not as_written[i]:
                whole, stop = completed(rows[row], begins, ends, cfg.end_marks)
                # a part cut to fill the model's positions stays as cut where the capital or the full
                # stop would not fit (the search would lose its last token instead)
                if whole != rows[row] and len(encode_lines(translator.src_tokenizer, [whole])[0]) <= room:
                    rows[row], stops[row] = whole, stop
    pending = Counter(owner)  # each line's sentences not yet translated

    def rows_finished(done: list[int]) -> None:
        pending.subtract(owner[row] for row in done)
        complete = sorted({owner[row] for row in done if pending[owner[row]] == 0})
        if complete:
            finished(complete)

    # each sentence as its line asked: the prefix on the first alone (a line with constraints is one sentence)
    row_requests = [replace(requests[i], text=text, prefix=requests[i].prefix if split.first_of_line(row) else "")
                    for row, (text, i) in enumerate(zip(rows, owner))]
    row_numbers = [numbers[i] for i in owner]
    # (a row looked up as the model reads it, then as it was typed)
    found = remembered(translator, cfg, row_requests, typed) if remember else [None] * len(rows)
    per_row = [[Hypothesis([], 0.0, 0.0, text=text)] if text is not None else [] for text in found]
    searched = [row for row, text in enumerate(found) if text is None]
    if len(searched) < len(rows):
        rows_finished([row for row, text in enumerate(found) if text is not None])
    if searched:
        found = search_rows(translator, [row_requests[row] for row in searched], cfg, warn,
                            [row_numbers[row] for row in searched], extras,
                            lambda done: rows_finished([searched[j] for j in done]))
        for row, hyps in zip(searched, found):
            per_row[row] = hyps
    _use_glossary(translator, row_requests, per_row, cfg, warn, row_numbers, extras)
    for hyps, case, stop, row, as_typed in zip(per_row, cases, stops, rows, typed):
        for h in hyps:
            h.upper = case == "upper"
            if row != as_typed and not h.tokens and h.text == row:  # copied, not translated: as typed
                h.text = as_typed
            elif stop and h.tokens:
                h.text = without_added_stop(hypothesis_text(translator.tgt_tokenizer, h))
    if find_names:
        pieces = source_pieces(translator)
        for row, i in enumerate(owner):
            if find_names[i] and (spans := name_spans(rows[row], pieces)):
                for h in per_row[row]:
                    _write_names(translator, rows[row], spans, h)
    for row in (row for row, ending in enumerate(marks) if ending):
        target = direction(translator, requests[owner[row]].controls)[1]
        for h in (h for h in per_row[row] if h.tokens):  # not a copied row
            h.text = with_end_marks(hypothesis_text(translator.tgt_tokenizer, h), marks[row], target)
    if len(rows) == len(lines):
        return per_row
    words = _source_words(translator, rows) if "alignments" in extras else None
    if words:  # a part cut inside a word starts on the last word of the part before
        continued = split.inside_word[1:] + [False]  # the row after goes on with this one's last word
        words = [count - 1 if goes_on and count else count for count, goes_on in zip(words, continued)]
    grouped: list[list[list[Hypothesis]]] = [[] for _ in lines]
    grouped_words: list[list[int]] = [[] for _ in lines]
    for row, (i, hyps) in enumerate(zip(owner, per_row)):
        grouped[i].append(hyps)
        grouped_words[i].append(words[row] if words else 0)
    for sentences in grouped:
        if len(sentences) > 1:  # joined as texts: in capitals where a sentence was, without spaces in Chinese
            for h in (h for hyps in sentences for h in hyps):
                h.text = hypothesis_text(translator.tgt_tokenizer, h)
    return [join_hypotheses(sentences, counts if words else None) for sentences, counts in zip(grouped, grouped_words)]


def _use_glossary(translator, rows: list[Line], per_row: list[list[Hypothesis]], cfg: DecodeConfig,
                  warn: Callable[[str], None], numbers: list[int], extras: Iterable[str]) -> None:
    """Each row holding terms of decode.glossary whose output lacks a term's translation searched
    again, constrained to its terms' translations (nmt.decode.glossary): a row whose output has them
    already keeps it, where the constrained search would often choose other words around them."""
    if not cfg.glossary:
        return
    again, by_direction = [], {}
    for row, (request, hyps) in enumerate(zip(rows, per_row)):
        languages = direction(translator, request.controls)
        if languages not in by_direction:
            by_direction[languages] = glossary_of(translator, cfg, languages)
        glossary = by_direction[languages]
        terms = () if request.constraints or glossary is None else glossary.constraints(request.text)
        if terms and hyps and not glossary.holds(hypothesis_text(translator.tgt_tokenizer, hyps[0]), terms):
            again.append((row, terms))
    if again:
        constrained = search_rows(translator, [replace(rows[row], constraints=terms) for row, terms in again], cfg,
                                  warn, [numbers[row] for row, _ in again], extras)
        for (row, _), hyps in zip(again, constrained):
            per_row[row] = hyps


def _write_names(translator, sentence: str, spans: list[tuple[int, int]], h: Hypothesis) -> None:
    """The names of `sentence` at `spans` written into its hypothesis, in place of the output words
    aligned to them that the model was unsure of (nmt.decode.text.names)."""
    if not h.tokens or h.token_log_probs is None:
        return
    text = hypothesis_text(translator.tgt_tokenizer, h)
    doubtful = doubtful_words([translator.tgt_tokenizer.id_to_piece(t) for t in h.tokens], h.token_log_probs,
                              output_words(text, h.joins))
    h.text, h.joins, h.alignment = with_names(sentence, spans, text, h.alignment, doubtful, h.joins)


def _source_words(translator, sentences: list[str]) -> list[int]:
    """Each sentence's number of words as its alignment counts them (nmt.decode.text.alignment)."""
    from nmt.data.words import piece_words, word_count

    tokenizer = translator.src_tokenizer
    pieces = ([tokenizer.id_to_piece(t) for t in ids] for ids in encode_lines(tokenizer, sentences))
    return [word_count(piece_words(sentence)) for sentence in pieces]
