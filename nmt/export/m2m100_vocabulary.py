"""The vocabulary of a transformers `M2M100ForConditionalGeneration` directory (NLLB-200 and
M2M-100 share the architecture) or an mBART-50 one (`MBartForConditionalGeneration` with an
MBart50Tokenizer: the same layout, codes such as `de_DE`), read for `nmt import`.

Both tokenize with a sentencepiece model (`sentencepiece.bpe.model`) whose pieces sit at other ids
in the model: NLLB adds fairseq's offset of 1 (`<s>` 0, `<pad>` 1, `</s>` 2, `<unk>` 3, then the
pieces), M2M-100 looks them up in vocab.json. Language codes (`eng_Latn`, or `en` written
`__en__`) are tokens after the pieces. The model's own tokenizer (`AutoTokenizer`) says each
piece's and each code's id, so either layout reads alike; every row of the model gets a piece, so
nmt's output layer keeps every row the model has:

    each sentencepiece piece        its id in the model
    each language code              nmt's language token <2code> (a control token), at the code's id
    the tokenizer's other tokens    (<mask>, madeupword0, ...) kept under their names
    `<s>`, `<pad>`, `<unk>`, `</s>`  nmt's BOS, PAD, UNK and EOS (the model starts its decoder from
                                    `</s>`: model.decoder_start eos; it never reads `<s>`)
    any row left                    `<unused:N>`
"""

from __future__ import annotations

from pathlib import Path

from nmt.config import language_token
from nmt.errors import NmtError

SPM_FILE = "sentencepiece.bpe.model"


def language_codes(tokenizer) -> dict[str, str]:
    """{code: the tokenizer's token for it}: M2M-100's `en` -> `__en__`, NLLB's `eng_Latn` -> itself."""
    if hasattr(tokenizer, "lang_code_to_id") and hasattr(tokenizer, "get_lang_token"):  # M2M100Tokenizer
        return {code: tokenizer.get_lang_token(code) for code in tokenizer.lang_code_to_id}
    extra = getattr(tokenizer, "extra_special_tokens", None) or getattr(tokenizer, "additional_special_tokens", None)
    codes = [str(token) for token in (extra or []) if not str(token).startswith("<")]  # not <s>, <mask>, ...
    return {code: code for code in codes if tokenizer.convert_tokens_to_ids(code) != tokenizer.unk_token_id}


def m2m100_vocabulary(transformers, directory: Path, vocab_size: int,
                      model_type: str = "m2m_100") -> tuple[dict[str, int], dict[str, str]]:
    """({piece: the model's id} covering every row, {code: the tokenizer's token}), from the directory's
    tokenizer; a one-line error where a piece would read otherwise than the model's tokenizer reads it."""
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    spm_path = directory / SPM_FILE
    if not spm_path.is_file():
        raise NmtError(f"{spm_path}: missing (NLLB-200 and M2M-100 directories carry their sentencepiece model; "
                       "nmt's tokenizer is sentencepiece)")
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    except (OSError, ValueError, TypeError) as e:
        raise NmtError(f"{directory}: transformers cannot load the tokenizer ({str(e).strip().splitlines()[0]})") from None
    if model_type == "mbart" and not type(tokenizer).__name__.startswith("MBart50"):
        raise NmtError(f"{directory}: an mBART model with a {type(tokenizer).__name__}; nmt imports mBART-50's layout "
                       "(MBart50Tokenizer: the source's language code first), not mBART-cc25's (the code after it)")
    proto = model_pb2.ModelProto()
    proto.ParseFromString(spm_path.read_bytes())
    kinds = model_pb2.ModelProto.SentencePiece
    unk = tokenizer.unk_token_id
    vocab: dict[str, int] = {}
    for piece in (p.piece for p in proto.pieces if p.type in (kinds.NORMAL, kinds.USER_DEFINED, kinds.BYTE)):
        token_id = tokenizer.convert_tokens_to_ids(piece)
        if token_id == unk:
            raise NmtError(f"{directory}: the tokenizer reads the piece {piece!r} of {SPM_FILE} as <unk>; "
                           "nmt's vocabulary is the sentencepiece model's")
        vocab[piece] = token_id
    specials = {"<pad>": tokenizer.pad_token_id, "<unk>": unk, "</s>": tokenizer.eos_token_id,
                "<s>": tokenizer.bos_token_id}
    vocab |= {piece: token_id for piece, token_id in specials.items() if token_id is not None}
    codes = language_codes(tokenizer)
    if not codes:
        raise NmtError(f"{directory}: the tokenizer has no language codes (NLLB's eng_Latn, M2M-100's __en__)")
    for code, token in codes.items():
        vocab[language_token(code)] = tokenizer.convert_tokens_to_ids(token)
    return with_every_row(vocab, tokenizer, vocab_size, directory), codes


def with_every_row(vocab: dict[str, int], tokenizer, vocab_size: int, directory: Path,
                   rowless_added: bool = False) -> dict[str, int]:
    """`vocab` with the tokenizer's other added tokens under their names and every row no token has
    as `<unused:N>`, so that nmt's output layer keeps every row the model has. `rowless_added`:
    added tokens past the model's rows are left out (a T5 tokenizer's `<extra_id_N>` may be)."""
    taken = set(vocab.values())
    for token, token_id in tokenizer.get_added_vocab().items():
        if rowless_added and token_id >= vocab_size:
            continue
        if token_id not in taken and token not in vocab:
            vocab[token] = token_id
            taken.add(token_id)
    beyond = [token_id for token_id in taken if token_id >= vocab_size]
    if beyond:
        raise NmtError(f"{directory}: the tokenizer has ids up to {max(beyond)}, the model {vocab_size} rows")
    return vocab | {f"<unused:{row}>": row for row in range(vocab_size) if row not in taken}


def default_direction(directory: Path, codes: list[str], src_lang: str | None, tgt_lang: str | None,
                      tokenizer_config: dict) -> tuple[str, str]:
    """The direction the checkpoint translates unless told otherwise: --src-lang/--tgt-lang, else
    the tokenizer's src_lang/tgt_lang (as codes); each must be one of the model's languages."""
    def code(name: str, given: str | None) -> str:
        value = given or tokenizer_config.get(name)
        if isinstance(value, str) and value.startswith("__") and value.endswith("__"):
            value = value[2:-2]
        if not value:
            raise NmtError(f"{directory}/tokenizer_config.json names no {name}: give --{name.replace('_', '-')}")
        if value not in codes:
            close = [c for c in codes if c.split("_")[0] == value.split("_")[0]][:3]
            raise NmtError(f"--{name.replace('_', '-')} {value}: not a language of {directory} "
                           f"({len(codes)} codes, e.g. {', '.join(close or codes[:3])})")
        return value

    return code("src_lang", src_lang), code("tgt_lang", tgt_lang)


# --- what an export back to transformers needs, carried in the checkpoint -----------------------

TOKENIZER_FILES = ("sentencepiece.bpe.model", "vocab.json", "tokenizer.json", "tokenizer_config.json",
                   "special_tokens_map.json", "added_tokens.json", "config.json")


def pack_original(directory: Path, index: list[int], codes: dict[str, str]) -> bytes:
    """The directory's tokenizer files and config, and nmt's id -> the model's id, as one zip:
    what `nmt export --format huggingface` writes back (nmt.export.m2m100_export)."""
    import io
    import json
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in TOKENIZER_FILES:
            if (directory / name).is_file():
                archive.write(directory / name, name)
        archive.writestr("nmt_index.json", json.dumps({"index": index, "codes": codes}))
    return buffer.getvalue()


def unpack_original(packed: bytes) -> tuple[dict[str, bytes], list[int], dict[str, str]]:
    """(the files by name, nmt's id -> the model's id, {code: the tokenizer's token}) of `pack_original`."""
    import io
    import json
    import zipfile

    with zipfile.ZipFile(io.BytesIO(packed)) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    meta = json.loads(files.pop("nmt_index.json"))
    return files, meta["index"], meta["codes"]
