"""New languages and pieces for an imported model's vocabulary: `nmt import --add-languages
xx_Latn,yy_Cyrl=zz_Cyrl --add-pieces FILE`.

Every new token goes at the end of the vocabulary, so each old token keeps its id, its
embedding row and its output row; the sentencepiece model gets the new pieces after its own:

    a language code       its language token <2code>, a control piece (never produced from text)
    a piece from FILE     a normal piece, scored below every piece of a BPE model (its merges come
                          after every old one) or at the lowest score of a unigram model

New rows, in the embedding and (when it is not tied) the output layer, start from a rule that
never lets a new piece score as high as the best old token (a mean of distinct rows stays below
the highest of them), so greedy and beam outputs of the old directions stay as they were:

    code=related          the related language's row (`ukr_Cyrl=rus_Cyrl`)
    code                  the mean of every language token's row
    piece                 the mean of the rows of the pieces the old tokenizer splits its text into
                          (unknown characters aside), else the mean of every normal piece's row;
                          where those are one piece (`ště` read as `t`), halfway between its row
                          and that mean, as a copy of its row would tie with it

A BPE model reaches a piece only by merging two pieces it has, so a long piece whose prefixes the
model lacks is never produced: the summary names such pieces (single characters always are).
"""

from __future__ import annotations

import re
from pathlib import Path

import torch

from nmt.config import Recipe, language_token, recipe_from_dict, recipe_to_dict
from nmt.data.tokenizer import load_processor
from nmt.errors import NmtError
from nmt.model.from_weights import transformer_from_weights
from nmt.model.transformer import Transformer
from nmt.special_tokens import UNK

CODE = re.compile(r"[A-Za-z0-9_-]+")


def parse_added_languages(text: str) -> list[tuple[str, str | None]]:
    """`xx_Latn,yy_Cyrl=zz_Cyrl` -> [("xx_Latn", None), ("yy_Cyrl", "zz_Cyrl")]; one-line errors."""
    added = []
    for item in (part.strip() for part in text.split(",")):
        code, _, related = item.partition("=")
        for name in (code, related) if related else (code,):
            if not CODE.fullmatch(name):
                raise NmtError(f"--add-languages: {item!r} is not a language code (letters, digits, _ and -), "
                               "or CODE=RELATED_CODE")
        added.append((code, related or None))
    codes = [code for code, _ in added]
    if len(set(codes)) != len(codes):
        raise NmtError(f"--add-languages: {', '.join(sorted({c for c in codes if codes.count(c) > 1}))} given twice")
    return added


def read_added_pieces(path: Path) -> list[str]:
    """One piece a line (UTF-8; a word-initial piece starts with ▁, as sentencepiece writes it);
    blank lines skipped; a one-line error naming the file and line otherwise."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NmtError(f"{path}: not found") from None
    except UnicodeDecodeError as e:
        raise NmtError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None
    pieces, line_of = [], {}
    for number, line in enumerate(text.splitlines(), 1):
        piece = line.strip()
        if not piece:
            continue
        if any(ch.isspace() for ch in piece):
            raise NmtError(f"{path}:{number}: {piece!r} holds a space; write one piece a line, a word's start as ▁")
        if piece.startswith("<") and piece.endswith(">"):
            raise NmtError(f"{path}:{number}: {piece!r} looks like a control token; add languages with --add-languages")
        if piece in line_of:
            raise NmtError(f"{path}:{number}: {piece!r} again (first on line {line_of[piece]})")
        line_of[piece] = number
        pieces.append(piece)
    if not pieces:
        raise NmtError(f"{path}: no pieces (one a line)")
    return pieces


def check_extension(proto: bytes, model_languages: list[str], languages: list[tuple[str, str | None]],
                    pieces: list[str], source: str = "--add-pieces") -> None:
    """A one-line error for a language the model has, a related language it lacks, or a piece it has:
    before the model is read."""
    old = load_processor(model_proto=proto)
    have = {old.id_to_piece(i): i for i in range(old.get_piece_size())}
    if languages and not model_languages:
        raise NmtError("--add-languages: this model has no language tokens (a model of one direction)")
    for code, related in languages:
        if code in model_languages or language_token(code) in have:
            raise NmtError(f"--add-languages: {code} is already a language of the model")
        if related and related not in model_languages:
            raise NmtError(f"--add-languages: {code}={related}: {related} is not a language of the model "
                           f"(e.g. {', '.join(model_languages[:3])})")
    for piece in pieces:
        if piece in have:
            raise NmtError(f"{source}: {piece!r} is already a piece of the model (id {have[piece]})")


def extend_vocabulary(proto: bytes, model: Transformer, recipe: Recipe, languages: list[tuple[str, str | None]],
                      pieces: list[str]) -> tuple[bytes, Transformer, Recipe, dict]:
    """(the extended sentencepiece model, the model with its new rows, the recipe with the new
    languages and vocabulary size, a summary) for a checkpoint of one joint vocabulary `proto`;
    the requests as `check_extension` passed them."""
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    old = load_processor(model_proto=proto)
    have = {old.id_to_piece(i): i for i in range(old.get_piece_size())}
    spec = model_pb2.ModelProto()
    spec.ParseFromString(proto)
    kinds = model_pb2.ModelProto.SentencePiece
    normal_scores = [p.score for p in spec.pieces if p.type == kinds.NORMAL]
    bpe = spec.trainer_spec.model_type == model_pb2.TrainerSpec.BPE
    lowest = min(normal_scores, default=0.0)
    for code, _ in languages:
        spec.pieces.add(piece=language_token(code), score=0.0, type=kinds.CONTROL)
    for i, piece in enumerate(pieces):
        spec.pieces.add(piece=piece, score=lowest - 1.0 - i if bpe else lowest, type=kinds.NORMAL)
    spec.trainer_spec.vocab_size = len(spec.pieces)
    extended = spec.SerializeToString()

    rows = _new_rows(old, have, languages, pieces)
    grown = recipe_to_dict(recipe)
    grown["data"]["languages"] = [*recipe.data.languages, *(code for code, _ in languages)]
    grown["tokenizer"]["vocab_size"] = len(spec.pieces)
    grown_recipe = recipe_from_dict(grown, "the extended recipe")
    state = model.state_dict()  # the other weights are shared with the model given, not copied
    grown_tables: dict[int, torch.Tensor] = {}  # by the table's storage: a table shared by both sides grows once
    for name in ("src_embed.tokens.weight", "tgt_embed.tokens.weight", "output_proj.weight"):
        if name in state:
            table = state[name]
            if table.data_ptr() not in grown_tables:
                grown_tables[table.data_ptr()] = _grown(table, rows)
            state[name] = grown_tables[table.data_ptr()]
    grown_model = transformer_from_weights(grown_recipe.model, len(spec.pieces), len(spec.pieces), state)

    new = load_processor(model_proto=extended)
    unreached = [p for p in pieces if new.piece_to_id(p) not in new.encode(p.replace("▁", " ").strip())]
    summary = {"languages": [code for code, _ in languages], "pieces": len(pieces),
               "vocab": {"before": old.get_piece_size(), "after": len(spec.pieces)}, "unreached_pieces": unreached}
    return extended, grown_model.eval(), grown_recipe, summary


def _grown(table: torch.Tensor, rows: list[list[list[int]]]) -> torch.Tensor:
    """`table` with a row for each new token after its own: the mean of its groups' means
    (`_new_rows`). Each distinct group's mean is taken once: every normal piece's, which many new
    rows share, is a pass over the whole table (256k rows in NLLB's)."""
    means: dict[tuple[int, ...], torch.Tensor] = {}
    for groups in rows:
        for ids in groups:
            if tuple(ids) not in means:
                means[tuple(ids)] = table[ids].mean(0)
    grown = [torch.stack([means[tuple(ids)] for ids in groups]).mean(0) for groups in rows]
    return torch.cat([table, torch.stack(grown)])


def _new_rows(old, have: dict[str, int], languages: list[tuple[str, str | None]],
              pieces: list[str]) -> list[list[list[int]]]:
    """For each new token, in order, groups of old rows: it starts from the mean of the groups'
    means (the module's rule)."""
    language_rows = [i for piece, i in have.items() if piece.startswith("<2") and piece.endswith(">")]
    normal_rows = [i for i in range(old.get_piece_size()) if not (old.is_control(i) or old.is_unknown(i)
                                                                   or old.is_unused(i))]
    rows = []
    for code, related in languages:
        rows.append([[have[language_token(related)]] if related else language_rows or normal_rows])
    for piece in pieces:
        ids = [i for i in old.encode(piece.replace("▁", " ").strip()) if i != UNK]
        if not piece.startswith("▁") and ids and old.id_to_piece(ids[0]) == "▁":
            ids = ids[1:]  # the word start the encoder adds, which a word-inner piece does not carry
        if len(set(ids)) == 1:
            # A copy of one piece's row would tie with that piece wherever it is the best next token,
            # and a search could then take the new piece: halfway to the mean of every normal piece
            # scores strictly below it there.
            rows.append([ids, normal_rows])
        else:
            rows.append([ids or normal_rows])
    return rows
