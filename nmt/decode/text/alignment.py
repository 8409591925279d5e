"""Word alignments of translations, from the model's encoder-decoder attention.

Each output word is aligned to the source word it attends to most, and each source word that no
output word chose to the output word that attends to it most (so every word of both sides has a
link: what tags and verbatim spans need to find their place, nmt.decode.text.markup). The attention
is the encoder-decoder attention probabilities under teacher forcing of the output: of a model
trained with guided alignment, its alignment heads' (train.guided_alignment, averaged over them;
what a CTranslate2 export returns too); of any other, averaged over heads and over all decoder
layers. Which single layer aligns best differs between models (Garg et al. 2019 found the
penultimate one of their 6; on the 4-layer demo model it is the second and the penultimate is far
worse); the mean of all is as good as the best one there, and needs no choice (docs/decoding.md,
`make bench-alignment`).
Pieces are grouped into the words of the text they spell (nmt.data.words: between
spaces, each Chinese or Japanese character, Thai and Lao words): a word's attention is its pieces' attention
summed over the source word's pieces and averaged over the output word's (a piece of two such
characters counts in both). The source EOS takes no alignment (its attention is left out and the
rest renormalized).
Pharaoh format: "source-target" word indices from 0, in target order.
"""

from __future__ import annotations

import torch

from nmt.data.words import piece_words, word_count
from nmt.special_tokens import EOS, PAD


def pharaoh(attention: torch.Tensor, src_words: list[tuple[int, ...]], tgt_words: list[tuple[int, ...]],
            cover: bool = True) -> str:
    """attention (T, S) over pieces, rows summing to 1, and each piece's words (piece_words) ->
    "s-t s-t ..." over words, in output order: each output word's source word, and (`cover`) each
    source word without one its output word."""
    if not src_words or not tgt_words or not word_count(src_words) or not word_count(tgt_words):
        return ""
    src_map = torch.zeros(len(src_words), word_count(src_words))
    src_map[_piece_word_pairs(src_words)] = 1.0
    tgt_map = torch.zeros(word_count(tgt_words), len(tgt_words))
    tgt_map[_piece_word_pairs(tgt_words)[::-1]] = 1.0
    tgt_map = tgt_map / tgt_map.sum(dim=1, keepdim=True).clamp_min(1.0)
    words = tgt_map @ attention @ src_map  # (target words, source words)
    links = {(s, t) for t, s in enumerate(words.argmax(dim=1).tolist())}
    if cover:
        linked = {s for s, _ in links}
        links |= {(s, t) for s, t in enumerate(words.argmax(dim=0).tolist()) if s not in linked}
    return " ".join(f"{s}-{t}" for s, t in sorted(links, key=lambda link: (link[1], link[0])))


def _piece_word_pairs(words: list[tuple[int, ...]]) -> tuple[list[int], list[int]]:
    """(pieces, words): each piece's index beside each word it holds, for one indexed assignment."""
    pairs = [(piece, word) for piece, held in enumerate(words) for word in held]
    return [piece for piece, _ in pairs], [word for _, word in pairs]


@torch.inference_mode()
def layer_attention(model, sources: list[list[int]], outputs: list[list[int]], heads: int | None = None
                    ) -> list[torch.Tensor]:
    """Each decoder layer's encoder-decoder attention over the (source, output) token-id pairs
    under teacher forcing, averaged over heads (its first `heads`, if given): (B, T, S) each, fp32
    on the CPU. `model`: a Transformer (an ensemble answers with its first member)."""
    model = model.aligner
    device = next(model.parameters()).device
    width_s, width_t = max(len(s) for s in sources) + 1, max(len(o) for o in outputs) + 1
    src = torch.full((len(sources), width_s), PAD, dtype=torch.long)
    tgt_in = torch.full((len(outputs), width_t), PAD, dtype=torch.long)
    for i, (s, o) in enumerate(zip(sources, outputs)):
        src[i, : len(s) + 1] = torch.tensor(s + [EOS])
        tgt_in[i, : len(o) + 1] = torch.tensor([model.start_token] + o)
    return [w[:, :heads].float().mean(dim=1).cpu() for w in model.cross_attention(src.to(device), tgt_in.to(device))]


def model_attention(model, sources: list[list[int]], outputs: list[list[int]]) -> torch.Tensor:
    """The attention (B, T, S) a model's alignments are read from: its alignment heads' where it
    was trained with guided alignment, else the mean of every layer's heads."""
    guided = model.aligner.alignment_heads
    if guided:
        layer, heads = guided
        return layer_attention(model, sources, outputs, heads)[layer]
    layers = layer_attention(model, sources, outputs)
    return sum(layers) / len(layers)


def pair_rows(attention: torch.Tensor, source_length: int, output_length: int, control_ids: int = 0,
              given: int = 0) -> torch.Tensor:
    """One pair's attention (T, S) cut to its tokens, rows renormalized: row t predicts output
    token t; the source EOS (column `source_length`), padding, the first `control_ids` source
    tokens and the rows of the first `given` output tokens (forced control tokens) are left out."""
    rows = attention[given:output_length, control_ids:source_length]
    return rows / rows.sum(dim=1, keepdim=True).clamp_min(1e-12)


def align_batch(attention: torch.Tensor, sources: list[list[int]], outputs: list[list[int]],
                src_pieces: list[list[str]], tgt_pieces: list[list[str]], control_ids: int = 0,
                given: list[int] | None = None) -> list[str]:
    """Source and output token ids (and their pieces) -> one Pharaoh line per pair, from their
    attention (B, T, S) under teacher forcing (`model_attention`, or a CTranslate2 export's): row t
    predicts output token t; column len(source) is the source EOS. The first `control_ids` source
    tokens (a language token, a tag) and the first given[i] output tokens of pair i (a
    decoder-side language token) are not words of the sentence: left out."""
    given = given or [0] * len(sources)
    return [pharaoh(pair_rows(attention[i], len(s), len(o), control_ids, given[i]),
                    piece_words(src_pieces[i][control_ids:]), piece_words(tgt_pieces[i][given[i]:]))
            for i, (s, o) in enumerate(zip(sources, outputs))]
