"""Training pairs rewritten into the forms users type (`data.augment`): a share of the pairs in
capitals or Title Case on both sides (the translation of a headline in capitals is in capitals),
and a share with a typo in the source only (the model learns to read through it; its output
stays clean).

It happens once, in `nmt prepare`, on the text before it is tokenized: the shards hold token ids
made once, so the data, its epochs and an exact resume are what they are without augmentation.
Each pair's fate is drawn from its own generator, seeded by `seed` and the pair's place in its
corpus, so it does not depend on how the corpus is read in chunks. OpusTrainer's modifiers do the
same on the fly; its package pins sentencepiece 0.1.99 and draws from Python's global generator,
so nmt has its own (each a few lines).
"""

from __future__ import annotations

import random

from nmt.config import AugmentConfig

_TYPOS = ("swap", "drop", "double")


def title_case(text: str) -> str:
    """Every word's first letter a capital (the rest as it was), as in OpusTrainer's TitleCase."""
    return " ".join(word[:1].upper() + word[1:] for word in text.split(" "))


def with_typo(text: str, rng: random.Random) -> str:
    """One typo in one word of 3 or more letters: two neighbouring letters swapped, one lost, or
    one doubled. A text without such a word is returned as it is."""
    words = text.split(" ")
    candidates = [i for i, w in enumerate(words) if sum(c.isalpha() for c in w) >= 3]
    if not candidates:
        return text
    i = rng.choice(candidates)
    word = words[i]
    letters = [j for j, c in enumerate(word) if c.isalpha()]
    kind = rng.choice(_TYPOS)
    at = rng.choice(letters[:-1])  # a letter with a letter after it
    if kind == "swap" and word[at + 1].isalpha():
        word = word[:at] + word[at + 1] + word[at] + word[at + 2:]
    elif kind == "drop":
        word = word[:at] + word[at + 1:]
    else:
        word = word[:at] + word[at] + word[at:]
    words[i] = word
    return " ".join(words)


def augment_pair(source: str, target: str, index: int, cfg: AugmentConfig) -> tuple[str, str]:
    """Pair number `index` of its corpus, rewritten as `cfg` draws it (at most one change of case,
    and maybe a typo)."""
    rng = random.Random(f"{cfg.seed}:{index}")
    case = rng.random()
    if case < cfg.uppercase:
        source, target = source.upper(), target.upper()
    elif case < cfg.uppercase + cfg.titlecase:
        source, target = title_case(source), title_case(target)
    if rng.random() < cfg.typos:
        source = with_typo(source, rng)
    return source, target
