"""nmt.files.replaced_whole: a file appears only when whole (compressed where its name says so),
and the system's refusals are one-line errors."""

import bz2
import gzip
import lzma

import pytest

from nmt.errors import NmtError
from nmt.files import put_in_place, replaced_whole


def test_a_failed_write_leaves_the_old_file_and_no_leftovers(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    with pytest.raises(RuntimeError), replaced_whole(path) as f:
        f.write("half of the new")
        raise RuntimeError("stopped")
    assert path.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    with pytest.raises(NmtError, match=r"out.txt: cannot write there \(No space left on device\)"), \
            replaced_whole(path) as f:
        raise OSError(28, "No space left on device")  # what a full disk raises from a write
    assert path.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    with replaced_whole(path, "wb", sync=True) as f:
        f.write("ß\n".encode())
    assert path.read_text(encoding="utf-8") == "ß\n"


def test_folders_in_the_way_are_one_line_errors(tmp_path):
    with pytest.raises(NmtError, match="is a directory"), replaced_whole(tmp_path):
        pass
    (tmp_path / "file").write_text("x")
    with pytest.raises(NmtError, match=r"file/out.txt: cannot write there"), replaced_whole(tmp_path / "file" / "out.txt"):
        pass
    assert [p.name for p in tmp_path.iterdir()] == ["file"]
    with replaced_whole(tmp_path / "new" / "deeper" / "out.txt") as f:  # missing folders are made
        f.write("x")
    assert (tmp_path / "new" / "deeper" / "out.txt").read_text() == "x"


@pytest.mark.parametrize("suffix, read", [(".gz", gzip.open), (".xz", lzma.open), (".bz2", bz2.open)])
def test_a_file_named_compressed_is_written_compressed(tmp_path, suffix, read):
    """-o out.de.gz is a gzip file, as nmt reads a file so named (and an .xz or .bz2 one likewise);
    text and bytes alike, with the same line ends, and a finished plain file put in its place."""
    path = tmp_path / f"out.de{suffix}"
    with replaced_whole(path, newline="") as f:
        f.write("Ein Hund.\r\nß\n")
    with read(path, "rb") as f:
        assert f.read() == "Ein Hund.\r\nß\n".encode()
    with replaced_whole(path, "wb") as f:
        f.write(b"bytes\n")
    with read(path, "rb") as f:
        assert f.read() == b"bytes\n"
    if suffix == ".gz":  # the header names the file, not the hidden one it was written as
        assert b"out.de\0" in path.read_bytes()[:40]
    written = tmp_path / ".partial"
    written.write_text("done\n")
    put_in_place(written, path)
    with read(path, "rt") as f:
        assert f.read() == "done\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    plain = tmp_path / "plain.de"
    written.write_text("done\n")
    put_in_place(written, plain)
    assert plain.read_text() == "done\n" and not written.exists()
