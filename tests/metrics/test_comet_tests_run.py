"""`make test` runs the COMET tests in their own environment over one folder (collecting the
whole suite there costs seconds of imports for nothing): every test marked comet must live in it."""

import re

from tests.conftest import ROOT


def test_every_comet_test_lives_where_make_test_runs_them():
    [folder] = re.findall(r"pytest -m comet (\S+) ", (ROOT / "Makefile").read_text())
    marked = {path.relative_to(ROOT) for path in (ROOT / "tests").rglob("test_*.py")
              if re.search(r"pytest\.mark\.comet\b", path.read_text(encoding="utf-8"))}
    assert marked and all(path.is_relative_to(folder) for path in marked), (folder, marked)
