"""`nmt prepare`: read, clean and encode each split, and write binarized shards plus a report."""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

import sentencepiece as spm

from nmt.config import AugmentConfig, DataConfig, TokenizerConfig
from nmt.data.augment import augment_pair
from nmt.data.clean import PairFilter, normalize, sentence_key
from nmt.data.corpora import recipe_corpus
from nmt.data.corpus import Corpus
from nmt.data.dedup import find_duplicates
from nmt.data.language_filter import LanguageFilter
from nmt.data.languages import control_ids, target_control_ids
from nmt.data.preprocessed import count_signs, warnings as preprocessing_warnings
from nmt.data.shards import ParallelShards, ShardWriter
from nmt.data.tokenizer import load_processor, tokenizer_paths
from nmt.data.word_alignments import ALIGN_SPLIT, TrainingAlignments
from nmt.data.word_pairs import WordPairs
from nmt.devices import usable_cores
from nmt.errors import NmtError
from nmt.files import cached_record, replaced_whole

CHUNK = 20_000  # pairs encoded at once; bounds memory whatever the corpus size


def data_dir(out: Path) -> Path:
    return out / "data"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _chunks(pairs: Iterator[tuple[str, str]], size: int) -> Iterator[list[tuple[str, str]]]:
    while chunk := list(islice(pairs, size)):
        yield chunk


def _normalized_pairs(corpus: Corpus, nfkc: bool) -> Iterator[tuple[str, str]]:
    for s, t in corpus.pairs():
        yield normalize(s, nfkc), normalize(t, nfkc)


def _train_filter(data: DataConfig, corpus: Corpus, workdir: Path,
                  on_progress: Callable[..., None] | None, total: int | None, eval_sources: frozenset[str]) -> PairFilter:
    if not data.remove_duplicates:
        return PairFilter(data, eval_sources=eval_sources)

    def counted(pairs: Iterator[tuple[str, str]]) -> Iterator[tuple[str, str]]:
        n = 0
        for n, pair in enumerate(pairs, 1):
            if on_progress and n % CHUNK == 0:
                on_progress("train (finding duplicates)", n, total)
            yield pair
        if on_progress:
            on_progress("train (finding duplicates)", n, total)

    # A pass of its own, so that memory does not grow with the corpus (see nmt.data.dedup).
    return PairFilter(data, find_duplicates(counted(_normalized_pairs(corpus, data.normalize_nfkc)), workdir),
                      eval_sources)


def _eval_sources(data: DataConfig, splits: dict) -> frozenset[str]:
    """The source sentences of every valid and test split, normalized as the training pairs are
    (and as sentence_key compares them)."""
    return frozenset(sentence_key(s) for name, sources in splits.items() if name != "train" for source in sources
                     for s, _ in _normalized_pairs(source.corpus, data.normalize_nfkc))


class SubwordSampler:
    """Writes `data.subword_samples` sampled segmentations of the kept training pairs, as shards
    `train.s{k}.src` / `train.s{k}.tgt` aligned with `train.src` / `train.tgt`. A sampled
    encoding longer than data.max_tokens_per_sentence falls back to the deterministic one.
    Single-threaded encoding from a fixed seed: the same inputs give the same samples."""

    def __init__(self, data: DataConfig, sp_src, sp_tgt, target: Path, seed: int):
        self.alpha, self.limit = data.subword_sampling_alpha, data.max_tokens_per_sentence
        self.processors = (sp_src, sp_tgt)
        self.writers = [] if self.alpha <= 0 else [
            (ShardWriter(target / f"train.s{k}.src", sp_src.get_piece_size()),
             ShardWriter(target / f"train.s{k}.tgt", sp_tgt.get_piece_size())) for k in range(data.subword_samples)]
        self.seed, self.calls = seed, 0

    def _sample(self, side: int, texts: list[str], fallback: list[list[int]]) -> list[list[int]]:
        # sentencepiece encodes a list in a thread of its own whose generator starts from the global
        # seed, so every call would draw the same numbers: each call (sample, side, batch) gets its own.
        self.calls += 1
        spm.set_random_generator_seed(zlib.crc32(f"{self.seed}:{self.calls}".encode()))
        sampled = self.processors[side].encode(texts, enable_sampling=True, alpha=self.alpha, nbest_size=-1,
                                               num_threads=1)
        return [ids if len(ids) <= self.limit else default for ids, default in zip(sampled, fallback)]

    def add(self, pairs: list[tuple[str, str]], src_ids: list[list[int]], tgt_ids: list[list[int]],
            prefix: list[int] = (), target_prefix: list[int] = ()) -> None:
        """`src_ids` include the source `prefix` (language token, tag) and `tgt_ids` the
        `target_prefix` (a decoder-side language token), which samples keep too."""
        for src_writer, tgt_writer in self.writers:
            sampled = self._sample(0, [s for s, _ in pairs], [ids[len(prefix):] for ids in src_ids])
            src_writer.add([[*prefix, *ids] for ids in sampled])
            sampled = self._sample(1, [t for _, t in pairs], [ids[len(target_prefix):] for ids in tgt_ids])
            tgt_writer.add([[*target_prefix, *ids] for ids in sampled])

    def close(self) -> None:
        for src_writer, tgt_writer in self.writers:
            src_writer.close()
            tgt_writer.close()


@dataclass
class Source:
    """One corpus of a split, and the tokens put in front of its source and target sentences."""

    corpus: Corpus
    prefix: list[int]
    settings: dict  # what the report says of it
    augment: AugmentConfig | None = None  # training corpora: how their pairs are rewritten
    target_prefix: list[int] = field(default_factory=list)  # a decoder-side language token


class _Chained(Corpus):
    """The corpora of a split read one after the other (for the duplicate search over all of them)."""

    def __init__(self, corpora: list[Corpus]):
        self.corpora = corpora

    def pairs(self):
        for corpus in self.corpora:
            yield from corpus.pairs()


def _kept_before_encoding(pair_filter: PairFilter, lines: range, chunk: list[tuple[str, str]],
                          language_filter: LanguageFilter | None, languages: tuple[str, str] | None,
                          translated: bool = True) -> tuple[list[int], list[tuple[str, str]]]:
    """The lines and pairs of a chunk that pass the filters seen before tokenization (the text's,
    then the language identifier's, on the pairs the first kept); each pair dropped is counted
    under its first reason. `translated`: whether the corpus's two languages differ."""
    kept = []
    for line, (s, t) in zip(lines, chunk):
        if reason := pair_filter.text_reason(line, s, t, translated):
            pair_filter.drop(reason, line, (s, t))
        else:
            kept.append((line, (s, t)))
    if languages:
        verdicts = language_filter.reasons([pair for _, pair in kept], languages)
        for (line, pair), reason in zip(kept, verdicts):
            if reason:
                pair_filter.drop(reason, line, pair)
        kept = [item for item, reason in zip(kept, verdicts) if not reason]
    return [line for line, _ in kept], [pair for _, pair in kept]


def _check_not_an_input(dropped: Path, splits: dict) -> None:
    """A one-line error where the file of dropped pairs would be one of the corpora's files."""
    for sources in splits.values():
        for source in sources:
            for f in source.corpus.fingerprint().get("files", []):
                if dropped.resolve() == Path(f["path"]).resolve():
                    raise NmtError(f"--dropped {dropped}: is the corpus file {f['path']}; write the dropped pairs "
                                   "to another file")


def _dropped_recorder(out, corpus: Corpus, first_line: int) -> Callable[[int, str, str, str], None]:
    """What writes a dropped pair of `corpus` (whose pairs begin at the split's `first_line`) as a
    JSON line to `out`: its corpus, its line there (from 1), the reason and its two sides."""
    def record(line: int, reason: str, src: str, tgt: str) -> None:
        out.write(json.dumps({"corpus": str(corpus), "line": line - first_line + 1, "reason": reason,
                              "source": src, "target": tgt}, ensure_ascii=False) + "\n")
    return record


def split_sources(data: DataConfig, sp_src, sp_tgt) -> dict[str, list[Source]]:
    """Every split to write: train (all corpora, one after the other), and valid and test once per
    direction (`valid.en-de`, ...) when the corpora hold several, else once (`valid`)."""
    train = [Source(recipe_corpus(data, c.path, c.src_lang, c.tgt_lang), control_ids(sp_src, data, c.tgt_lang, c.tag, c.src_lang),
                    c.model_dump(mode="json"), c.augment or data.augment, target_control_ids(sp_tgt, data, c.tgt_lang))
             for c in data.corpora()]
    splits = {"train": train}
    for split, spec in (("valid", data.valid), ("test", data.test)):
        if not spec:
            continue
        for src, tgt in data.directions() if data.multidirectional else [(data.src_lang, data.tgt_lang)]:
            name = f"{split}.{src}-{tgt}" if data.multidirectional else split
            splits[name] = [Source(recipe_corpus(data, spec, src, tgt), control_ids(sp_src, data, tgt, src_lang=src),
                                   {"src_lang": src, "tgt_lang": tgt}, target_prefix=target_control_ids(sp_tgt, data, tgt))]
    return splits


def prepare(data: DataConfig, tok: TokenizerConfig, out: Path, threads: int = 0,
            on_progress: Callable[..., None] | None = None, count_first: bool = False,
            dropped: Path | None = None) -> dict:
    """Write `out/data/{split}.{src,tgt}.{bin,idx}` and `out/data/report.json`; skip if up to date.
    `on_progress(split, pairs_read, total)` follows the reading; `count_first` counts each split's
    pairs before reading it, for that total (else None). `dropped`: also write there each training
    pair left out, a JSON line each (its corpus, line, reason and text); the data is then prepared
    even where up to date."""
    src_model, tgt_model = tokenizer_paths(out, tok.joint)
    sp_src, sp_tgt = load_processor(src_model), load_processor(tgt_model)
    splits = split_sources(data, sp_src, sp_tgt)
    # Each training corpus's languages as the identifier labels them, found before anything is
    # written: py3langid missing, or a language it does not know, stops here.
    language_filter = (LanguageFilter(data.language_filter, threads or usable_cores())
                       if data.language_filter is not None else None)
    train_languages = [language_filter.labels(s.settings["src_lang"], s.settings["tgt_lang"], s.settings["path"])
                       for s in splits["train"]] if language_filter else None

    target = data_dir(out)
    target.mkdir(parents=True, exist_ok=True)
    report_path = target / "report.json"
    inputs = {
        "data": data.model_dump(mode="json"),
        "corpora": {split: [source.corpus.fingerprint() for source in sources] for split, sources in splits.items()},
        "tokenizers": [_sha256(src_model), _sha256(tgt_model)],
    }
    if data.word_alignments not in ("none", "dice"):  # a file of links: its content decides
        if not Path(data.word_alignments).is_file():
            raise NmtError(f"{data.word_alignments}: word alignments not found (data.word_alignments)")
        inputs["word_alignments"] = _sha256(Path(data.word_alignments))
    if dropped is not None:
        _check_not_an_input(Path(dropped), splits)
    elif report_path.is_file():
        previous = cached_record(report_path)
        if previous.get("inputs") == inputs and _intact(target, previous.get("splits", {})):
            return previous | {"skipped": True}

    started = time.perf_counter()
    report: dict = {"inputs": inputs, "splits": {}}
    # Shards of earlier settings, and the regular files a run killed midway left unfinished
    unfinished = [f for f in target.glob("*.tmp") if f.is_file() and not f.is_symlink()]
    for stale in [*target.glob("train.s[0-9]*.*"), *target.glob(f"{ALIGN_SPLIT}.*"), *unfinished]:
        stale.unlink(missing_ok=True)
    finishing = contextlib.ExitStack()  # the file of dropped pairs: written whole, or not at all
    dropped_out = finishing.enter_context(replaced_whole(dropped)) if dropped is not None else None
    eval_sources = _eval_sources(data, splits)  # (small: read before the training pairs that may repeat them)
    try:
        for split, sources in splits.items():
            total = sum(source.corpus.count_pairs() for source in sources) if count_first and on_progress else None
            pair_filter = (_train_filter(data, _Chained([s.corpus for s in sources]), target, on_progress, total,
                                         eval_sources) if split == "train" else None)
            in_eval = 0  # kept training pairs whose source is a valid or test source
            src_writer = ShardWriter(target / f"{split}.src", sp_src.get_piece_size())
            tgt_writer = ShardWriter(target / f"{split}.tgt", sp_tgt.get_piece_size())
            sampler = SubwordSampler(data, sp_src, sp_tgt, target, tok.seed) if split == "train" else None
            aligner = None
            if split == "train" and data.word_alignments != "none":
                word_pairs = None
                if data.word_alignments == "dice":
                    chained = _Chained([s.corpus for s in sources])
                    word_pairs = WordPairs(_normalized_pairs(chained, data.normalize_nfkc))
                aligner = TrainingAlignments(data.word_alignments, target, sp_src, sp_tgt, word_pairs)
            read, per_corpus, augmented = 0, [], 0
            signs: Counter[str] = Counter()  # pairs with another toolkit's preprocessing (nmt.data.preprocessed)
            for index, source in enumerate(sources):
                corpus_read, corpus_kept, corpus_augmented = 0, 0, 0
                if pair_filter and dropped_out is not None:
                    pair_filter.record = _dropped_recorder(dropped_out, source.corpus, read)
                languages = train_languages[index] if train_languages and split == "train" else None
                word_pairs = None
                if source.augment is not None and source.augment.inserts():
                    word_pairs = WordPairs(_normalized_pairs(source.corpus, data.normalize_nfkc))
                for chunk in _chunks(_normalized_pairs(source.corpus, data.normalize_nfkc), CHUNK):
                    first_line = read
                    read += len(chunk)
                    count_signs(chunk, signs)
                    corpus_read += len(chunk)
                    lines = range(first_line, first_line + len(chunk))
                    if pair_filter:
                        lines, chunk = _kept_before_encoding(pair_filter, lines, chunk, language_filter, languages,
                                                             source.settings["src_lang"] != source.settings["tgt_lang"])
                    as_read = chunk  # (before augmentation: what a dropped pair is recorded as)
                    if source.augment is not None and source.augment.active():
                        rewritten = [augment_pair(s, t, line, source.augment, word_pairs)
                                     for line, (s, t) in zip(lines, chunk)]
                        corpus_augmented += sum(new != old for new, old in zip(rewritten, chunk))
                        chunk = rewritten
                    src_ids = sp_src.encode([s for s, _ in chunk], num_threads=threads or -1)
                    if source.prefix:
                        src_ids = [[*source.prefix, *ids] for ids in src_ids]
                    tgt_ids = sp_tgt.encode([t for _, t in chunk], num_threads=threads or -1)
                    if source.target_prefix:
                        tgt_ids = [[*source.target_prefix, *ids] for ids in tgt_ids]
                    links = aligner.links_of(list(lines), chunk) if aligner else None
                    if pair_filter:
                        keep = []
                        for i, (a, b) in enumerate(zip(src_ids, tgt_ids)):
                            reason = pair_filter.length_reason(len(a), len(b))
                            if reason:
                                pair_filter.drop(reason, lines[i], as_read[i])
                            else:
                                keep.append(i)
                        if not data.remove_eval_overlap:  # (dropped, none is kept)
                            in_eval += sum(sentence_key(as_read[i][0]) in eval_sources for i in keep)  # (as read)
                        src_ids = [src_ids[i] for i in keep]
                        tgt_ids = [tgt_ids[i] for i in keep]
                        chunk = [chunk[i] for i in keep]
                        links = [links[i] for i in keep] if links else links
                    src_writer.add(src_ids)
                    tgt_writer.add(tgt_ids)
                    if aligner:
                        aligner.add(chunk, src_ids, tgt_ids, links)
                    corpus_kept += len(src_ids)
                    if sampler:
                        sampler.add(chunk, src_ids, tgt_ids, source.prefix, source.target_prefix)
                    if on_progress:
                        on_progress(split, read, total)
                per_corpus.append({"corpus": str(source.corpus), **source.settings, "read": corpus_read,
                                   "kept": corpus_kept,
                                   **({"augmented": corpus_augmented} if corpus_augmented else {})})
                augmented += corpus_augmented
            kept = src_writer.close()
            tgt_writer.close()
            if sampler:
                sampler.close()
            left_out = sum(getattr(s.corpus, "left_out", 0) for s in sources)  # a TMX's units in one language
            unescaped_lines = sum(getattr(s.corpus, "unescaped_lines", 0) for s in sources)
            report["splits"][split] = {
                "corpus": ", ".join(str(s.corpus) for s in sources), "read": read, "kept": kept,
                **({"units_without_both_languages": left_out} if left_out else {}),
                **({"unescaped_lines": unescaped_lines} if unescaped_lines else {}),
                **({"preprocessed": dict(signs)} if signs else {}),
                "dropped": dict(pair_filter.dropped) if pair_filter else {},
                **({"kept_sources_in_valid_or_test": in_eval} if pair_filter else {}),
                **({"augmented": augmented} if augmented else {}),
                **({"word_alignments": aligner.close()} if aligner else {}),
            }
            if split == "train" and isinstance(data.train, list):
                report["splits"][split]["corpora"] = per_corpus
    except BaseException as e:  # Ctrl-C or an error: the shards begun go (a WMT-sized one is gigabytes)
        for unfinished in target.glob("*.tmp"):
            unfinished.unlink()
        finishing.__exit__(type(e), e, e.__traceback__)
        raise
    finally:
        if language_filter:
            language_filter.close()  # its worker processes
    finishing.close()
    report["seconds"] = round(time.perf_counter() - started, 2)
    with replaced_whole(report_path) as f:
        f.write(json.dumps(report, indent=2))
    return report | {"skipped": False}


def _intact(target: Path, splits: dict) -> bool:
    """Whether the shards of `splits` (a report's) are in `target` whole, as prepare wrote them: a
    copy of a run that stopped short, or a file removed by hand, prepares them again."""
    try:
        for split in splits:
            ParallelShards(target, split)
    except NmtError:
        return False
    return True


def dropped_reasons(dropped: dict[str, int]) -> str:
    """A split's pairs left out, by reason, as prepare's report counts them: "3 duplicate, 2 length ratio"."""
    return ", ".join(f"{n:,} {why}" for why, n in dropped.items())


def describe_preparation(report: dict, out: Path) -> list[str]:
    """The lines `nmt prepare` prints about `prepare`'s report: pairs kept and dropped, per split
    and per corpus."""
    lines = [f"data up to date: {data_dir(out)}"] if report["skipped"] else []
    for split, s in report["splits"].items():
        dropped = dropped_reasons(s["dropped"]) or "none"
        lines.append(f"  {split}: {s['kept']:,} of {s['read']:,} pairs kept (dropped: {dropped})")
        if s.get("kept_sources_in_valid_or_test"):
            n = s["kept_sources_in_valid_or_test"]
            lines.append(f"    warning: {n:,} kept pair{'s' * (n != 1)} ha{'ve' if n != 1 else 's'} a source sentence of "
                         "valid or test, whose scores then flatter the model (data.remove_eval_overlap: true leaves "
                         "them out)")
        lines += [f"    {warning}" for warning in preprocessing_warnings(s.get("preprocessed", {}), s["read"])]
        if s.get("unescaped_lines"):
            n = s["unescaped_lines"]
            lines.append(f"    {n:,} escaped line{'s' * (n != 1)} read as the text {'they stand' if n != 1 else 'it stands'} "
                         "for (\"&amp;\" as \"&\"; data.unescape)")
        if s.get("units_without_both_languages"):
            lines.append("    translation memory units without both languages (not pairs, left out): "
                         f"{s['units_without_both_languages']:,}")
        for c in s.get("corpora", []):
            tag = f", tag {c['tag']}" if c["tag"] else ""
            lines.append(f"    {c['corpus']} ({c['src_lang']}-{c['tgt_lang']}, weight {c['weight']}{tag}): "
                         f"{c['kept']:,} of {c['read']:,} kept")
        if "word_alignments" in s:
            a = s["word_alignments"]
            lines.append(f"    word alignments ({a['source']}): {a['links']:,} links in {a['pairs_with_links']:,} pairs")
    return lines


def corpus_sizes(out: Path) -> list[int] | None:
    """Pairs kept of each training corpus, from the prepared data's report (None: one corpus)."""
    report = json.loads((data_dir(out) / "report.json").read_text())
    corpora = report["splits"]["train"].get("corpora")
    return [c["kept"] for c in corpora] if corpora else None
