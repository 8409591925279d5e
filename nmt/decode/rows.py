"""Rows (a line's sentences, or parts of them) through the engine: encoded with their control
tokens, copied where there is nothing to translate (no letter, or already in the target
language), batched by length, searched, and annotated with token scores and word alignments.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

import numpy as np

from nmt.config import DecodeConfig
from nmt.data.batching import pack_by_tokens
from nmt.data.languages import Controls
from nmt.data.tokenizer import encode_lines, encode_within
from nmt.data.words import word_spans
from nmt.decode.engines.capabilities import require
from nmt.decode.request import Line
from nmt.decode.search import Hypothesis, output_limit
from nmt.decode.selection import candidate_search, choose, sample_candidates, selecting
from nmt.decode.text.markup import without_tags
from nmt.decode.text.target_language import in_target_language
from nmt.errors import NmtError


def direction(translator, controls: Controls | None) -> tuple[str | None, str | None]:
    """A line's (source, target) languages: its own direction's, else the translator's, else its
    recipe's (None: not known)."""
    for chosen in (controls, translator.controls):
        if chosen is not None and chosen.languages:
            return chosen.languages
    return translator.recipe.data.src_lang, translator.recipe.data.tgt_lang


def source_pieces(translator) -> Callable[[str], int]:
    """A word's number of source pieces (remembered for the words of one translation)."""
    tokenizer = translator.src_tokenizer
    return functools.cache(lambda word: len(tokenizer.encode(word)))


def source_reads(translator) -> Callable[[str], bool]:
    """Whether the source vocabulary reads a character, in either case (rather than making it an
    unknown piece; with byte fallback it reads them all): text in letters it lacks is copied
    (nmt.decode.text.verbatim.unreadable_spans), invisible characters it lacks left out of words
    (nmt.decode.text.invisible). A capital it lacks is read in lower case where a word in
    capitals is lowered (nmt.decode.text.casing)."""
    tokenizer = translator.src_tokenizer
    unknown = tokenizer.unk_id()
    return functools.cache(lambda char: any(unknown not in tokenizer.encode(form)
                                            for form in {char, char.lower(), char.upper()}))


def search_rows(translator, rows: list[Line], cfg: DecodeConfig, warn: Callable[[str], None], numbers: list[int],
                extras: Iterable[str] = (),
                finished: Callable[[list[int]], None] = lambda _: None) -> list[list[Hypothesis]]:
    """Translate `rows` (each a sentence, or a part of one, as a Line) in length-sorted token
    batches and return results in their order (warnings name each row by its line number in
    `numbers`). A row with `controls` (a multilingual model's language tokens) goes into its own
    language instead of the translator's; one with a `prefix` starts its output with it; one with
    `constraints` contains its phrases in the output (a row whose phrases cannot all be placed
    gets the best output found and a warning). `extras` adds to each hypothesis its tokens'
    log-probabilities ("token_scores") and its word alignment ("alignments",
    nmt.decode.text.alignment). `finished` hears the rows whose hypotheses are final: after each
    batch, or all at the end where a choice among candidates or `extras` follow the search."""
    lines = [row.text for row in rows]
    prefixes = [row.prefix for row in rows] if any(row.prefix for row in rows) else None
    constraints = [list(row.constraints) for row in rows] if any(row.constraints for row in rows) else None
    line_controls = None
    if any(row.controls is not None for row in rows):
        line_controls = [translator.controls if row.controls is None else row.controls for row in rows]
    encoded = _encode(translator, lines, warn, numbers, line_controls)
    # A row without a letter ("...", "•", "---", the "." left of "1.") has nothing to translate:
    # it is copied as written, where a model asked to translate it makes up a sentence ("..." gave
    # "Ein Kind."). So is a row of tags alone, read as text ("<figure>", "</div>" in a page read line
    # by line: "<figure>" gave "Windhunde."). A row with a prefix or constraints is searched as asked.
    searched_as_asked = [bool(prefixes and prefixes[i]) or bool(constraints and constraints[i])
                         for i in range(len(lines))]
    copied = [bool(ids) and not any(c.isalpha() for c in without_tags(line)) and not asked
              for line, ids, asked in zip(lines, encoded, searched_as_asked)]
    # A row already in the target language is copied too: the model would make one up.
    if cfg.keep_target_language:
        candidates = [i for i, ids in enumerate(encoded) if ids and not copied[i] and not searched_as_asked[i]]
        directions = [direction(translator, line_controls[i] if line_controls else None) for i in candidates]
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
