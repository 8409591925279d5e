"""Back-translation (Sennrich et al. 2016): target-language monolingual text becomes a synthetic
parallel corpus, translated into the source language by a reverse model.

`nmt back-translate -c REVERSE -i mono.de -o synthetic/train` with a de→en model writes
`synthetic/train.de` (the monolingual lines, as given) and `synthetic/train.en` (their
translations), line-aligned: a corpus that a recipe lists beside the genuine one, usually with a
tag (`tag: <BT>`, Caswell et al. 2019) so that the model can tell the two apart. Beam search gives
the most likely translations; sampling (`--sampling`) more varied ones, and noised beam search
(`--noise`: words deleted, replaced by a filler and shuffled locally, nmt.data.noise) a harder
source side; both help more than plain beam search once the synthetic data is large (Edunov et
al. 2018). Both files appear only when complete; a run stopped before goes on where it stopped
when run again (nmt.decode.resumable).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nmt.config import DecodeConfig
from nmt.data.corpus import read_lines, side_file
from nmt.data.noise import noised
from nmt.decode.stream import refuse_to_overwrite, translate_file, write_lines
from nmt.files import line_count


@dataclass
class BackTranslation:
    monolingual: str  # the file of the monolingual lines, as given
    synthetic: str  # the file of their translations
    lines: int
    failed: int  # lines that could not be translated (their output lines are empty)
    sampling: bool
    noise: bool = False

    def describe(self) -> list[str]:
        method = "sampled" if self.sampling else "beam search"
        return [f"wrote {line_count(self.lines)}: {self.monolingual} (as given) and {self.synthetic} "
                f"({method}{', noised' if self.noise else ''})"]


def back_translate(translator, monolingual: Path, out_stem: str, cfg: DecodeConfig,
                   warn: Callable[[str], None] = lambda _: None, shards=None, noise: bool = False,
                   done: Callable[[int], None] = lambda _: None, resume: dict | None = None) -> BackTranslation:
    """Write `{out_stem}.{mono_lang}` and `{out_stem}.{synthetic_lang}` (compressed where the stem
    ends in .gz, .xz or .bz2: nmt.data.corpus.side_file); the reverse model translates
    from its data.src_lang (the monolingual text's language) into its data.tgt_lang (`shards`: over
    several processes, as in translate_file); with `noise`, each translation is noised (line n
    from seed cfg.seed + n); `done(n)` hears of the lines translated so far; `resume`: as in
    translate_file, a stopped run's translations are gone on from."""
    data = translator.recipe.data
    mono_lang, synthetic_lang = data.src_lang, data.tgt_lang
    synthetic, given = side_file(out_stem, synthetic_lang), side_file(out_stem, mono_lang)
    for written in (synthetic, given):  # before the hours of translation
        refuse_to_overwrite(written, [monolingual])
    report = translate_file(translator, str(monolingual), synthetic, cfg, "plain", False, warn, shards=shards,
                            done=done, resume=resume)
    if noise:  # rewritten whole, then swapped in: the file is never half noised
        write_lines(synthetic, (noised(line, cfg.seed + n) for n, line in enumerate(read_lines(Path(synthetic)))))
    write_lines(given, read_lines(Path(monolingual)))
    return BackTranslation(given, synthetic, report.lines, report.failed, cfg.sampling, noise)
