"""Word alignments of the training pairs, for guided alignment (train.guided_alignment).

With data.word_alignments set, `nmt prepare` writes the shard `train.align` beside `train.src` and
`train.tgt`: for each kept pair, its links between words, flattened as (source word, target word)
index pairs. They come from prepare's word dictionary (`dice`: nmt.data.word_pairs, competitive
linking, one to one), whose words are those nmt finds without a dictionary (each Chinese or
Japanese character, Khmer cluster and Burmese syllable a word, as decoding's alignments read them:
nmt.data.words.by_rules_alone), or from a Pharaoh file aligned with the training corpus line by
line (an aligner's output over whitespace words, e.g. eflomal's). A pair whose pieces do not split
into its words (sentencepiece's word-start mark ▁ disagreeing with the spaces) keeps no links.

Links between words hold for every segmentation of a pair, the sampled ones of
data.subword_sampling_alpha included, so they are mapped onto pieces batch by batch
(`alignment_targets`): each piece of a target word is linked to every piece of the source words
its word is linked to; control tokens (language tokens, tags, EOS) belong to no word. Each target
position's links, normalized to sum to 1, are the distribution its guided attention is trained
towards; a position without links (an unaligned word, EOS, padding) is not trained.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nmt.data.shards import ShardWriter
from nmt.data.words import by_rules_alone, has_character_words, word_count
from nmt.data.words import piece_words as words_of_pieces
from nmt.errors import NmtError
from nmt.special_tokens import WORD_START

if TYPE_CHECKING:
    import torch

ALIGN_SPLIT = "train.align"
MAX_WORDS = 1 << 16  # word indices are stored as uint16: links of later words are left out
BARE_START = 2  # word_starts' flag of the piece "▁" alone


def word_starts(processor) -> np.ndarray:
    """Per vocabulary id of a sentencepiece model: 1 where the piece starts a word (▁), 0 where it
    continues one, -1 where it is no part of the text (control tokens: BOS, EOS, PAD, language
    tokens, corpus tags), BARE_START for "▁" alone (piece_words says when it is text)."""
    flags = np.zeros(processor.get_piece_size(), dtype=np.int8)
    for i in range(len(flags)):
        piece = processor.id_to_piece(i)
        if processor.is_control(i):
            flags[i] = -1
        elif piece.startswith(WORD_START):
            flags[i] = BARE_START if piece == WORD_START else 1
    return flags


def piece_words(ids: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The word index of each piece (-1 for control tokens): a piece with ▁ starts a new word, and
    the first piece of the text always does. A "▁" alone before a control token spells no word:
    it is the space in front of a language token written as text (data.language_token_as_text)."""
    flags = starts[np.asarray(ids, dtype=np.int64)]
    bare = flags == BARE_START
    flags = np.where(bare & (np.append(flags[1:], -1) < 0), -1, np.where(bare, 1, flags))
    text = flags >= 0
    begins = (flags == 1) & text
    if text.any():
        begins[np.argmax(text)] = True
    words = np.cumsum(begins) - 1
    return np.where(text, words, -1)


def parse_pharaoh(line: str, where: str) -> list[tuple[int, int]]:
    """"0-0 1-2 ..." -> [(0, 0), (1, 2), ...]; `where` ("file:line") names a malformed line."""
    links = []
    for item in line.split():
        source, dash, target = item.partition("-")
        if not (dash and source.isdigit() and target.isdigit()):
            raise NmtError(f"{where}: '{item}' is not a word link (source-target word indices, e.g. 0-1)")
        links.append((int(source), int(target)))
    return links


class PharaohFile:
    """A Pharaoh file read along its corpus: `links(line, source, target)` for line numbers in
    increasing order (the pairs prepare keeps), each link checked against the pair's words."""

    def __init__(self, path: Path):
        self.path = Path(path)
        if not self.path.is_file():
            raise NmtError(f"{self.path}: word alignments not found (data.word_alignments)")
        self._file = open(self.path, encoding="utf-8")
        self._next = 0  # the line number the file is at

    def links(self, line: int, source: str, target: str) -> list[tuple[int, int]]:
        while True:
            text = self._file.readline()
            if not text:
                raise NmtError(f"{self.path}: {self._next} lines, but the training corpus has more "
                               "(one line of word links per training pair)")
            self._next += 1
            if self._next - 1 == line:
                break
        where = f"{self.path}:{line + 1}"
        links = parse_pharaoh(text, where)
        words = (len(source.split()), len(target.split()))
        for s, t in links:
            if s >= words[0] or t >= words[1]:
                raise NmtError(f"{where}: link {s}-{t} is past the pair's words ({words[0]} source, {words[1]} target)")
        return links

    def close(self) -> None:
        self._file.close()


class PieceWords:
    """The words a sentencepiece model's pieces make, as a pair's links number them: whitespace
    words (a file's links, from an aligner of whitespace words), or with `by_rules` the words nmt
    finds without a dictionary (dice's links: nmt.data.words.by_rules_alone), where a piece may
    hold several (two Chinese characters) and a word several pieces."""

    def __init__(self, processor, by_rules: bool = False):
        self.by_rules = by_rules
        self.starts = word_starts(processor)
        self.pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
        # the pieces whose words their characters say (the rest go by ▁ alone, the quick way)
        self.by_characters = np.array([by_rules and has_character_words(p) for p in self.pieces])

    def text_words(self, text: str) -> list[str]:
        """The words of a text, as its links number them."""
        return by_rules_alone(text) if self.by_rules else text.split()

    def incidence(self, ids: np.ndarray) -> np.ndarray:
        """(len(ids), words): 1 where piece i spells part of word w; control tokens' rows 0."""
        ids = np.asarray(ids, dtype=np.int64)
        words = piece_words(ids, self.starts)
        text = np.nonzero(words >= 0)[0]
        if not self.by_characters[ids].any():
            matrix = np.zeros((len(ids), int(words.max(initial=-1)) + 1), dtype=np.float32)
            matrix[text, words[text]] = 1.0
            return matrix
        found = words_of_pieces([self.pieces[i] for i in ids[text]], dictionaries=False)
        matrix = np.zeros((len(ids), word_count(found)), dtype=np.float32)
        for i, held in zip(text, found):
            matrix[i, list(held)] = 1.0
        return matrix

    def count(self, ids: np.ndarray) -> int:
        return self.incidence(ids).shape[1]


class AlignmentWriter:
    """Writes `train.align`: each pair's links (source word, target word), flattened, with a
    pair's links dropped where its pieces do not split into its words (PieceWords, each side's)."""

    def __init__(self, target: Path, src_words: PieceWords, tgt_words: PieceWords):
        self.shard = ShardWriter(target / ALIGN_SPLIT, MAX_WORDS)
        self.words = (src_words, tgt_words)
        self.mismatched = 0  # pairs left without links

    def add(self, pairs: list[tuple[str, str]], src_ids: list[list[int]], tgt_ids: list[list[int]],
            links: list[list[tuple[int, int]]]) -> list[list[int]]:
        """Write the pairs' links; returns what was written for each (flattened)."""
        rows = []
        for (source, target), s_ids, t_ids, pair_links in zip(pairs, src_ids, tgt_ids, links):
            if (self.words[0].count(s_ids) != len(self.words[0].text_words(source))
                    or self.words[1].count(t_ids) != len(self.words[1].text_words(target))):
                self.mismatched += 1
                pair_links = []
            rows.append([x for s, t in pair_links if s < MAX_WORDS and t < MAX_WORDS for x in (s, t)])
        self.shard.add(rows)
        return rows

    def close(self) -> int:
        return self.shard.close()


def dice_links(word_pairs, pairs: list[tuple[str, str]]) -> list[list[tuple[int, int]]]:
    """Each pair's one-to-one word links from prepare's dictionary (nmt.data.word_pairs), between
    the words nmt finds without a dictionary (by_rules_alone)."""
    return [sorted(word_pairs.links(by_rules_alone(s), by_rules_alone(t)).items()) for s, t in pairs]


def pair_alignment(src_ids: np.ndarray, tgt_ids: np.ndarray, links: np.ndarray, src_words: PieceWords,
                   tgt_words: PieceWords) -> np.ndarray:
    """One pair's piece alignment (T, S) for its target pieces (T = len(tgt_ids)) and source
    pieces (S = len(src_ids)): row t links target piece t to the pieces of the source words its
    words are linked to, normalized to sum to 1 (all 0: no links). `links`: flattened word pairs;
    a link past the pair's words is left out."""
    matrix = np.zeros((len(tgt_ids), len(src_ids)), dtype=np.float32)
    if len(links) == 0:
        return matrix
    source, target = src_words.incidence(src_ids), tgt_words.incidence(tgt_ids)  # (S, source words), (T, ...)
    pairs = np.asarray(links, dtype=np.int64).reshape(-1, 2)
    pairs = pairs[(pairs[:, 0] < source.shape[1]) & (pairs[:, 1] < target.shape[1])]
    word_links = np.zeros((source.shape[1], target.shape[1]), dtype=np.float32)
    word_links[pairs[:, 0], pairs[:, 1]] = 1.0
    # (T, S): a word of target piece t linked to a word of source piece s
    matrix[:] = (target @ word_links.T @ source.T) > 0
    total = matrix.sum(axis=1, keepdims=True)
    return np.divide(matrix, total, out=np.zeros_like(matrix), where=total > 0)


def alignment_targets(src: list[np.ndarray], tgt: list[np.ndarray], links: list[np.ndarray],
                      src_words: PieceWords, tgt_words: PieceWords, shape: tuple[int, int, int],
                      places: np.ndarray | None = None) -> torch.Tensor:
    """A batch's guided-attention targets (B, T, S), for a batch of `shape` as collated (rows of
    extra padding included): row t of pair b is the distribution over source positions that the
    attention predicting its target token t (tgt_out[b, t]) is trained towards; zeros elsewhere.
    Packed rows (`places`: each pair's row, source column and target column, Batch.pair_places):
    each pair's block where its tokens lie, so that its targets are those of a row of its own."""
    import torch  # here, not above: `nmt prepare` writes the links without torch's import (200 MB)

    out = np.zeros(shape, dtype=np.float32)
    for b, (s, t, pair_links) in enumerate(zip(src, tgt, links)):
        row, s0, t0 = places[b] if places is not None else (b, 0, 0)
        out[row, t0:t0 + len(t), s0:s0 + len(s)] = pair_alignment(s, t, pair_links, src_words, tgt_words)
    return torch.from_numpy(out)


class TrainingAlignments:
    """What `nmt prepare` does for data.word_alignments on the training split: each kept pair's
    links (from the dictionary or the file) into `train.align`, and a line for the report."""

    def __init__(self, setting: str, target: Path, sp_src, sp_tgt, word_pairs=None):
        self.dice = setting == "dice"
        self.word_pairs = word_pairs  # dice: prepare's dictionary of the training corpora
        self.file = None if self.dice else PharaohFile(Path(setting))
        self.writer = AlignmentWriter(target, PieceWords(sp_src, self.dice), PieceWords(sp_tgt, self.dice))
        self.pairs = self.links = 0

    def links_of(self, lines: list[int], chunk: list[tuple[str, str]]) -> list[list[tuple[int, int]]]:
        """The links of the pairs `chunk`, corpus lines `lines` (0-based, increasing)."""
        if self.dice:
            return dice_links(self.word_pairs, chunk)
        return [self.file.links(line, s, t) for line, (s, t) in zip(lines, chunk)]

    def add(self, chunk: list[tuple[str, str]], src_ids: list[list[int]], tgt_ids: list[list[int]],
            links: list[list[tuple[int, int]]]) -> None:
        rows = self.writer.add(chunk, src_ids, tgt_ids, links)
        self.pairs += sum(bool(row) for row in rows)
        self.links += sum(len(row) // 2 for row in rows)

    def close(self) -> dict:
        kept = self.writer.close()
        if self.file:
            self.file.close()
        return {"source": "dice" if self.dice else str(self.file.path), "pairs": kept,
                "pairs_with_links": self.pairs, "links": self.links,
                "pairs_whose_pieces_split_otherwise": self.writer.mismatched}
