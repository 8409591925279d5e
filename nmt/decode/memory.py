"""A translation memory (`nmt translate --memory FILE`, decode.memory): translations a person has
already made, reused where the same text comes again.

The memory is any parallel corpus nmt reads (nmt.data.corpora: a TMX file, a TSV file, a path
stem of two files), in the model's direction. A line (a document's paragraph, a segment, a cue)
that the memory holds exactly, its runs of spaces aside, is given the memory's translation as it
stands, without the model, and so is a sentence of a paragraph whose output needs no alignment
(no markup: nmt.decode.sentences); where a source is in the memory twice, its first translation is taken.
A multilingual model's lines in other directions look in a TMX file's (or a path stem's files')
other languages; a TSV file names none, and serves the run's direction alone.
A line with a prefix or constraints of its own is translated. Such a line has no alignment nor
token scores (jsonl's --alignments, --token-scores), and its n-best is that one translation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from nmt.errors import NmtError


def _key(text: str) -> str:
    return " ".join(text.split())


@functools.lru_cache(maxsize=8)  # (a memory's directions, for a multilingual model)
def _read(spec: str, stamp: tuple, src_lang: str, tgt_lang: str) -> dict[str, str]:
    from nmt.data.corpora import open_corpus

    translations: dict[str, str] = {}
    for source, target in open_corpus(spec, src_lang, tgt_lang).pairs():
        if source.strip() and target.strip():
            translations.setdefault(_key(source), target.strip())
    return translations


def memory_of(translator, cfg, languages: tuple[str, str] | None = None) -> Callable[[str], str | None] | None:
    """The decode settings' translation memory for a direction (`languages`, a line's own; None: the
    run's) as a lookup (a line -> its translation or None), read once while its files are
    unchanged; None without one. A TSV file names no languages: it is the run's direction's alone;
    a TMX file or a path stem without the direction's languages has nothing for it."""
    if not cfg.memory:
        return None
    from nmt.decode.rows import direction

    from nmt.data.corpora import corpus_kind

    run = direction(translator, None)
    src_lang, tgt_lang = languages or run
    if (src_lang, tgt_lang) != run and corpus_kind(cfg.memory) == "tsv":
        return None
    files = sorted(Path(cfg.memory).parent.glob(Path(cfg.memory).name + "*"))
    stamp = tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files if f.is_file())
    try:
        translations = _read(cfg.memory, stamp, src_lang, tgt_lang)
    except NmtError as e:
        if (src_lang, tgt_lang) != run:
            return None  # another direction that the memory has nothing for
        raise NmtError(f"decode.memory: {e}") from None
    return lambda line: translations.get(_key(line))


def remembered(translator, cfg, requests: list, also: list[str] | None = None) -> list[str | None]:
    """Each request's translation in decode.memory, in its own direction (looked up as its text,
    then as `also`'s text for it where given), or None; one with a prefix or constraints of its
    own is translated."""
    from nmt.decode.rows import direction

    if not cfg.memory:
        return [None] * len(requests)
    lookups: dict = {}  # by direction: a multilingual model's lines may each have their own
    found: list[str | None] = []
    for number, request in enumerate(requests):
        languages = direction(translator, request.controls)
        if languages not in lookups:
            lookups[languages] = memory_of(translator, cfg, languages)
        look = lookups[languages]
        if look is None or request.prefix or request.constraints:
            found.append(None)
        else:
            found.append(look(request.text) or (look(also[number]) if also else None))
    return found
