"""Reading parallel text, with clear errors: text files (a path stem's two files, or a TSV file)
and Hugging Face datasets, each a Corpus (nmt.data.corpora picks one for a recipe's split).

Files are UTF-8 (a BOM and Windows line endings are tolerated); an invalid byte is an error that
names the file and line.
"""

from __future__ import annotations

import io
import lzma
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import zip_longest
from pathlib import Path
from typing import BinaryIO

from nmt.errors import NmtError
from nmt.files import COMPRESSED, line_count


# splits kept in one file, named with their extension (nmt.data.corpora)
ONE_FILE_CORPORA = (".tsv", ".csv", ".tmx")


def _maybe_compressed(path: Path) -> tuple[Path, ...]:
    return (path, *(Path(f"{path}{suffix}") for suffix in COMPRESSED))


def written_stem(stem: str) -> tuple[str, str]:
    """A corpus stem to write at, and the compression its name asks for: "bt/syn.gz" is the stem
    "bt/syn" with ".gz" (each side then `bt/syn.en.gz`, as split_file reads it back), "bt/syn"
    itself with ""."""
    suffix = Path(stem).suffix
    return (stem[:-len(suffix)], suffix) if suffix.lower() in COMPRESSED else (stem, "")


def side_file(stem: str, lang: str) -> str:
    """The file of one side of a corpus written at `stem` (written_stem): `{stem}.{lang}`, or
    compressed, `{stem}.{lang}.gz`."""
    bare, suffix = written_stem(stem)
    return f"{bare}.{lang}{suffix}"


def split_file(stem: str, lang: str) -> Path:
    """The file of one side of a split: `{stem}.{lang}`, or that name compressed (`.gz`, `.xz`, `.bz2`)."""
    for candidate in _maybe_compressed(Path(f"{stem}.{lang}")):
        if candidate.is_file():
            return candidate
    hint = ""
    if Path(stem).is_file():
        if _tab_in_first_line(Path(stem)):  # a TSV under another name (manythings.org's deu.txt)
            hint = f"; {stem} has tab-separated columns: a TSV split is named .tsv (its source, then its target column)"
        else:  # one side's file, where the stem both sides share was wanted
            bare = Path(stem).with_suffix("") if Path(stem).suffix in COMPRESSED else Path(stem)
            hint = f"; a split is the stem its two files share: {bare.with_suffix('')}, not {stem}"
    elif one_file := next((p for ext in ONE_FILE_CORPORA for p in _maybe_compressed(Path(f"{stem}{ext}")) if p.is_file()),
                          None):  # the split is kept in one file, named without its extension
        hint = f"; {one_file} is there: name a one-file split with its extension"
    raise NmtError(f"{stem}.{lang}: file not found (also tried it with {', '.join(COMPRESSED)}){hint}")


def _tab_in_first_line(path: Path) -> bool:
    try:
        with opened(path) as raw:
            return b"\t" in raw.readline(1 << 16)
    except NmtError:
        return False


@contextmanager
def opened(path: Path) -> Iterator[BinaryIO]:
    """`path`'s bytes (decompressed for .gz, .xz and .bz2); a file that cannot be opened or read,
    then or while it is read in the block, is an NmtError naming it."""
    try:
        with COMPRESSED.get(path.suffix.lower(), open)(path, "rb") as raw:
            yield raw
    except (OSError, EOFError, lzma.LZMAError) as e:
        if isinstance(e, FileNotFoundError):
            raise NmtError(f"{path}: file not found") from None
        if isinstance(e, IsADirectoryError):
            raise NmtError(f"{path}: is a directory; name a file") from None
        raise NmtError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None


def read_bytes(path: Path) -> bytes:
    """A file's bytes; one that cannot be read is an NmtError naming it."""
    with opened(path) as raw:
        return raw.read()


def not_utf8(name: str, number: int, data: bytes, error: UnicodeDecodeError, where: str = " of the line") -> NmtError:
    """The error for line `number` of `name`, whose bytes `data` (the line's, or from the file's
    start) are not UTF-8 at `error`: a file that begins with a UTF-16 byte order mark (Windows
    Notepad's "Unicode", Excel's "Unicode Text") is said to be UTF-16, with the command that
    converts it, rather than invalid at its first byte."""
    if number == 1 and data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return NmtError(f"{name}: UTF-16 text (it begins with a UTF-16 byte order mark), where nmt reads UTF-8: "
                        "convert it with iconv -f UTF-16 -t UTF-8")
    return NmtError(f"{name}:{number}: invalid UTF-8 at byte {error.start}{where}{_as_windows_1252(data, error.start)}")


def _as_windows_1252(data: bytes, at: int) -> str:
    """Where none of the bytes beyond ASCII around `at` is UTF-8 (a file Excel saved as "CSV", or
    Notepad as "ANSI"), how they read in Windows-1252, with the command that converts the file."""
    start, end = data.rfind(b"\n", 0, at) + 1, data.find(b"\n", at)  # (its line of `data`)
    around = data[max(start, at - 24):min(end if end >= 0 else len(data), at + 24)].rstrip(b"\r")
    if any(ord(c) > 127 and c != "\ufffd" for c in around.decode("utf-8", errors="replace")):
        return ""  # some UTF-8 there: a damaged UTF-8 file, not another encoding
    try:
        text = around.decode("cp1252")
    except UnicodeDecodeError:  # (one of the five bytes Windows-1252 leaves undefined)
        return ""
    return f' (in Windows-1252 it reads "{text.strip()}": if so, convert the file with iconv -f cp1252 -t utf-8)'


def decode_lines(stream, name: str) -> Iterator[str]:
    """Lines of a binary stream without their line ending, one at a time (so a terminal gets an
    answer per line); invalid UTF-8 is an error naming `name` and the line."""
    for number, data in enumerate(stream, start=1):
        try:
            line = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise not_utf8(name, number, data, e) from None
        if number == 1 and line.startswith("\ufeff"):
            line = line[1:]
        yield line.rstrip("\r\n")


_HEAD = 1 << 16  # the bytes a file's line ending is told from


def _ends_in_carriage_returns(head: bytes) -> bool:
    """Whether a file whose first bytes are `head` ends its lines in a carriage return alone
    (classic Mac OS; Excel for Mac's "CSV (Macintosh)"): a CR there and no LF."""
    return b"\r" in head and b"\n" not in head


def _split_at_carriage_returns(stream: BinaryIO) -> Iterator[bytes]:
    """A stream's lines, each ending in its CR (the last one maybe not), read a block at a time."""
    rest = b""
    while block := stream.read(_HEAD):
        *lines, rest = (rest + block).split(b"\r")
        yield from (line + b"\r" for line in lines)
    if rest:
        yield rest


def byte_lines(raw: BinaryIO) -> Iterator[bytes]:
    """A file's lines as bytes, each with its line ending: LF (or CRLF), or a CR alone throughout a
    file whose first bytes hold no LF."""
    stream = io.BufferedReader(raw, _HEAD)
    return _split_at_carriage_returns(stream) if _ends_in_carriage_returns(stream.peek(_HEAD)[:_HEAD]) else iter(stream)


def read_lines(path: Path) -> Iterator[str]:
    """Yield lines without their line ending (byte_lines); names file and line on invalid UTF-8."""
    with opened(path) as raw:
        yield from decode_lines(byte_lines(raw), str(path))


def text_layout(path: Path) -> tuple[str, bool]:
    """How a text file is laid out: its first line's ending ("\r\n" or "\n") and whether it begins
    with a UTF-8 byte order mark, for a document translated whole to be written back alike (a
    subtitle file from Windows: both; some players read UTF-8 only after a BOM)."""
    with opened(path) as raw:
        first = raw.readline(1 << 20)
    return ("\r\n" if first.endswith(b"\r\n") else "\n"), first.startswith(b"\xef\xbb\xbf")


def count_lines(path: Path) -> int:
    """How many lines `read_lines(path)` yields (a last line without its newline included), counted
    in the raw bytes, without decoding them."""
    count, last = 0, b""
    with opened(path) as raw:
        block = raw.read(1 << 20)
        end = b"\r" if _ends_in_carriage_returns(block[:_HEAD]) else b"\n"
        while block:
            count, last = count + block.count(end), block[-1:]
            block = raw.read(1 << 20)
    return count + (last not in (b"", end))


def read_parallel(src_path: Path, tgt_path: Path) -> Iterator[tuple[str, str]]:
    """Yield (source, target) pairs; the two files must have the same number of lines."""
    src_lines, tgt_lines = read_lines(src_path), read_lines(tgt_path)
    count = 0
    for src, tgt in zip_longest(src_lines, tgt_lines):
        if src is None or tgt is None:
            longer_is_src = tgt is None
            rest = 1 + sum(1 for _ in (src_lines if longer_is_src else tgt_lines))
            n_src, n_tgt = (count + rest, count) if longer_is_src else (count, count + rest)
            raise NmtError(f"{src_path} has {line_count(n_src)} but {tgt_path} has {n_tgt:,}: "
                           "parallel files must have the same number of lines")
        count += 1
        yield src, tgt
    if count == 0:
        raise NmtError(f"{src_path}: empty file (no sentence pairs)")


class Corpus:
    """One split of a parallel corpus, whatever its storage."""

    def pairs(self) -> Iterator[tuple[str, str]]:
        raise NotImplementedError

    def side(self, which: str) -> Iterator[str]:
        """The lines of one side, "src" or "tgt"."""
        index = 0 if which == "src" else 1
        return (pair[index] for pair in self.pairs())

    def fingerprint(self) -> dict:
        """What identifies the content, to decide whether prepared data is up to date."""
        raise NotImplementedError

    def count_pairs(self) -> int:
        """How many pairs `pairs` will give, found without decoding the text (a progress bar's total)."""
        raise NotImplementedError


def file_fingerprint(path: Path) -> dict:
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise NmtError(f"{path}: file not found") from None
    return {"path": str(path), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


class TextPair(Corpus):
    def __init__(self, stem: str, src_lang: str, tgt_lang: str):
        self.src_path, self.tgt_path = split_file(stem, src_lang), split_file(stem, tgt_lang)

    @classmethod
    def of_files(cls, src_path: Path, tgt_path: Path) -> "TextPair":
        """The pairs of two files named as they are (not a stem and its languages)."""
        corpus = cls.__new__(cls)
        corpus.src_path, corpus.tgt_path = Path(src_path), Path(tgt_path)
        return corpus

    def pairs(self):
        return read_parallel(self.src_path, self.tgt_path)

    def side(self, which: str):
        return read_lines(self.src_path if which == "src" else self.tgt_path)

    def fingerprint(self):
        return {"files": [file_fingerprint(self.src_path), file_fingerprint(self.tgt_path)]}

    def count_pairs(self):
        return count_lines(self.src_path)  # a target side of another length is read_parallel's error

    def __str__(self):
        return f"{self.src_path} + {self.tgt_path}"


# a TSV split whose first column is a number on each of its first ID_LINES lines (all of them,
# if fewer) holds ids there, not sentences: an error, before the pairs train a model
ID_LINES = 20


class Tsv(Corpus):
    def __init__(self, path: str):
        self.path = Path(path)
        if not self.path.is_file():
            raise NmtError(f"{path}: file not found")

    def pairs(self):
        count, numbered = 0, True  # whether every line so far begins with a number
        for count, line in enumerate(read_lines(self.path), start=1):
            columns = line.split("\t")
            if len(columns) < 2:
                raise NmtError(f"{self.path}:{count}: expected source<TAB>target, found {len(columns)} column")
            if numbered and count <= ID_LINES:
                numbered = columns[0].strip().isdigit() and not columns[1].strip().isdigit()
                if numbered and count == ID_LINES:
                    raise NmtError(self._ids_not_sentences(len(columns)))
            yield columns[0], columns[1]
        if numbered and count:  # a file shorter than ID_LINES, each line a number and a sentence
            raise NmtError(self._ids_not_sentences(len(columns)))
        if count == 0:
            raise NmtError(f"{self.path}: empty file (no sentence pairs)")

    def _ids_not_sentences(self, columns: int) -> str:
        layout = " (Tatoeba's pairs are id, sentence, id, sentence: `cut -f2,4` makes them source, target)" \
            if columns >= 4 else ""
        return (f"{self.path}:1: the first column holds numbers, not sentences, on each of the first lines; a TSV "
                f"split is source<TAB>target{layout}")

    def fingerprint(self):
        return {"files": [file_fingerprint(self.path)]}

    def count_pairs(self):
        return count_lines(self.path)

    def __str__(self):
        return str(self.path)


def load_hf_dataset(name: str, config: str | None = None, split: str | None = None, label: str | None = None):
    """A Hugging Face `datasets` corpus (one split of it, with `split`) from the Hub or from a folder
    written by save_to_disk; a failure is an NmtError naming `label` (default: the name)."""
    import datasets

    try:
        if Path(name).is_dir():
            loaded = datasets.load_from_disk(name)
            return loaded[split] if split and isinstance(loaded, datasets.DatasetDict) else loaded
        return datasets.load_dataset(name, config, split=split)
    except Exception as e:  # datasets raises many types (missing split, no network, bad name, not a dataset folder)
        where = label or f"{name}{':' + config if config else ''}"
        raise NmtError(f"{where}: cannot load the dataset: {(str(e).strip().splitlines() or [type(e).__name__])[0]}") from None


class HuggingFace(Corpus):
    def __init__(self, spec: str, src_lang: str, tgt_lang: str):
        parts = spec[len("hf:"):].split(":")
        if len(parts) not in (2, 3):
            raise NmtError(f"{spec}: expected hf:NAME[:CONFIG]:SPLIT")
        name, config, split = (parts[0], None, parts[1]) if len(parts) == 2 else parts
        self.spec, self.src_lang, self.tgt_lang = spec, src_lang, tgt_lang
        self.dataset = load_hf_dataset(name, config, split, label=spec)
        columns = self.dataset.column_names
        if "translation" not in columns and not {src_lang, tgt_lang} <= set(columns):
            raise NmtError(f"{spec}: no 'translation' column nor columns {src_lang!r}, {tgt_lang!r} (has {columns})")

    def pairs(self):
        if len(self.dataset) == 0:
            raise NmtError(f"{self.spec}: empty split")
        nested = "translation" in self.dataset.column_names
        for number, row in enumerate(self.dataset, start=1):
            texts = row["translation"] if nested else row
            try:
                yield texts[self.src_lang], texts[self.tgt_lang]
            except KeyError as e:
                raise NmtError(f"{self.spec}: row {number} has no {e.args[0]!r} text") from None

    def fingerprint(self):
        return {"dataset": self.spec, "fingerprint": getattr(self.dataset, "_fingerprint", None),
                "rows": len(self.dataset)}

    def count_pairs(self):
        return len(self.dataset)

    def __str__(self):
        return self.spec
