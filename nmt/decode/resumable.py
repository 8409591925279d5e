"""A long file translation that survives being stopped: `nmt translate -i big.en -o big.de`
writes each chunk of translated lines into a hidden file beside the output (`.big.de.partial`)
and records after it what they were made from (`.big.de.partial.json`: the model, the decoding
settings, the source, how many lines are done and a fingerprint of those source lines). Stopped
there (Ctrl-C, a killed or preempted job, a full disk), the same command again goes on after the
last recorded line; the output appears under its own name only once complete, as before. One
run at a time writes into an output (`.big.de.lock`): a second is refused while the first runs.

What is checked before going on, so that the output is what one uninterrupted run would write:
the model files and their sizes and times, the decoding settings (all but the speed-only
`decode.max_tokens` and `decode.compile`; the device and threads are free to change) and the
files they name (a glossary, a memory, a shortlist, ...: sizes and times again), the engine, the
languages and formats, and the source's lines already translated (an edit after them is fine).
Anything else is a one-line error naming it, and the partial translation is kept.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from nmt.errors import NmtError
from nmt.file_lock import sole_writer
from nmt.files import cannot_write, hidden_beside, put_in_place, replaced_whole, write_failure

SPEED_ONLY = ("max_tokens", "compile")  # decode settings that change how fast, not what, is translated
# decode settings that name files or model directories whose contents shape the output
FILE_SETTINGS = ("glossary", "memory", "shortlist", "pdf_font", "mbr.comet_model", "rerank.reverse_model",
                 "rerank.qe_model")


@dataclass(frozen=True)
class Work:
    """What a resumable run does to its lines, as its messages say it."""
    noun: str  # "a translation of big.en stopped after line 5,000"
    verb: str  # "delete it to translate big.en from the start"
    done: str  # "the 5,000 lines translated are kept"
    doing: str  # a second run's refusal: "big.de: another nmt is translating into it"
    command: str  # the command that goes on from the record
    items: str = "lines"  # what its lines hold: "the 5,000 lines translated are kept" (a corpus: "pairs")

    def about(self) -> str:
        """What the record says it is, for whoever finds it."""
        return (f"A {self.noun} stopped before its end: the lines beside this record, made as it says. "
                f"Running the same `{self.command}` again goes on from there. Written by nmt.")


TRANSLATION = Work("translation", "translate", "translated", "translating into it", "nmt translate")


def model_files(paths: Iterable[Path | str]) -> list[dict]:
    """Each model's path with its files' sizes and times of change (an export directory's file by
    file; a path stem's, as a memory's `corpus` for corpus.en and corpus.de, each file it begins)."""
    described = []
    for path in map(Path, paths):
        if path.is_dir():
            files = sorted(p for p in path.iterdir() if p.is_file())
        else:
            files = [path] if path.exists() else sorted(path.parent.glob(f"{glob.escape(path.name)}.*"))
        stats = {p.name: p.stat() for p in files}
        described.append({"path": str(path.resolve()),
                          "files": {name: [stat.st_size, stat.st_mtime_ns] for name, stat in stats.items()}})
    return described


def engine_identity(spec) -> dict:
    """The engine as `spec` (nmt.decode.sharded.EngineSpec) loads it: its model files, engine,
    ensemble and direction (not its device or threads)."""
    return {"models": model_files(spec.checkpoints), "engine": spec.engine, "compute_type": spec.compute_type,
            "ensemble": spec.ensemble, "src_lang": spec.src_lang, "tgt_lang": spec.tgt_lang,
            "zero_shot": spec.zero_shot}


def made_with(engine: dict, cfg, output_format: str, input_format: str, extras: Iterable[str]) -> dict:
    """What a translation's lines depend on: the `engine` (engine_identity), the decoding settings
    that change its output, and the formats."""
    decode = {key: value for key, value in cfg.model_dump(mode="json").items() if key not in SPEED_ONLY}
    named = {setting: _setting(decode, setting) for setting in FILE_SETTINGS}
    files = {setting: model_files([path])[0]["files"] for setting, path in named.items() if path}
    return engine | {"decode": decode, "output_format": output_format, "input_format": input_format,
                     "extras": sorted(extras)} | ({"decode_files": files} if files else {})


def _setting(decode: dict, dotted: str):
    section, _, key = dotted.rpartition(".")
    return (decode[section] if section else decode)[key]


@dataclass
class Resumed:
    """Where a file translation starts: `lines` of the source already translated (0: from the
    start), what was counted of them (`counts`: jsonl requests refused, "failed"; the source
    languages identified, "sources"), and the fingerprint of those lines so far."""
    lines: int
    counts: dict
    fingerprint: "hashlib._Hash"


def partial_files(output: Path) -> tuple[Path, Path]:
    """The hidden file of a stopped translation's lines, and its record."""
    return hidden_beside(output, "partial"), hidden_beside(output, "partial.json")


def resumes(source: str, output: str, interactive: bool) -> bool:
    """Whether a translation of `source` into `output` is written so that it can go on after a stop:
    a file into a file (or into a name not taken yet), not typed lines or a terminal's."""
    if source == "-" or output == "-" or interactive:
        return False
    return not Path(output).exists() or Path(output).is_file()


def _resume_point(source: Path, output: Path, made: dict, source_lines: Iterable[str], work: Work) -> Resumed:
    """How far a stopped translation of `source` into `output` made as `made` got, its partial
    file cut back to that point; where none lies there, the start. Reads that many of
    `source_lines`, the source's lines, to check them, and no more. A partial file made otherwise,
    or from a source whose translated lines changed since, is a one-line error (it is kept)."""
    partial, record_path = partial_files(output)
    if not partial.exists():
        return Resumed(0, {}, hashlib.sha256())
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
        done, counts, expected = int(record["lines"]), dict(record["counts"]), str(record["source_sha256"])
        earlier = record["made_with"]
    except (OSError, ValueError, KeyError, TypeError):
        raise NmtError(f"{partial}: the lines of a stopped {work.noun}, without a readable record beside it "
                       f"({record_path.name}); delete it to {work.verb} {source} from the start") from None
    if done == 0:  # stopped before its first lines: nothing to go on from
        return Resumed(0, {}, hashlib.sha256())
    if changed := differences(earlier, made):
        raise NmtError(f"{output}: a {work.noun} of {record.get('source', source)} stopped after line {done:,} "
                       f"lies beside it ({partial.name}), made with other settings: {'; '.join(changed[:3])}; "
                       f"run it as then to go on, or delete {partial.name} to start over")
    fingerprint, seen = hashlib.sha256(), 0
    for line in islice(source_lines, done):  # exactly those lines: the caller reads on from the next
        _add_line(fingerprint, line)
        seen += 1
    if seen < done or fingerprint.hexdigest() != expected:
        raise NmtError(f"{source}: changed in its first {done:,} lines since their {work.noun} stopped "
                       f"({partial.name} beside {output.name}); delete {partial.name} to {work.verb} it from the start")
    _cut_to(partial, done, work)
    return Resumed(done, counts, fingerprint)


def differences(earlier: dict, now: dict, prefix: str = "") -> list[str]:
    """The settings that differ, as `decode.beam_size 4, now 5`."""
    found = []
    for key in sorted(set(earlier) | set(now), key=str):
        before, after = earlier.get(key), now.get(key)
        name = f"{prefix}{key}"
        if isinstance(before, dict) and isinstance(after, dict) and prefix == "":
            found += differences(before, after, f"{name}.")
        elif before == after:
            continue
        elif key == "models":
            found.append("the model files changed since")
        elif prefix == "decode_files.":
            found.append(f"the files of decode.{key} changed since")
        else:
            found.append(f"{name} {_shown(before)}, now {_shown(after)}")
    return found


def _add_line(fingerprint, line: str) -> None:
    """One source line into the fingerprint of the lines translated (the record's source_sha256)."""
    fingerprint.update(line.encode("utf-8") + b"\n")


def added(earlier: dict, now: dict) -> dict:
    """Counts added up by name: numbers, or numbers by name (added as a Counter adds them)."""
    total = dict(earlier)
    for name, value in now.items():
        if isinstance(value, dict):
            inner = Counter(total.get(name, {}))
            inner.update(value)
            total[name] = dict(inner)
        else:
            total[name] = total.get(name, 0) + value
    return total


def _shown(value) -> str:
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value


def _cut_to(partial: Path, lines: int, work: Work) -> None:
    """`partial` cut after its first `lines` lines (what a killed process wrote past its last record goes)."""
    with open(partial, "r+b") as f:
        offset, count = 0, 0
        while count < lines:
            block = f.read(1 << 20)
            if not block:
                raise NmtError(f"{partial}: holds fewer lines than its record says ({lines:,}); "
                               f"delete it to {work.verb} from the start")
            if count + (newlines := block.count(b"\n")) < lines:  # the cut lies further on
                count, offset = count + newlines, offset + len(block)
                continue
            at = 0
            while count < lines:
                at, count = block.index(b"\n", at) + 1, count + 1
            offset += at
        f.truncate(offset)


def write_resumably(output: Path, source: Path, made: dict, sources: Iterator[str],
                    translate: Callable[[Iterator[str], int], Iterable[str]], counts: Callable[[], dict], every: int,
                    started: Callable[[int], None] = lambda _: None, work: Work = TRANSLATION) -> Resumed:
    """The translations of `source`'s lines (`sources`, read as needed) made as `made` written into
    `output`, this run the only one writing there (sole_writer): after the lines a stopped run
    left (their number to `started`), `translate(the lines after them, how many)` translates the
    rest, recorded every `every` lines with `counts()`. Returns where it started. `work`: how the
    messages name what is done to the lines (a translation, or the scoring of a corpus's pairs)."""
    with sole_writer(output, work.doing):
        start = _resume_point(source, output, made, sources, work)
        started(start.lines)
        _write_resumable(output, source, made, start, sources, lambda rest: translate(rest, start.lines), counts, every,
                         work)
    return start


def _write_resumable(output: Path, source: Path, made: dict, start: Resumed, sources: Iterator[str],
                      translate: Callable[[Iterator[str]], Iterable[str]], counts: Callable[[], dict], every: int,
                      work: Work) -> None:
    """Write the translations `translate` makes of `sources` (the source lines after `start`, read
    as it needs them; one translation each, in order) after the `start.lines` already in the
    partial file, recording every `every` lines how far they go, with `counts()`, this run's counts
    (numbers, or numbers by name), added to the start's; the output takes the partial file's place
    once complete. Stopped before (an error, Ctrl-C, a killed process), the partial file and its record stay for the next run."""
    partial, record_path = partial_files(output)
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        _write_after(partial, record_path, source, made, start, sources, translate, counts, every, work)
        put_in_place(partial, output)
    except BaseException as e:  # the system's refusal names the output, as replaced_whole's does
        if (failure := write_failure(e)) is not None:
            raise cannot_write(output, failure) from None
        raise
    record_path.unlink(missing_ok=True)


def _write_after(partial: Path, record_path: Path, source: Path, made: dict, start: Resumed, sources: Iterator[str],
                 translate: Callable[[Iterator[str]], Iterable[str]], counts: Callable[[], dict], every: int,
                 work: Work) -> None:
    read: deque[str] = deque()  # source lines read ahead of their translations
    fingerprint, done = start.fingerprint, start.lines

    def remembered() -> Iterator[str]:
        for line in sources:
            read.append(line)
            yield line

    def record() -> None:
        f.flush()
        os.fsync(f.fileno())
        with replaced_whole(record_path) as r:
            json.dump({"about": work.about(), "source": str(source), "lines": done, "counts": added(start.counts, counts()),
                       "source_sha256": fingerprint.hexdigest(), "made_with": made}, r, ensure_ascii=False, indent=1)

    with open(partial, "a" if start.lines else "w", encoding="utf-8") as f:
        try:
            record()
            for translation in translate(remembered()):
                f.write(translation + "\n")
                _add_line(fingerprint, read.popleft())
                done += 1
                if (done - start.lines) % every == 0:
                    record()
        except BaseException as stopped:
            if done == 0:  # nothing to go on from
                f.close()
                partial.unlink(missing_ok=True)
                record_path.unlink(missing_ok=True)
                raise
            try:
                record()
            except Exception:  # (a full disk: the last record stands, and the lines after it are cut at the next run)
                pass
            if isinstance(stopped, KeyboardInterrupt):
                raise KeyboardInterrupt(f"the {done:,} {work.items} {work.done} are kept ({partial.name}); the same command "
                                        f"goes on from line {done + 1:,}") from None
            raise
