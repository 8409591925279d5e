"""nmt.files.replaced_whole: a file appears only when whole, and the system's refusals are one-line errors."""

import pytest

from nmt.errors import NmtError
from nmt.files import replaced_whole


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
