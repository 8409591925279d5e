"""Translation spread over processes (`nmt translate --nproc`, nmt.decode.sharded): the same output
as one process, line for line, with warnings naming the input's own line numbers."""

from __future__ import annotations

from typer.testing import CliRunner

from nmt.cli import app
from nmt.data.corpus import read_lines
from nmt.decode.sharded import EngineSpec, translate_sharded
from nmt.decode.stream import StreamReport, translate_stream
from tests.conftest import TINY_DATA, one_line_error


def test_two_processes_write_what_one_writes_in_input_order(trained_tiny, tmp_path):
    lines = list(read_lines(TINY_DATA / "train.en"))[:37]
    lines[3:3] = ["", "   "]
    lines[20] = " ".join(["dog"] * 400)  # past the model's positions: a warning naming its line
    spec = EngineSpec((trained_tiny.out / "checkpoints" / "best.pt",), threads=1)
    cfg = trained_tiny.decode.model_copy(update={"precision": "fp32"})
    one_warnings: list[str] = []
    one = list(translate_stream(spec.load(), lines, cfg, warn=one_warnings.append))
    warnings: list[str] = []
    report = StreamReport()
    heard: list[int] = []
    # chunks of 13 lines: shares of 7 and 6, and a last chunk of 13 lines to a different split
    sharded = list(translate_sharded(spec, 2, 2, lines, cfg, warn=warnings.append, report=report, chunk_lines=13,
                                     done=heard.append))
    assert sharded == one and len(sharded) == len(lines) and sharded[3] == sharded[4] == ""
    assert warnings == one_warnings and warnings and warnings[0].startswith("line 21:")
    assert report.lines == len(lines) and report.failed == 0
    # the lines translated so far, heard after each worker's batches: more often than once a chunk
    assert heard == sorted(heard) and heard[-1] == len(lines) and len(set(heard)) > 3
    assert {13, 26} <= set(heard)  # each chunk is counted whole before the next begins


def test_nproc_on_the_command_line(trained_tiny, tmp_path):
    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    source = tmp_path / "in.en"
    source.write_text("A black dog leaps over a log.\n")
    runner = CliRunner()
    one = runner.invoke(app, ["translate", "-c", str(ckpt), "-i", str(source), "-o", str(tmp_path / "one.de")])
    # back-translate with the same model, over more processes than lines (the extra one idles)
    more = runner.invoke(app, ["back-translate", "-c", str(ckpt), "-i", str(source), "-o", str(tmp_path / "synthetic"),
                               "--nproc", "2"])
    assert one.exit_code == 0 and more.exit_code == 0, more.output
    assert (tmp_path / "synthetic.de").read_text() == (tmp_path / "one.de").read_text()
    assert len((tmp_path / "one.de").read_text().splitlines()) == 1
    one_line_error(runner.invoke(app, ["translate", "-c", str(ckpt), "-i", str(source), "--nproc", "0"]), "--nproc 0")


def test_the_fork_server_started_early_is_a_child_that_imports_the_workers_modules():
    """start_fork_server (called first thing by the --nproc commands and `nmt serve`) starts the
    fork server at once, as a child of this process, with the workers' modules to import."""
    import os
    from pathlib import Path

    from nmt.decode.worker_processes import PRELOAD, start_fork_server

    start_fork_server()
    me = str(os.getpid())
    children = [p for p in Path("/proc").iterdir() if p.name.isdigit() and (p / "stat").exists()
                and (p / "stat").read_text().rsplit(")", 1)[1].split()[1] == me]
    commands = [(p / "cmdline").read_bytes().decode(errors="replace") for p in children]
    servers = [c for c in commands if "multiprocessing.forkserver" in c]
    assert len(servers) == 1 and all(module in servers[0] for module in PRELOAD), commands
