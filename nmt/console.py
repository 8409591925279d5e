"""What the `nmt` commands print to stderr: log lines, warnings, one-line errors and spinners."""

from __future__ import annotations

import functools
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from nmt.errors import NmtError

# soft_wrap: log lines stay whole in files and CI logs; emoji=False: ":x:" in a path stays as written
err = Console(stderr=True, soft_wrap=True, emoji=False)


def one_line_errors(function: Callable) -> Callable:
    """`function` with its NmtError, or an OSError (a path the system refused), printed as
    `error: ...` on one line and exit code 2, never a traceback (Ctrl-C: exit code 130)."""
    @functools.wraps(function)
    def friendly(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except NmtError as e:
            err.print(f"[red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except OSError as e:  # a file or folder the system refused, where no check of nmt's foresaw it
            if isinstance(e, BrokenPipeError):  # `nmt translate ... | head`: the reader has gone
                raise typer.Exit(1) from None
            where = "".join(f"{name}: " for name in (e.filename, e.filename2) if name)
            why = e.strerror or str(e)
            if isinstance(e, FileExistsError) and e.filename and not os.path.isdir(e.filename):
                why = "exists and is not a directory"  # (a folder to make, where a file is)
            err.print(f"[red]error:[/] {escape(where + why)}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt as e:  # (its text: what was kept, where a command keeps any)
            err.print(f"interrupted{f'; {e}' if str(e) else ''}", highlight=False, markup=False)
            raise typer.Exit(130) from None
    return friendly


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (a scheduler preempting a job, `kill`) taken as Ctrl-C while the block runs: the
    command ends as an interrupted one does (one_line_errors: exit code 130), keeping what it keeps
    (a file translation's lines so far: nmt.decode.resumable) and leaving no half-written file,
    instead of dying where it stands. Outside the main thread, where Python takes no signals,
    nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def say(lines: list[str]) -> None:
    for line in lines:
        err.print(line, highlight=False, markup=False)


def warner(path) -> Callable[[str], None]:
    """Warnings about an input file's lines, one line each on stderr."""
    return lambda message: err.print(f"warning: {path}: {message}", highlight=False, markup=False)


def drawn(show: bool = True) -> bool:
    """Whether progress is drawn: asked for, and stderr is a terminal (else nothing is shown, and
    nothing need be counted for it)."""
    return show and err.is_terminal


@contextmanager
def counter(text: str, show: bool = True, total: int | None = None,
            bars: bool = False) -> Iterator[Callable[..., None]]:
    """A spinner per counted thing on a terminal: yields `count(name, n, of=None)`, which sets that
    thing's count; with a total (`total` for every thing, or `of` per thing where `bars`), a bar
    and the time left too. `text` may name `{task.fields[of]}`: " of TOTAL" where
    the thing has a total, else nothing."""
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    columns = [SpinnerColumn(), TextColumn(text), TimeElapsedColumn()]
    if total is not None or bars:
        columns[2:2] = [BarColumn()]
        columns.append(TimeRemainingColumn())
    # redirect_stdout off: what the command writes to standard output (translations) stays there
    with Progress(*columns, console=err, disable=not drawn(show), redirect_stdout=False) as bar:
        tasks: dict[str, int] = {}

        def count(name: str, n: int, of: int | None = None) -> None:
            if name not in tasks:  # one line per name (setdefault would add a task at every call)
                whole = total if of is None else of
                tasks[name] = bar.add_task("", total=whole, name=name, of="" if whole is None else f" of {whole:,}")
            bar.update(tasks[name], completed=n)
        yield count


def working(text: str):
    """A spinner with `text` and the time elapsed on stderr's terminal while a long step runs that
    counts nothing (nothing shown elsewhere, and nothing left behind when it ends)."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    progress = Progress(SpinnerColumn(), TextColumn(text), TimeElapsedColumn(), console=err, transient=True,
                        disable=not drawn(), redirect_stdout=False)
    progress.add_task("", total=None)
    return progress


def pairs_counter(doing: str, pairs, show: bool = True):
    """`counter` of a corpus's pairs done: "DOING: N of M pairs" with a bar and the time left, the
    pairs counted first on a terminal only ("DOING: N pairs" where they cannot be counted: the
    command that reads them says why)."""
    total = None
    if drawn(show):
        try:
            total = pairs.count_pairs()
        except NmtError:
            pass
    return counter(f"{doing}: {{task.completed:,}}{{task.fields[of]}} pairs", show, total)


def lines_counter(doing: str, source, show: bool = True, unit: str = "lines"):
    """`counter` of lines (or another `unit`, one a line) done: "DOING: N of M lines" with a bar and
    the time left where `source` is a file (its lines counted first, on a terminal only), "DOING: N
    lines" for standard input ("-") or a file that cannot be read (the command that reads it says why)."""
    from nmt.data.corpus import count_lines

    total = None
    if drawn(show) and str(source) != "-":
        try:
            total = count_lines(Path(source))
        except NmtError:
            pass
    return counter(f"{doing}: {{task.completed:,}}{{task.fields[of]}} {unit}", show, total)
