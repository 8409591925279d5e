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
