"""Sequence-level knowledge distillation (Kim and Rush, 2016): a teacher (one checkpoint, an
average, or an ensemble) translates the source side of a corpus with beam search, and a student
trains on its translations, which are simpler to learn than the human ones and let a small
model decode greedily almost as well as the teacher's beam.

`nmt distill -c TEACHER -i train.en -o distilled/train` writes `distilled/train.en` (the source
lines kept, as given), `distilled/train.de` (the teacher's translations) and
`distilled/train.json` (the teacher, the settings and the counts): a corpus that a student
recipe lists, alone or beside the original data. With `drop_worst` (cross-entropy filtering), the
pairs the teacher itself finds least likely are left out: those with the highest cross-entropy per
token of the translation given the source (teacher-forced, as `nmt likelihood` scores a pair,
without its end-of-sentence token), the given share
of the pairs translated, rounded down, ties broken by line order. Lines whose source or
translation is empty are left out too (a student learns nothing from them). All three files
appear only when complete; the teacher's translations are kept as they come in a hidden file
beside them, so that a run stopped part way goes on where it stopped (nmt.decode.resumable).

With the corpus's own target side as `reference` (interpolated distillation, Kim and Rush 2016,
section 3.2), the teacher keeps its n-best (decode.nbest, the beam's size unless set higher than
1) and each line's translation is the one of them closest to the human translation by sentence
BLEU (sacreBLEU's, with effective n-gram order, tokenized for the target language), ties going
to the teacher's own ranking: still the teacher's output, so still simple to learn, but nearer
to what the reference says.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from sacrebleu.metrics import BLEU

from nmt.config import DecodeConfig
from nmt.data.corpus import read_lines, side_file, written_stem
from nmt.data.languages import two_letter
from nmt.decode.resumable import TRANSLATION, made_with, write_resumably
from nmt.decode.stream import CHUNK_LINES, refuse_to_overwrite, translate_all, write_lines
from nmt.errors import NmtError
from nmt.files import line_count
from nmt.metrics.bleu import make_bleu, target_tokenizer


TEACHER = replace(TRANSLATION, command="nmt distill")  # (a stopped run's record names the command)


@dataclass
class Distillation:
    source_file: str
    target_file: str
    report_file: str
    read: int  # source lines
    written: int  # pairs in the distilled corpus
    empty: int  # left out: the source or its translation empty
    dropped: int  # left out by cross-entropy filtering
    max_cross_entropy: float | None  # the highest cross-entropy per token kept (None: none kept)
    minutes: float
    reference_file: str | None = None  # the human translations the n-best was chosen by
    not_first: int = 0  # lines whose chosen translation was not the teacher's first (with a reference)

    def describe(self) -> list[str]:
        filtered = f"; {self.dropped:,} dropped as least likely (cross-entropy per token above " \
                   f"{self.max_cross_entropy:.3f})" if self.dropped else ""
        chosen = f"; {self.not_first:,} translations not the teacher's first but closer to {self.reference_file}" \
            if self.reference_file else ""
        return [f"wrote {self.written:,} of {self.read:,} pairs: {self.source_file} and {self.target_file} "
                f"({self.empty:,} empty left out{filtered}{chosen}); {self.report_file}"]


def distill(teacher, source: Path, out_stem: str, cfg: DecodeConfig, drop_worst: float = 0.0,
            warn: Callable[[str], None] = lambda _: None, shards=None, teacher_names: list[str] = (),
            done: Callable[[int], None] = lambda _: None, reference: Path | None = None,
            resume: dict | None = None) -> Distillation:
    """Write the distilled corpus `{out_stem}.{src_lang}`, `{out_stem}.{tgt_lang}` (compressed where
    the stem ends in .gz, .xz or .bz2: nmt.data.corpus.written_stem) and its report
    `{out_stem}.json` (see the module's docstring); `shards`: over several processes, as in
    nmt.decode.stream.translate_file; `done(n)` hears of the lines translated so far; `reference`:
    the corpus's target side, to choose among the n-best by; `resume`: the teacher's identity
    (nmt.decode.resumable.engine_identity), for a stopped run to go on from its translations."""
    if not 0.0 <= drop_worst < 1.0:
        raise NmtError(f"--drop-worst {drop_worst:g}: a share of the pairs, at least 0 and below 1")
    data = teacher.recipe.data
    src_file, tgt_file = side_file(out_stem, data.src_lang), side_file(out_stem, data.tgt_lang)  # (compressed: stem.gz)
    out_stem = written_stem(out_stem)[0]
    report_file = f"{out_stem}.json"
    for written in (src_file, tgt_file, report_file):  # before the teacher's hours of work
        refuse_to_overwrite(written, [source, *([reference] if reference else [])])
    started = time.perf_counter()
    sources = list(read_lines(Path(source)))
    references = _references(Path(reference), Path(source), len(sources)) if reference else None
    if references is not None and cfg.nbest == 1:
        cfg = cfg.model_copy(update={"nbest": max(cfg.beam_size, 1)})
    nbest = [json.loads(line)["hypotheses"] for line in
             _teacher_translations(teacher, Path(source), sources, out_stem, cfg, warn, shards, done, resume)]
    # one for all lines (sacreBLEU builds its tokenizer per object), tokenized for the target language
    bleu = make_bleu(target_tokenizer(two_letter(data.tgt_lang)), effective_order=True)
    chosen = [0] * len(nbest) if references is None else \
        [_closest(bleu, [h["text"] for h in hyps], reference) for hyps, reference in zip(nbest, references)]
    translated = [(hyps[choice], number) for number, (hyps, choice) in enumerate(zip(nbest, chosen))]
    pairs = [(number, hyp["text"], _cross_entropy(hyp)) for hyp, number in translated
             if sources[number].strip() and hyp["text"].strip()]
    worst = sorted(pairs, key=lambda pair: (-pair[2], pair[0]))[:math.floor(drop_worst * len(pairs))]
    dropped = {number for number, _, _ in worst}
    kept = [(number, text, entropy) for number, text, entropy in pairs if number not in dropped]
    write_lines(src_file, (sources[number] for number, _, _ in kept))
    write_lines(tgt_file, (text for _, text, _ in kept))
    result = Distillation(src_file, tgt_file, report_file, len(sources), len(kept), len(sources) - len(pairs),
                          len(dropped), max((entropy for *_, entropy in kept), default=None),
                          round((time.perf_counter() - started) / 60, 2),
                          str(reference) if reference else None, sum(choice > 0 for choice in chosen))
    report = {"teacher": list(teacher_names), "source": str(source), "drop_worst": drop_worst,
              "decode": cfg.model_dump(mode="json"), **asdict(result)}
    write_lines(report_file, [json.dumps(report, indent=1)])
    return result


def _teacher_translations(teacher, source: Path, sources: list[str], out_stem: str, cfg: DecodeConfig,
                          warn: Callable[[str], None], shards, done: Callable[[int], None],
                          resume: dict | None) -> list[str]:
    """The teacher's n-best of each source line, as jsonl lines with token scores; with `resume`,
    written as they come to a hidden file beside the corpus, which a stopped run goes on from."""
    def translated(lines, before: int = 0):  # (the lines after the first `before`)
        return translate_all(teacher, lines, cfg, "jsonl", warn, extras=("token_scores",), shards=shards,
                             done=lambda n: done(before + n), first_line=before + 1)

    if resume is None:
        return list(translated(sources))
    store = Path(out_stem).with_name(f".{Path(out_stem).name}.teacher.jsonl")
    made = made_with(resume, cfg, "jsonl", "plain", ["token_scores"])
    write_resumably(store, source, made, iter(sources), translated, dict, CHUNK_LINES, done, TEACHER)
    try:
        return list(read_lines(store))
    finally:
        store.unlink()


def _references(reference: Path, source: Path, count: int) -> list[str]:
    references = list(read_lines(reference))
    if len(references) != count:
        raise NmtError(f"{reference}: {line_count(len(references))}, but {source} has {count:,}: the reference "
                       "must be the source's own translation, line for line")
    return references


def _closest(bleu: BLEU, candidates: list[str], reference: str) -> int:
    """The index of the candidate with the highest sentence BLEU against `reference`; the first of equals."""
    scores = [bleu.sentence_score(candidate, [reference]).score for candidate in candidates]
    return scores.index(max(scores)) if scores else 0


def _cross_entropy(hypothesis: dict) -> float:
    """Minus the mean log-probability of the translation's tokens (teacher-forced)."""
    scores = hypothesis.get("token_log_probs") or []
    return -sum(scores) / len(scores) if scores else math.inf
