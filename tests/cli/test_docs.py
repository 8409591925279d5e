"""The documentation's links lead somewhere: every relative link in a tracked Markdown file names
a file or folder that exists."""

from __future__ import annotations

import re
import subprocess

from tests.conftest import ROOT


def test_every_relative_link_in_the_documentation_resolves():
    pages = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    assert "README.md" in pages and "docs/architecture.md" in pages
    broken = []
    for page in pages:
        text = (ROOT / page).read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            path = target.split("#", 1)[0]
            if not path or re.match(r"[a-z]+:", path):  # an anchor in the page, or a web address
                continue
            if not ((ROOT / page).parent / path).exists():
                broken.append(f"{page}: {target}")
    assert not broken, broken


def test_the_readme_guides_in_at_most_200_lines_with_the_two_set_up_commands_first():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    first_block = re.search(r"```bash\n(.*?)```", readme, flags=re.S).group(1)
    assert [line.split()[:2] for line in first_block.splitlines()] == [["make", "demo"], ["make", "test"]]
    for page in ("docs/architecture.md", "bench/README.md", "experiments/README.md", "bench/gpu_day/README.md"):
        assert f"]({page})" in readme, page
