"""Translation of text lines with any engine (nmt.decode.engines.engine), each line whole: what is
taken out of it before the model reads it and put back after (a list's marker, inline markup,
Markdown's marks, verbatim spans, asides in parentheses, words in capitals, quantities and
names), its sentences through the engine (nmt.decode.sentences, nmt.decode.rows); and the decode
settings. One output per input line, always: an empty line translates to an empty line, a
sentence longer than the model's positions is translated in parts (nmt.decode.text.paragraphs),
and a line translated whole that is longer is truncated (with a warning), never dropped.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from nmt.config import (DecodeConfig, Recipe, apply_override, load_recipe, recipe_from_dict, recipe_to_dict,
                        section_of)
from nmt.data.languages import Controls, two_letter
from nmt.data.words import word_spans
from nmt.decode.engines.capabilities import refusal
from nmt.decode.memory import remembered
from nmt.decode.request import Line
from nmt.decode.rows import direction, source_pieces, source_reads
from nmt.decode.search import Hypothesis
from nmt.decode.sentences import sentence_hypotheses
from nmt.decode.text.asides import ASIDE, aside_text, written_aside
from nmt.decode.text.bbcode import bbcode_markup, from_bbcode_markup
from nmt.decode.text.casing import capitalized_words, hypothesis_text, lowered, recapitalized
from nmt.decode.text.invisible import readable_controls, without_invisible
from nmt.decode.text.list_markers import list_marker
from nmt.decode.text.markup import mark_lines, monotone_alignment, output_words, render, walk
from nmt.decode.text.names import capitals_mark_names, name_spans
from nmt.decode.text.number_marks import in_target_number_marks
from nmt.decode.text.quotes import in_target_marks
from nmt.decode.text.quantities import with_quantities
from nmt.decode.text.verbatim import quantity_spans, unreadable_spans
from nmt.devices import torch_on_one_thread
from nmt.recipe_errors import DecodeSettingPlaces


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
    unchanged (both nmt.decode.text.markup; the output text is then `Hypothesis.text`), with
    decode.copy_unreadable text in letters the source vocabulary lacks among them, a
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
    its source's end mark ("?", "!", "...", ":", ",") with decode.end_marks (nmt.decode.text.end_marks);
    nmt.decode.rows.search_rows says what prefixes, constraints, language tokens (`controls`) and
    `extras` do. A line with a prefix or constraints is translated as it is written. `finished` hears, after each
    batch, the indices of the requests whose translations it completed (for a count of progress).
    A line that decode.memory holds is given its translation there (nmt.decode.memory).
    Beside an engine with threads of its own, torch works on one thread (torch_on_one_thread).
    A line that asks for it (`bbcode`) and has BBCode gets its tags back as BBCode around the
    words aligned to those they wrapped (nmt.decode.text.bbcode)."""
    coded = {i: found for i, r in enumerate(requests) if r.bbcode and not r.markup and not (r.prefix or r.constraints)
             and (found := bbcode_markup(r.text)) is not None}
    requests = [replace(r, text=coded[i][0], markup=True) if i in coded else r for i, r in enumerate(requests)]
    found = remembered(translator, cfg, requests)
    results = [[Hypothesis([], 0.0, 0.0, text=text)] if text is not None else [] for text in found]
    rest = [i for i, text in enumerate(found) if text is None]
    if len(rest) < len(requests):
        finished([i for i, text in enumerate(found) if text is not None])
    if rest:
        with torch_on_one_thread() if translator.capabilities.own_threads else contextlib.nullcontext():
            translated = _translate(translator, [requests[i] for i in rest], cfg,
                                    naming_lines(warn, [first_line + i for i in rest]), 1, extras,
                                    lambda done: finished([rest[j] for j in done]))
        for i, hyps in zip(rest, translated):
            results[i] = hyps
    for i, (markup, codes) in coded.items():
        results[i] = [replace(h, text=from_bbcode_markup(hypothesis_text(translator.tgt_tokenizer, h), markup, codes),
                              upper=False) for h in results[i]]
    return results


def _write_marks_as_the_target_does(translator, requests: list[Line], marked: list, cfg: DecodeConfig) -> None:
    """The quotation marks (decode.quote_marks) and the numbers' decimal marks and thousands
    separators (decode.number_marks) that the lines' items put back, as each line's target
    language writes them."""
    for m, request in zip(marked, requests):
        if m is not None:
            source, target = (two_letter(lang or "") for lang in direction(translator, request.controls))
            if cfg.quotes and cfg.quote_marks == "target":
                in_target_marks(m.items, target)
            if cfg.number_marks == "target":
                in_target_number_marks(m.items, m.text, source, target)


def _translate(translator, requests: list[Line], cfg: DecodeConfig, warn: Callable[[str], None], first_line: int,
               extras: Iterable[str], finished: Callable[[list[int]], None]) -> list[list[Hypothesis]]:
    reads = source_reads(translator)
    lines = [without_invisible(readable_controls(r.text), reads) for r in requests]  # (nmt.decode.text.invisible)
    numbers = list(range(first_line, first_line + len(lines)))
    as_written = [bool(r.prefix or r.constraints) for r in requests]
    markers = ["" if written or not cfg.copy_verbatim else list_marker(line) for line, written in zip(lines, as_written)]
    lines = [line[len(marker):] for line, marker in zip(lines, markers)]
    keep_quantity = quantities_kept(translator, cfg)
    pieces = source_pieces(translator)
    can_align = refusal(translator, "alignments") is None
    can_name = can_align and cfg.copy_names and refusal(translator, "token_scores") is None
    # lines whose names are written as they stand (sentence by sentence: sentence_hypotheses)
    naming = [can_name and not written and capitals_mark_names(direction(translator, request.controls)[0])
              for written, request in zip(as_written, requests)]
    unread = reads if cfg.copy_verbatim and cfg.copy_unreadable else None
    marked = mark_lines(lines, [r.markup for r in requests], cfg.copy_verbatim, as_written, warn, numbers,
                        keep_quantity, cfg.markdown, cfg.parentheses, unread,
                        [functools.partial(name_spans, pieces=pieces) if named else None for named in naming],
                        [r.page for r in requests], cfg.quotes)
    _write_marks_as_the_target_does(translator, requests, marked, cfg)
    _translate_asides(translator, requests, marked, cfg, warn, numbers)
    lines = [m.text if m is not None else line for line, m in zip(lines, marked)]
    # a name in letters the vocabulary lacks, left in its sentence for the names rule to write
    unread_names = [[line[a:b] for a, b in unreadable_spans(line, unread)] if unread and named else []
                    for line, named in zip(lines, naming)]
    # words in capitals in an ordinary sentence, translated in lower case (nmt.decode.text.casing)
    capitals = [[] if written or not cfg.normalize_case else capitalized_words(line, pieces)
                for line, written in zip(lines, as_written)]
    words_in_capitals = [[line[a:b] for a, b in spans] for line, spans in zip(lines, capitals)]
    lines = [lowered(line, spans) for line, spans in zip(lines, capitals)]
    held = [bool(keep_quantity) and not written and bool(quantity_spans(line, keep_quantity))
            for line, written in zip(lines, as_written)]
    names = [named and bool(name_spans(line, pieces)) for line, named in zip(lines, naming)]  # lines with any
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

        # (a sentence of the memory's in a line whose output needs no alignment: nmt.decode.memory)
        group = sentence_hypotheses(translator, [replace(requests[i], text=lines[i]) for i in rows], cfg, warn,
                                    [numbers[i] for i in rows], group_extras,
                                    lambda done, rows=rows: finished([rows[j] for j in done]),
                                    [names[i] for i in rows] if wanted else None,
                                    remember=not wanted and not group_extras)
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
    # Translated again, warned about and counted the first time: lines whose quantities could not
    # be written as digits, with their quantities taken out, which copies them exactly; and lines
    # whose output lacks an unreadable name, with its names taken out as well.
    unnamed = [i for i, names_ in enumerate(unread_names) if names_ and i not in missed
               and not all(name in hypothesis_text(translator.tgt_tokenizer, results[i][0]) for name in names_)]
    for again_of, update in ((missed, {"quantities_in_place": False}), (unnamed, {"copy_names": False})):
        if again_of:
            again = _translate(translator, [requests[i] for i in again_of], cfg.model_copy(update=update),
                               lambda _: None, first_line, extras, lambda _: None)
            for i, hyps in zip(again_of, again):
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
    texts = [aside_text(item.open, marked[i].escape) for i, item in points]
    asides = [Line(text, controls=requests[i].controls) for text, (i, _) in zip(texts, points)]
    results = _translate(translator, asides, cfg, naming_lines(warn, [numbers[i] for i, _ in points]), 1, (),
                         lambda _: None)
    for text, (i, item), hyps in zip(texts, points, results):
        item.open = written_aside(text, hypothesis_text(translator.tgt_tokenizer, hyps[0]), marked[i].escape)


def naming_lines(warn: Callable[[str], None], numbers: list[int], unit: str = "line") -> Callable[[str], None]:
    """`warn` for warnings about requests numbered from 1 that names each by its line (or other
    `unit`) in `numbers` instead ("line 3:" of the third request is "line {numbers[2]}:")."""
    return lambda message: warn(_LINE_NUMBER.sub(lambda m: f"{unit} {numbers[int(m.group(1)) - 1]}", message, count=1))


_LINE_NUMBER = re.compile(r"^line (\d+)")


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
