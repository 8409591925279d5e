"""Lexical shortlists (`decode.shortlist`): a batch is translated with an output layer, softmax and
top-k restricted to the target tokens its sources can need (on Multi30k, about 480 of 6,000 pieces
for one sentence, 64-80 % of them for a batch of 4,096 tokens), which shrinks each search step's
largest matrix product in a small decoder (docs/decoding.md, "Shortlists", says what that can and
cannot gain).

The file is CTranslate2's vocabulary map (nmt.data.vocabulary_map), so that `nmt export --format
ctranslate2` carries it as it is (`vmap.txt`, used with `use_vmap`) and both engines translate
alike; its line with an empty n-gram lists the tokens always allowed (the most frequent). A
batch's candidates, as CTranslate2 computes them: UNK, BOS and EOS, the tokens always allowed,
those of every source n-gram found in any sentence of the batch, and the batch's forced tokens
(prefixes; in nmt's engine, constraints too). The model's softmax runs over the candidates only
(the others get no probability at all).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from nmt.data.vocabulary_map import read_vocabulary_map
from nmt.special_tokens import BOS, EOS, UNK


@dataclass
class Shortlist:
    rules: list[dict[str, list[int]]]  # by n-gram length - 1: n-gram (pieces joined by spaces) -> target ids
    always: list[int]  # target ids allowed in every batch (UNK, BOS and EOS among them)

    def candidates(self, sources: Iterable[list[str]], forced: Iterable[int] = ()) -> list[int]:
        """The sorted target ids a batch may use: `sources` are its sentences as pieces (without
        EOS), `forced` the ids its prefixes (and constraints) put in the output."""
        chosen = set(self.always) | set(forced)
        for pieces in sources:
            for i in range(len(pieces)):
                for n, rules in enumerate(self.rules):
                    if i + n >= len(pieces):
                        break
                    chosen.update(rules.get(" ".join(pieces[i: i + n + 1]), ()))
        return sorted(chosen)


def read_shortlist(path: str | Path, tgt_tokenizer) -> Shortlist:
    """A vocabulary map file; target pieces outside the vocabulary count as UNK (as in CTranslate2)."""
    always_pieces, by_ngram = read_vocabulary_map(path)
    rules: list[dict[str, list[int]]] = [{}]
    for key, pieces in by_ngram.items():
        n = key.count(" ") + 1
        rules.extend({} for _ in range(n - len(rules)))
        rules[n - 1][key] = [tgt_tokenizer.piece_to_id(piece) for piece in pieces]
    always = {UNK, BOS, EOS} | {tgt_tokenizer.piece_to_id(piece) for piece in always_pieces}
    return Shortlist(rules, sorted(always))
