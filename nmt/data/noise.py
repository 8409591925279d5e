"""Source-side noise for back-translation (Edunov et al. 2018, "Understanding Back-Translation
at Scale", after Lample et al. 2018): each word is deleted with probability 0.1, replaced by a
filler token with probability 0.1, and the words are shuffled locally, none moving more than 3
positions (sorted by position + U(0, 4)). Seeded per line, so a corpus is noised the same way
every time.
"""

from __future__ import annotations

import random

FILLER = "<blank>"  # one piece where the recipe lists it in tokenizer.user_defined_symbols


def noised(line: str, seed: int, delete: float = 0.1, replace: float = 0.1, max_shift: int = 3,
           filler: str = FILLER) -> str:
    rng = random.Random(seed)
    words = []
    for word in line.split():
        draw = rng.random()
        if draw < delete:
            continue
        words.append(filler if draw < delete + replace else word)
    keys = [i + rng.uniform(0, max_shift + 1) for i in range(len(words))]
    return " ".join(word for _, word in sorted(zip(keys, words), key=lambda pair: pair[0]))
