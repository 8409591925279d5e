"""Directions of a multilingual model: the tokens in front of a source sentence, and which
directions a model was trained on (its recipe's corpora)."""

from __future__ import annotations

from nmt.config import DataConfig, language_token
from nmt.errors import NmtError


def target_languages(data: DataConfig) -> list[str]:
    return sorted({tgt for _, tgt in data.directions()})


def control_ids(processor, data: DataConfig, tgt_lang: str | None = None, tag: str | None = None) -> list[int]:
    """Token ids put in front of a source sentence: the target-language token (with
    data.language_token: source), then the corpus tag, if any."""
    tokens = [language_token(tgt_lang or data.tgt_lang)] if data.language_token == "source" else []
    tokens += [tag] if tag else []
    ids = [processor.piece_to_id(token) for token in tokens]
    for token, token_id in zip(tokens, ids):
        if processor.id_to_piece(token_id) != token:
            raise NmtError(f"the tokenizer has no {token} token (train it again with this recipe: `nmt tokenizer`)")
    return ids


def direction_control_ids(processor, data: DataConfig, src_lang: str | None, tgt_lang: str | None,
                     zero_shot: bool) -> tuple[str, list[int]]:
    """("src-tgt", the token ids before each source) of a direction `check_direction` allows."""
    src, tgt = check_direction(data, src_lang, tgt_lang, zero_shot)
    return f"{src}-{tgt}", control_ids(processor, data, tgt)


def check_direction(data: DataConfig, src_lang: str | None, tgt_lang: str | None, zero_shot: bool) -> tuple[str, str]:
    """The (source, target) to translate; a target the model has no token for is an error, and so
    is a direction it was not trained on, unless `zero_shot`."""
    src, tgt = src_lang or data.src_lang, tgt_lang or data.tgt_lang
    directions = data.directions()
    if (src, tgt) in directions:
        return src, tgt
    if tgt not in target_languages(data):
        raise NmtError(f"--tgt-lang {tgt}: the model translates into {', '.join(target_languages(data))} only")
    if data.language_token != "source" and tgt != data.tgt_lang:
        raise NmtError(f"--tgt-lang {tgt}: the model has no language tokens; it translates into {data.tgt_lang}")
    if not zero_shot:
        trained = ", ".join(f"{s}-{t}" for s, t in directions)
        raise NmtError(f"{src}-{tgt}: not a direction the model was trained on ({trained}); "
                       "add --zero-shot to translate it anyway")
    return src, tgt
