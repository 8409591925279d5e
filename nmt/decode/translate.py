"""Translation of text lines with any engine (nmt.decode.engines.engine): encode, batch by tokens, search,
restore the order; paragraphs, casing, markup and verbatim spans around it; the decode settings.
One output per input line, always: an empty line translates to an empty line, a sentence longer
than the model's positions is translated in parts (nmt.decode.text.paragraphs), and a line
translated whole that is longer is truncated (with a warning), never dropped.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from nmt.config import (DecodeConfig, Recipe, apply_override, load_recipe, recipe_from_dict, recipe_to_dict,
                        section_of)
from nmt.data.batching import pack_by_tokens
from nmt.data.languages import Controls
from nmt.data.tokenizer import encode_lines, encode_within
from nmt.decode.engines.capabilities import refusal, require
from nmt.decode.request import Line
from nmt.decode.search import Hypothesis, output_limit
from nmt.decode.selection import candidate_search, choose, sample_candidates, selecting
from nmt.errors import NmtError
from nmt.recipe_errors import DecodeSettingPlaces
from nmt.decode.text.asides import ASIDE, aside_text, written_aside
from nmt.decode.text.casing import (capitalized_words, hypothesis_text, lowered, recapitalized, sentence_case,
                                   source_case)
from nmt.decode.text.end_marks import end_marks, with_end_marks
from nmt.decode.text.fragments import completed, without_added_stop
from nmt.decode.text.list_markers import list_marker
from nmt.decode.text.markup import mark_lines, monotone_alignment, output_words, render, walk
from nmt.decode.text.names import capitals_mark_names, doubtful_words, name_spans, with_names
from nmt.decode.text.paragraphs import SplitLines, join_hypotheses, split_lines
from nmt.decode.text.target_language import in_target_language
from nmt.decode.text.quantities import with_quantities
from nmt.decode.text.verbatim import quantity_spans
from nmt.data.words import word_spans
from nmt.devices import torch_on_one_thread


def _encode(translator, lines: list[str], warn: Callable[[str], None], numbers: list[int],
            line_controls: list[Controls] | None = None) -> list[list[int]]:
    """Source token ids, after the line's source control tokens (a language token: `line_controls`,
    else the translator's); empty lines stay empty."""
    controls = [c.source for c in line_controls] if line_controls else [translator.controls.source] * len(lines)
    room = translator.max_positions - 1 - max((len(c) for c in controls), default=0)  # + EOS
    encoded = encode_within(translator.src_tokenizer, lines, room, "", warn, 0, numbers)
    return [[*control, *ids] if ids else ids for control, ids in zip(controls, encoded)]


def _encode_prefixes(translator, prefixes: list[str] | None, warn: Callable[[str], None], numbers: list[int],
                     forced: list[tuple[int, ...]]) -> list[list[int]] | None:
    """Each line's forced output tokens: its decoder-side control tokens (`forced`), then its
    prefix's; None where no line has any."""
    if not any(forced) and not (prefixes and any(prefixes)):
        return None
    room = translator.max_positions - 2 - max(len(f) for f in forced)  # room for one more token and EOS
    texts = prefixes if prefixes else [""] * len(forced)
    encoded = encode_within(translator.tgt_tokenizer, texts, room, "prefix of ", warn, 0, numbers)
    return [[*f, *ids] for f, ids in zip(forced, encoded)]


def _encode_constraints(translator, constraints: list[list[str]], encoded: list[list[int]],
                        prefix_ids: list[list[int]] | None, cfg: DecodeConfig, warn: Callable[[str], None],
                        numbers: list[int]) -> list[list[list[int]]]:
    """Each line's phrases as target token ids; a line whose phrases cannot fit in its output
    limit (with its prefix) is translated without them, with a warning."""
    out = []
    for i, phrases in enumerate(constraints):
        ids = [p for p in encode_lines(translator.tgt_tokenizer, phrases) if p] if phrases else []
        prefix = len(prefix_ids[i]) if prefix_ids else 0
        limit = output_limit(len(encoded[i]) + 1, cfg.max_len_a, cfg.max_len_b, translator.max_positions, prefix)
        needed = prefix + sum(len(p) for p in ids)
        if ids and needed > limit:
            warn(f"line {numbers[i]}: constraints: {needed} tokens with the prefix, more than the output "
                 f"limit of {limit}; translated without them")
            ids = []
        out.append(ids)
    return out


def quantities_kept(translator, cfg: DecodeConfig) -> Callable[[str], bool] | None:
    """Which quantities ("3 people") stay in their sentence and are written as digits where its
    translation has them its own way (decode.quantities_in_place, nmt.decode.text.quantities),
    rather than being taken out with the line's other verbatim spans: those the source vocabulary
    spells (the model has to read them). None, all taken out, where the engine gives no word
    alignments."""
    if not (cfg.copy_verbatim and cfg.quantities_in_place) or refusal(translator, "alignments") is not None:
        return None
    tokenizer = translator.src_tokenizer
    return functools.cache(lambda number: tokenizer.decode(tokenizer.encode(number)) == number)


def translate_lines(translator, lines: list[str], cfg: DecodeConfig, warn: Callable[[str], None] = lambda _: None,
                    first_line: int = 1, prefixes: list[str] | None = None, extras: Iterable[str] = (),
                    constraints: list[list[str]] | None = None,
                    line_controls: list[Controls] | None = None,
                    markup: bool | list[bool] = False) -> list[list[Hypothesis]]:
    """`translate` for texts, with what each line asks given as lists beside them (None: nothing
    for any line; `markup` for every line, or per line)."""
    flags = markup if isinstance(markup, list) else [markup] * len(lines)
    return translate(translator, [
        Line(text, prefixes[i] if prefixes else "", tuple(constraints[i]) if constraints else (), flags[i],
             line_controls[i] if line_controls else None) for i, text in enumerate(lines)],
        cfg, warn, first_line, extras)


def translate(translator, requests: list[Line], cfg: DecodeConfig, warn: Callable[[str], None] = lambda _: None,
              first_line: int = 1, extras: Iterable[str] = (),
              finished: Callable[[list[int]], None] = lambda _: None) -> list[list[Hypothesis]]:
    """Translate in length-sorted token batches and return results in input order, one per line,
    each request whole (nmt.decode.request.Line). A line marked `markup` is read as inline
    markup, and its tags are put back into the output around the words aligned to those they
    wrapped; with decode.copy_verbatim, numbers, URLs and the like are copied into the output
    unchanged (both nmt.decode.text.markup; the output text is then `Hypothesis.text`), a
    quantity ("3 people") left in its sentence and written as digits (`quantities_kept`); with
    decode.markdown, Markdown's inline marks are carried across as tags are
    (nmt.decode.text.markdown); with decode.copy_names, a name the model was unsure of is written
    as it stands (nmt.decode.text.names); with decode.parentheses, an aside in parentheses keeps
    them, a longer one translated apart (nmt.decode.text.asides). With decode.normalize_case, a
    line in capitals or Title Case is translated in sentence case (nmt.decode.text.casing); with
    decode.split_sentences, a line of several sentences is translated sentence by sentence and joined again
    (nmt.decode.text.paragraphs), each completed where typed as in a chat with
    decode.complete_sentences (nmt.decode.text.fragments), and one already in the target language
    copied with decode.keep_target_language (nmt.decode.text.target_language), and each ends in
    its source's question or exclamation marks with decode.end_marks (nmt.decode.text.end_marks);
    `_translate_rows` says what prefixes, constraints, language tokens (`controls`) and `extras` do.
    A line with a prefix or constraints is translated as it is written. `finished` hears, after each
    batch, the indices of the requests whose translations it completed (for a count of progress).
    Beside an engine with threads of its own, torch works on one thread (torch_on_one_thread)."""
    with torch_on_one_thread() if translator.capabilities.own_threads else contextlib.nullcontext():
        return _translate(translator, requests, cfg, warn, first_line, extras, finished)


def _translate(translator, requests: list[Line], cfg: DecodeConfig, warn: Callable[[str], None], first_line: int,
               extras: Iterable[str], finished: Callable[[list[int]], None]) -> list[list[Hypothesis]]:
    lines = [r.text for r in requests]
    prefixes = [r.prefix for r in requests] if any(r.prefix for r in requests) else None
    constraints = [list(r.constraints) for r in requests] if any(r.constraints for r in requests) else None
    line_controls = None
    if any(r.controls is not None for r in requests):
        line_controls = [translator.controls if r.controls is None else r.controls for r in requests]
    numbers = list(range(first_line, first_line + len(lines)))
    as_written = [bool(r.prefix or r.constraints) for r in requests]
    markers = ["" if written or not cfg.copy_verbatim else list_marker(line) for line, written in zip(lines, as_written)]
    lines = [line[len(marker):] for line, marker in zip(lines, markers)]
    keep_quantity = quantities_kept(translator, cfg)
    marked = mark_lines(lines, [r.markup for r in requests], cfg.copy_verbatim, as_written, warn, numbers,
                        keep_quantity, cfg.markdown, cfg.parentheses)
    _translate_asides(translator, requests, marked, cfg, warn, numbers)
    lines = [m.text if m is not None else line for line, m in zip(lines, marked)]
    # words in capitals in an ordinary sentence, translated in lower case (nmt.decode.text.casing)
    pieces = _pieces(translator)
    capitals = [[] if written or not cfg.normalize_case else capitalized_words(line, pieces)
                for line, written in zip(lines, as_written)]
    words_in_capitals = [[line[a:b] for a, b in spans] for line, spans in zip(lines, capitals)]
    lines = [lowered(line, spans) for line, spans in zip(lines, capitals)]
    held = [bool(keep_quantity) and not written and bool(quantity_spans(line, keep_quantity))
            for line, written in zip(lines, as_written)]
    can_align = refusal(translator, "alignments") is None
    can_name = can_align and cfg.copy_names and refusal(translator, "token_scores") is None
    # names are written sentence by sentence (_translate_paragraphs); here, which lines have any
    names = [can_name and not written and capitals_mark_names(_direction(translator, request.controls)[0])
             and bool(name_spans(line, pieces)) for line, written, request in zip(lines, as_written, requests)]
    # Lines with items to place, quantities or names to write are translated with alignments (where
    # the engine gives them), the rest without; names ask for the tokens' probabilities too.
    aligned = [can_align and (kept or named or (m is not None and bool(m.items)))
               for m, kept, named in zip(marked, held, names)]
    with_alignments = set(extras) | {"alignments"} | ({"token_scores"} if any(names) else set())
    results: list[list[Hypothesis]] = [[] for _ in lines]
    for wanted, group_extras in ((False, set(extras)), (True, with_alignments)):
        rows = [i for i, a in enumerate(aligned) if a == wanted]
        if not rows:
            continue

        def pick(values):
            return [values[i] for i in rows] if values else None

        group = _translate_paragraphs(translator, pick(lines), cfg, warn, pick(numbers), pick(as_written),
                                      pick(prefixes), group_extras, pick(constraints), pick(line_controls),
                                      lambda done, rows=rows: finished([rows[j] for j in done]),
                                      pick(names) if wanted else None)
        for i, hyps in zip(rows, group):
            results[i] = hyps
    missed = []  # lines whose quantities could not be written as digits
    for i, (request, hyps, m, line, marker) in enumerate(zip(requests, results, marked, lines, markers)):
        if line and len(hyps) == 1 and not hyps[0].tokens and hyps[0].text == line:
            hyps[0].text = request.text  # copied, nothing to translate: as written, its tags and spans in place
            continue
        for h in hyps:
            if held[i]:
                written = with_quantities(line, hypothesis_text(translator.tgt_tokenizer, h), h.alignment or "",
                                          keep_quantity, h.joins)
                if written is None:
                    missed.append(i)
                    break
                h.text, h.joins, h.alignment = written
            h.token_log_probs = h.token_log_probs if "token_scores" in extras else None
            if words_in_capitals[i]:  # the same length: joins hold
                h.text = recapitalized(hypothesis_text(translator.tgt_tokenizer, h), words_in_capitals[i])
            if m is not None:
                text = hypothesis_text(translator.tgt_tokenizer, h)
                alignment = h.alignment if h.alignment is not None else monotone_alignment(
                    len(word_spans(m.text)), output_words(text, h.joins))
                h.text, h.joins = render(m, text, alignment, h.joins), ()
            h.alignment = h.alignment if "alignments" in extras else None
            if marker:  # a list's marker in front, as it stood (alignments count the words after it)
                h.text = marker + hypothesis_text(translator.tgt_tokenizer, h)
                h.joins = tuple(offset + len(marker) for offset in h.joins)
    if missed:  # translated again with their quantities taken out, which copies them exactly
        taken_out = cfg.model_copy(update={"quantities_in_place": False})
        again = _translate(translator, [requests[i] for i in missed], taken_out, lambda _: None, first_line,
                           extras, lambda _: None)  # warned about, and counted, the first time
        for i, hyps in zip(missed, again):
            results[i] = hyps
    return results


def _translate_asides(translator, requests: list[Line], marked: list, cfg: DecodeConfig,
                      warn: Callable[[str], None], numbers: list[int]) -> None:
    """Each aside taken out of a line as a point (nmt.decode.text.asides) written as its
    translation, all of them translated in one call, each into its line's language (warnings
    name the line)."""
    points = [(i, item) for i, m in enumerate(marked) if m is not None
              for item in walk(m.items) if item.point and item.name == ASIDE]
    if not points:
        return
    owners = [numbers[i] for i, _ in points]

    def warn_of_its_line(message: str) -> None:  # "line 3:" names the third aside; its line is owners[2]
        warn(_LINE_NUMBER.sub(lambda m: f"line {owners[int(m.group(1)) - 1]}", message, count=1))

    asides = [Line(aside_text(item.open, marked[i].escape), controls=requests[i].controls) for i, item in points]
    results = _translate(translator, asides, cfg, warn_of_its_line, 1, (), lambda _: None)
    for (i, item), hyps in zip(points, results):
        item.open = written_aside(aside_text(item.open, marked[i].escape),
                                  hypothesis_text(translator.tgt_tokenizer, hyps[0]), marked[i].escape)


_LINE_NUMBER = re.compile(r"^line (\d+)")


def _direction(translator, controls: Controls | None) -> tuple[str | None, str | None]:
    """A line's (source, target) languages: its own direction's, else the translator's, else its
    recipe's (None: not known)."""
    for chosen in (controls, translator.controls):
        if chosen is not None and chosen.languages:
            return chosen.languages
    return translator.recipe.data.src_lang, translator.recipe.data.tgt_lang


def _pieces(translator) -> Callable[[str], int]:
    """A word's number of source pieces (remembered for the words of one translation)."""
    tokenizer = translator.src_tokenizer
    return functools.cache(lambda word: len(tokenizer.encode(word)))


def _translate_paragraphs(translator, lines: list[str], cfg: DecodeConfig, warn: Callable[[str], None],
                          numbers: list[int], as_written: list[bool], prefixes: list[str] | None,
                          extras: Iterable[str], constraints: list[list[str]] | None,
                          line_controls: list[Controls] | None,
                          finished: Callable[[list[int]], None] = lambda _: None,
                          find_names: list[bool] | None = None) -> list[list[Hypothesis]]:
    """Each line's sentences (decode.split_sentences) translated in one run of `_translate_rows`,
    each in sentence case where it, or its whole line, is in capitals or Title Case
    (decode.normalize_case; not a line `as_written`), and joined again into the line's hypotheses.
    In the sentences of a line that `find_names` marks, the names are written as they stand
    (`_write_names`; their hypotheses carry alignments and token scores). `finished` hears of
    each line once its last sentence is translated."""
    if cfg.split_sentences:
        room = translator.max_positions - 1 - len(translator.controls.source)
        split = split_lines(lines, translator.recipe.data.src_lang,
                            [bool(constraints and constraints[i]) for i in range(len(lines))],
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
    # each row's question and exclamation marks, which its output ends in (decode.end_marks)
    marks = [end_marks(sentence, _direction(translator, line_controls[i] if line_controls else None)[0])
             if cfg.end_marks and ends and not as_written[i] else "" for sentence, i, ends in zip(typed, owner, split.ends)]
    stops = [False] * len(rows)  # rows given a full stop (decode.complete_sentences), which the output loses
    if cfg.complete_sentences:
        for row, (i, begins, ends) in enumerate(zip(owner, split.begins, split.ends)):
            if not as_written[i]:
                rows[row], stops[row] = completed(rows[row], begins, ends, cfg.end_marks)
    pending = Counter(owner)  # each line's sentences not yet translated

    def rows_finished(done: list[int]) -> None:
        pending.subtract(owner[row] for row in done)
        complete = sorted({owner[row] for row in done if pending[owner[row]] == 0})
        if complete:
            finished(complete)

    per_row = _translate_rows(
        translator, rows, cfg, warn, [numbers[i] for i in owner],
        [prefixes[i] if split.first_of_line(row) else "" for row, i in enumerate(owner)] if prefixes else None,
        extras, [constraints[i] for i in owner] if constraints else None,
        [line_controls[i] for i in owner] if line_controls else None, rows_finished)
    for hyps, case, stop, row, as_typed in zip(per_row, cases, stops, rows, typed):
        for h in hyps:
            h.upper = case == "upper"
            if row != as_typed and not h.tokens and h.text == row:  # copied, not translated: as typed
                h.text = as_typed
            elif stop and h.tokens:
                h.text = without_added_stop(hypothesis_text(translator.tgt_tokenizer, h))
    if find_names:
        pieces = _pieces(translator)
        for row, i in enumerate(owner):
            if find_names[i] and (spans := name_spans(rows[row], pieces)):
                for h in per_row[row]:
                    _write_names(translator, rows[row], spans, h)
    for row in (row for row, ending in enumerate(marks) if ending):
        target = _direction(translator, line_controls[owner[row]] if line_controls else None)[1]
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


def _translate_rows(translator, lines: list[str], cfg: DecodeConfig, warn: Callable[[str], None], numbers: list[int],
                    prefixes: list[str] | None = None, extras: Iterable[str] = (),
                    constraints: list[list[str]] | None = None,
                    line_controls: list[Controls] | None = None,
                    finished: Callable[[list[int]], None] = lambda _: None) -> list[list[Hypothesis]]:
    """Translate in length-sorted token batches and return results in input order (warnings
    name each row by its line number in `numbers`); with
    `line_controls` (per line: a multilingual model's language tokens), each line goes into
    its own language instead of the translator's; with
    `prefixes` (text, "" for none), each output starts with its line's prefix; with
    `constraints` (phrases per line), each output contains its line's phrases (a line whose
    phrases cannot all be placed gets the best output found and a warning). `extras` adds to
    each hypothesis its tokens' log-probabilities ("token_scores") and its word alignment
    ("alignments", nmt.decode.text.alignment). `finished` hears the rows whose hypotheses are final:
    after each batch, or all at the end where a choice among candidates or `extras` follow the search."""
    encoded = _encode(translator, lines, warn, numbers, line_controls)
    # A row without a letter ("...", "•", "---", the "." left of "1.") has nothing to translate:
    # it is copied as written, where a model asked to translate it makes up a sentence ("..." gave
    # "Ein Kind."). A row with a prefix or constraints is searched as asked.
    searched_as_asked = [bool(prefixes and prefixes[i]) or bool(constraints and constraints[i])
                         for i in range(len(lines))]
    copied = [bool(ids) and not any(c.isalpha() for c in line) and not asked
              for line, ids, asked in zip(lines, encoded, searched_as_asked)]
    # A row already in the target language is copied too: the model would make one up.
    if cfg.keep_target_language:
        candidates = [i for i, ids in enumerate(encoded) if ids and not copied[i] and not searched_as_asked[i]]
        directions = [_direction(translator, line_controls[i] if line_controls else None) for i in candidates]
        for i, kept in zip(candidates, in_target_language([lines[i] for i in candidates], directions, warn)):
            copied[i] = kept
    encoded = [[] if copy else ids for ids, copy in zip(encoded, copied)]
    forced = [c.target for c in line_controls] if line_controls else [translator.controls.target] * len(lines)
    prefix_ids = _encode_prefixes(translator, prefixes, warn, numbers, forced)
    constraint_ids = None
    if constraints and any(constraints):
        constraint_ids = _encode_constraints(translator, constraints, encoded, prefix_ids, cfg, warn, numbers)
    results: list[list[Hypothesis]] = [[Hypothesis([], 0.0, 0.0)] for _ in lines]
    nonempty = np.array([i for i, ids in enumerate(encoded) if ids], dtype=np.int64)
    search_cfg, copies = candidate_search(cfg)  # several candidates per line where one is chosen among them
    after_search = selecting(cfg) or bool(extras)  # work on every row's hypotheses after the search
    empty = [i for i, ids in enumerate(encoded) if not ids]
    if empty and not after_search:
        finished(empty)
    if len(nonempty):
        lengths = np.array([len(encoded[i]) + 1 for i in range(len(encoded))])
        # Lines with constraints are batched apart from the rest: a batch with any constraint runs the
        # constrained search (nmt.decode.constraints) for every line in it, which is slower and
        # searches differently, so a line's output would depend on its neighbours' constraints.
        constrained = np.array([bool(constraint_ids and constraint_ids[i]) for i in range(len(encoded))])
        groups = (nonempty[~constrained[nonempty]], nonempty[constrained[nonempty]])
        batches = [batch for group in groups
                   for batch in pack_by_tokens(group[np.argsort(lengths[group], kind="stable")], lengths, cfg.max_tokens)]
        for batch in batches:
            rows = batch.tolist()
            batch_prefixes = [prefix_ids[i] for i in rows] if prefix_ids else None
            batch_constraints = [constraint_ids[i] for i in rows] if constraint_ids else None
            if copies > 1:
                if batch_constraints and any(batch_constraints):
                    raise NmtError("lexical constraints need beam search: decode.mbr.source sampling draws the "
                                   "candidates (choose source beam)")
                batch_results = [sample_candidates(translator, encoded[i], prefix_ids[i] if prefix_ids else None,
                                                   search_cfg, copies) for i in rows]
            else:
                batch_results = translator.translate_batch([encoded[i] for i in rows], search_cfg, batch_prefixes,
                                                           batch_constraints)
            for i, hyps in zip(rows, batch_results):
                for h in hyps:  # the decoder-side control tokens are given, not part of the translation
                    h.tokens = h.tokens[len(forced[i]):]
                results[i] = hyps
                if hyps and hyps[0].constraints_met is False:
                    warn(f"line {numbers[i]}: constraints: not all could be placed within the output limit; "
                         "the best output found is given")
            if not after_search:
                finished(rows)
    for i in np.flatnonzero(copied):
        words = len(word_spans(lines[i]))  # no tokens, no scores; each word linked to itself
        results[i] = [Hypothesis([], 0.0, 0.0, text=lines[i], token_log_probs=[] if "token_scores" in extras else None,
                                 alignment=" ".join(f"{k}-{k}" for k in range(words)) if "alignments" in extras else None)]
    if selecting(cfg):
        choose(translator, lines, results, cfg)
    if extras:
        _annotate(translator, encoded, results, set(extras), forced)
    if after_search:
        finished(list(range(len(lines))))
    return results


def _annotate(translator, sources: list[list[int]], results: list[list[Hypothesis]], extras: set[str],
              forced: list[tuple[int, ...]], batch_size: int = 64) -> None:
    """Fill in the hypotheses' token_log_probs and/or alignment, in batches of hypotheses; each
    output is read after its line's `forced` tokens, whose own scores and alignments are left out."""
    from nmt.decode.text.alignment import align_batch

    if "alignments" in extras:
        require(translator, "alignments")
    pairs = [(i, h) for i, hyps in enumerate(results) for h in hyps if sources[i]]
    # in order of length, so that each batch pads little (and CTranslate2's attention pass, which
    # decodes every output of a batch up to the longest, decodes few steps past the others)
    pairs.sort(key=lambda pair: (len(pair[1].tokens), len(sources[pair[0]])))
    src_piece, tgt_piece = translator.src_tokenizer.id_to_piece, translator.tgt_tokenizer.id_to_piece
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start:start + batch_size]
        srcs, outs = [sources[i] for i, _ in chunk], [[*forced[i], *h.tokens] for i, h in chunk]
        given = [len(forced[i]) for i, _ in chunk]
        if "token_scores" in extras:
            for (_, h), n, scores in zip(chunk, given, translator.score_batch(srcs, outs)):
                h.token_log_probs = scores[n: n + len(h.tokens)]
        if "alignments" in extras:
            lines = align_batch(translator.alignment_attention(srcs, outs), srcs, outs,
                                [[src_piece(t) for t in s] for s in srcs], [[tgt_piece(t) for t in o] for o in outs],
                                len(translator.controls.source), given)
            for (_, h), line in zip(chunk, lines):
                h.alignment = line


def decode_settings(recipe: Recipe, decode_from: Path | None = None, shortcuts: dict | None = None,
                    overrides: list[str] = ()) -> DecodeConfig:
    """The settings a translation runs with, resolved in one place, each step over the one before:
    the checkpoint's recipe, the decode section of another recipe (`--decode-from`), the CLI's
    shortcut flags (`--beam-size 5` is `--set decode.beam_size=5`, `--mbr 4` `{"mbr.candidates": 4}`;
    None: not given), `--set`."""
    raw = recipe_to_dict(recipe)
    if decode_from is not None:
        raw["decode"] = recipe_to_dict(load_recipe(decode_from))["decode"]
    given = {key: value for key, value in (shortcuts or {}).items() if value is not None}
    for key, value in given.items():  # a dotted key sets a section's key: "mbr.candidates" for --mbr N
        section, leaf = section_of(raw["decode"], key, f"decode.{key}")
        section[leaf] = value
    for assignment in overrides:
        apply_override(raw, assignment)
    # an error names where its value came from: --set, a shortcut such as --beam-size, or --decode-from's line
    places = DecodeSettingPlaces(decode_from and Path(decode_from), given, list(overrides))
    return recipe_from_dict(raw, "the decode options", say=lambda note: print(note, file=sys.stderr), places=places).decode
