"""An alignment independent of nmt's models, to judge where tags were put: eflomal (Östling and
Tiedemann 2016, a Bayesian IBM-model aligner), trained on the Multi30k training corpus together
with the pairs to be judged, lowercased, in whitespace words. A source word's reference output
words are those both directions link it to (their intersection, the precise part), else those
either direction links it to.
"""

from __future__ import annotations

import tempfile
from pathlib import Path


def directional_links(sources: list[str], targets: list[str]) -> tuple[list[set], list[set]]:
    """eflomal's links (source index, target index) of each pair of whitespace-token lines, in the
    forward and in the reverse direction."""
    try:
        import eflomal
    except ImportError:
        raise SystemExit("the reference aligner is not installed: pip install 'nmt[bench]' (eflomal)") from None
    with tempfile.TemporaryDirectory() as folder:
        forward, reverse = Path(folder) / "fwd", Path(folder) / "rev"
        eflomal.Aligner().align(sources, targets, links_filename_fwd=str(forward), links_filename_rev=str(reverse),
                                quiet=True)
        fwd, rev = ([{tuple(int(x) for x in pair.split("-")) for pair in line.split()}
                     for line in path.read_text().splitlines()] for path in (forward, reverse))
    return fwd, rev


def link_sets(sources: list[str], outputs: list[str], train_src: list[str], train_tgt: list[str]
              ) -> tuple[list[set], list[set]]:
    """For each (source, output) pair, eflomal's (source, output) word links: those both
    directions agree on (sure) and those of either (possible)."""
    src = [" ".join(line.lower().split()) for line in [*train_src, *sources]]
    tgt = [" ".join(line.lower().split()) for line in [*train_tgt, *outputs]]
    fwd, rev = directional_links(src, tgt)
    fwd, rev = fwd[len(train_src):], rev[len(train_src):]
    return [f & r for f, r in zip(fwd, rev)], [f | r for f, r in zip(fwd, rev)]


def reference_links(sources: list[str], outputs: list[str], train_src: list[str], train_tgt: list[str]
                    ) -> list[dict[int, set[int]]]:
    """For each (source, output) pair: source word index -> its reference output word indices."""
    return [_links(s, p) for s, p in zip(*link_sets(sources, outputs, train_src, train_tgt))]


def _links(sure: set, possible: set) -> dict[int, set[int]]:
    out: dict[int, set[int]] = {}
    for s, t in sure:
        out.setdefault(s, set()).add(t)
    precise = set(out)
    for s, t in possible:
        if s not in precise:
            out.setdefault(s, set()).add(t)
    return out


def placement(reference: dict[int, set[int]], source_words: range, placed: set[int]) -> str | None:
    """"exact" where the tag's output words span what the reference aligns its source words to,
    "overlap" where they share a word, "miss" otherwise; None where the reference aligns none."""
    wanted = set().union(*(reference.get(i, set()) for i in source_words))
    if not wanted:
        return None
    if placed and min(placed) == min(wanted) and max(placed) == max(wanted):
        return "exact"
    return "overlap" if placed & wanted else "miss"
