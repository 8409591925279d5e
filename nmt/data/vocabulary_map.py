"""CTranslate2's vocabulary map, the file of a lexical shortlist (`decode.shortlist`,
nmt.decode.shortlist; `vmap.txt` in a CTranslate2 export). Each line is

    SOURCE N-GRAM <tab> TARGET PIECE TARGET PIECE ...

in sentencepiece pieces; a line with an empty n-gram lists the pieces always allowed."""

from __future__ import annotations

from pathlib import Path

from nmt.errors import NmtError
from nmt.files import replaced_whole


def read_vocabulary_map(path: str | Path) -> tuple[list[str], dict[str, list[str]]]:
    """(the pieces always allowed, {source n-gram: its target pieces}); a line without its tab is
    an error naming the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise NmtError(f"{path}: cannot read the shortlist ({e})") from None
    always: list[str] = []
    rules: dict[str, list[str]] = {}
    for number, line in enumerate(text.split("\n"), 1):  # only \n ends a line, as the writer has it
        if not line:
            continue
        key, tab, targets = line.partition("\t")
        if not tab:
            raise NmtError(f"{path}:{number}: no tab between the source n-gram and its target pieces")
        pieces = [piece for piece in targets.split(" ") if piece]
        if key:
            rules[key] = pieces
        else:
            always += pieces
    return always, rules


def write_vocabulary_map(path: str | Path, always: list[str], rules: dict[str, list[str]]) -> None:
    """The always-allowed pieces first, then one line per source n-gram; written beside `path` and
    renamed, so a stopped run leaves no partial file."""
    path = Path(path)
    for key, targets in [("", always), *rules.items()]:
        if any(c in key for c in "\t\n") or any(c in piece for piece in targets for c in " \t\n"):
            raise NmtError(f"{key!r}: a vocabulary map's pieces hold no tab, line break or (target) space")
    with replaced_whole(path) as f:
        f.write("\t" + " ".join(always) + "\n")
        for key, targets in rules.items():
            f.write(f"{key}\t{' '.join(targets)}\n")
