"""`nmt translate` at a terminal answers each line as it is entered; standard input gets the same
bad-input handling as a file."""

import os
import select
import subprocess
import sys
import time

from typer.testing import CliRunner

from nmt.cli import app


def read_line(fd: int, timeout: float = 60.0) -> bytes:
    """One line from `fd`, or fail after `timeout` seconds."""
    data, deadline = b"", time.monotonic() + timeout
    while not data.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
        assert ready, f"no answer within {timeout} s (got {data!r})"
        chunk = os.read(fd, 4096)
        assert chunk, f"output closed early (got {data!r})"
        data += chunk
    return data


def test_a_terminal_gets_each_translation_before_the_next_line_is_sent(trained_tiny):
    import pty

    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    primary, secondary = pty.openpty()
    out_read, out_write = os.pipe()
    child = subprocess.Popen([sys.executable, "-m", "nmt", "translate", "-c", str(ckpt)],
                             stdin=secondary, stdout=out_write, stderr=subprocess.DEVNULL)
    os.close(secondary)
    os.close(out_write)
    try:
        os.write(primary, b"A black dog leaps over a log.\n")
        first = read_line(out_read)  # answered while the terminal still waits for a second line
        assert first.strip() and child.poll() is None
        os.write(primary, b"\n")  # an empty line gets an empty answer
        assert read_line(out_read) == b"\n"
        os.write(primary, b"Asian man sweeping the walkway.\n")
        assert read_line(out_read).strip()
        os.write(primary, b"\x04")  # Ctrl-D: end of input
        assert child.wait(timeout=30) == 0
    finally:
        child.kill()
        os.close(primary)
        os.close(out_read)


def test_invalid_utf8_on_standard_input_is_one_line_with_the_line_number(trained_tiny):
    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    result = CliRunner().invoke(app, ["translate", "-c", str(ckpt)], input=b"A dog.\nA \xff cat.\n")
    assert result.exit_code == 2
    assert "<stdin>:2: invalid UTF-8 at byte 2 of the line" in result.output
    assert "Traceback" not in result.output


def test_interactive_flag_keeps_the_line_guarantees(trained_tiny):
    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    result = CliRunner().invoke(app, ["translate", "-c", str(ckpt), "--interactive"], input="A dog.\n\n  \nA cat.\n")
    assert result.exit_code == 0, result.output
    lines = result.stdout.split("\n")[:-1]
    assert [bool(line) for line in lines] == [True, False, False, True]


def test_a_utf16_file_or_input_is_named_so_with_the_command_that_converts_it(trained_tiny, tmp_path):
    """Windows Notepad's "Unicode" and Excel's "Unicode Text" are UTF-16 with a byte order mark:
    one line saying so and how to convert, exit 2, nothing written; for a file, standard input and
    a program's messages alike. A file whose later line is not UTF-8 is still named at that line."""
    from tests.conftest import one_line_error

    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    utf16 = "A dog runs.\r\nA cat sleeps.\r\n".encode("utf-16")
    for name in ("notes.txt", "talk.srt", "app.json"):
        data = utf16 if name != "app.json" else '{"a": "A dog runs."}'.encode("utf-16")
        (tmp_path / name).write_bytes(data)
        result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / name),
                                          "-o", str(tmp_path / f"de.{name}")])
        one_line_error(result, f"{name}: UTF-16 text (it begins with a UTF-16 byte order mark), where nmt reads UTF-8: "
                               "convert it with iconv -f UTF-16 -t UTF-8")
        assert not (tmp_path / f"de.{name}").exists()
    one_line_error(CliRunner().invoke(app, ["translate", "-c", checkpoint], input=utf16), "<stdin>: UTF-16 text")
    (tmp_path / "late.txt").write_bytes(b"A dog.\n\xff\xfe A cat.\n")  # (a UTF-16 mark past the first line: bytes)
    one_line_error(CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "late.txt")]),
                   "late.txt:2: invalid UTF-8 at byte 0 of the line")
