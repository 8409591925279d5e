"""Directions of a multilingual model: its language tokens (in front of a source sentence, or
forced first in the output), and which directions a model was trained on (its recipe's corpora)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from nmt.config import DataConfig, language_token
from nmt.errors import NmtError
from nmt.special_tokens import WORD_START


@dataclass(frozen=True)
class Controls:
    """The token ids a direction adds: `source` before each source sentence (a language token,
    a corpus tag), `target` forced first in each output (a decoder-side language token, taken
    off again before the output is shown; its probability is not counted)."""

    source: tuple[int, ...] = ()
    target: tuple[int, ...] = ()
    languages: tuple[str, str] | None = None  # the direction's (source, target), where one was chosen


def _ids(processor, tokens: list[str]) -> list[int]:
    ids = [processor.piece_to_id(token) for token in tokens]
    for token, token_id in zip(tokens, ids):
        if processor.id_to_piece(token_id) != token:
            raise NmtError(f"the tokenizer has no {token} token (train it again with this recipe: `nmt tokenizer`)")
    return ids


def source_control_tokens(data: DataConfig, tgt_lang: str | None = None, src_lang: str | None = None) -> list[str]:
    """The language token put in front of a source sentence: the target's (data.language_token:
    source) or the source's (both); none otherwise. Written as text (data.language_token_as_text),
    the token comes after the word boundary "▁" that sentencepiece puts in front of a text."""
    tokens = {"source": [language_token(tgt_lang or data.tgt_lang)],
              "both": [language_token(src_lang or data.src_lang)]}.get(data.language_token, [])
    return [WORD_START, *tokens] if tokens and data.language_token_as_text else tokens


def target_control_tokens(data: DataConfig, tgt_lang: str | None = None) -> list[str]:
    """The language token forced first in the output: the target's with data.language_token:
    target or both; none otherwise."""
    return [language_token(tgt_lang or data.tgt_lang)] * data.forced_target_tokens


def control_ids(processor, data: DataConfig, tgt_lang: str | None = None, tag: str | None = None,
                src_lang: str | None = None) -> list[int]:
    """Token ids put in front of a source sentence: its language token (source_control_tokens),
    then the corpus tag, if any."""
    return _ids(processor, source_control_tokens(data, tgt_lang, src_lang) + ([tag] if tag else []))


def target_control_ids(processor, data: DataConfig, tgt_lang: str | None = None) -> list[int]:
    """Token ids forced first in the output (target_control_tokens)."""
    return _ids(processor, target_control_tokens(data, tgt_lang))


def direction_controls(src_processor, tgt_processor, data: DataConfig, src_lang: str | None,
                       tgt_lang: str | None, zero_shot: bool) -> tuple[str, Controls]:
    """("src-tgt", its Controls) of a direction `check_direction` allows."""
    src, tgt = check_direction(data, src_lang, tgt_lang, zero_shot)
    return f"{src}-{tgt}", Controls(tuple(control_ids(src_processor, data, tgt, src_lang=src)),
                                    tuple(target_control_ids(tgt_processor, data, tgt)), (src, tgt))


def language_usage(data: DataConfig, token=language_token) -> list[str]:
    """How to ask an exported model for a language, as Markdown lines (none without language tokens);
    `token(lang)`: how the export spells a language's token."""
    src, tgt = token(data.src_lang), token(data.tgt_lang)
    usage = {"source": f"Put the target's language token in front of each source text: `{tgt} ...`.",
             "target": f"The target's language token is forced first in each output: generate(..., "
                       f"forced_bos_token_id=tokenizer.convert_tokens_to_ids(\"{tgt}\")) (the default is {tgt}).",
             "both": f"Put the source's language token in front of each source text (`{src} ...`) and force the "
                     f"target's first: generate(..., forced_bos_token_id=tokenizer.convert_tokens_to_ids(\"{tgt}\")) "
                     f"(the default is {tgt})."}.get(data.language_token)
    return [usage, ""] if usage else []


def listed_sources(data: DataConfig) -> list[str]:
    """The languages an imported model translates from into each of data.languages: each of them
    (M2M-100, MADLAD-400: the recipe's source language is one), or the recipe's source language
    alone (a multilingual OPUS-MT model, whose codes name its targets)."""
    return data.languages if data.src_lang in data.languages else [data.src_lang]


def check_direction(data: DataConfig, src_lang: str | None, tgt_lang: str | None, zero_shot: bool) -> tuple[str, str]:
    """The (source, target) to translate; a target the model has no token for is an error, and so
    is a direction it was not trained on, unless `zero_shot`."""
    src, tgt = src_lang or data.src_lang, tgt_lang or data.tgt_lang
    directions = data.directions()
    if (src, tgt) in directions or (src in listed_sources(data) and tgt in data.languages):
        return src, tgt
    if data.language_token == "both" and src not in data.source_languages():
        raise NmtError(f"--src-lang {src}: {_same_language(src, data.source_languages())}the model reads "
                       f"{listed(data.source_languages())} only")
    if tgt not in data.target_languages():
        raise NmtError(f"--tgt-lang {tgt}: {_same_language(tgt, data.target_languages())}the model translates into "
                       f"{listed(data.target_languages())} only")
    if data.language_token == "none" and tgt != data.tgt_lang:
        raise NmtError(f"--tgt-lang {tgt}: the model has no language tokens; it translates into {data.tgt_lang}")
    if not zero_shot:
        trained = ", ".join(f"{s}-{t}" for s, t in directions)
        raise NmtError(f"{src}-{tgt}: not a direction the model was trained on ({trained}); "
                       "add --zero-shot to translate it anyway")
    return src, tgt


def same_language(code: str, codes) -> list[str]:
    """The codes among `codes` that name `code`'s language (deu_Latn for de, en for eng)."""
    return sorted(c for c in codes if two_letter(c) is not None and two_letter(c) == two_letter(code))


def _same_language(code: str, codes: list[str]) -> str:
    """'did you mean deu_Latn? ' where the model names `code`'s language by other codes, else ''."""
    same = same_language(code, codes)
    return f"did you mean {' or '.join(same)}? " if same else ""


def listed(items: list[str], separator: str = ", ", most: int = 12) -> str:
    """Languages or tokens for one line of a message: an imported model has up to 202."""
    return separator.join(items[:most]) + (f"{separator}... ({len(items)} in all)" if len(items) > most else "")


# English names of languages, for what clients show (LibreTranslate's /languages, Argos packages).
LANGUAGE_NAMES = {"ar": "Arabic", "bg": "Bulgarian", "bn": "Bengali", "ca": "Catalan", "cs": "Czech", "da": "Danish",
         "de": "German", "el": "Greek", "en": "English", "es": "Spanish", "et": "Estonian", "eu": "Basque",
         "fa": "Persian", "fi": "Finnish", "fr": "French", "ga": "Irish", "gl": "Galician", "he": "Hebrew",
         "hi": "Hindi", "hr": "Croatian", "hu": "Hungarian", "id": "Indonesian", "it": "Italian", "ja": "Japanese",
         "ko": "Korean", "lt": "Lithuanian", "lv": "Latvian", "ms": "Malay", "nb": "Norwegian", "nl": "Dutch",
         "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sk": "Slovak", "sl": "Slovenian",
         "sq": "Albanian", "sv": "Swedish", "th": "Thai", "tr": "Turkish", "uk": "Ukrainian", "ur": "Urdu",
         "vi": "Vietnamese", "zh": "Chinese"}


# The same languages' three-letter codes (ISO 639-3, and NLLB-200's where it names a macrolanguage's
# member: pes Persian, lvs Latvian, zsm Malay, als Albanian), as OPUS-MT and NLLB-200 write them.
THREE_LETTER = {"ara": "ar", "bul": "bg", "ben": "bn", "cat": "ca", "ces": "cs", "dan": "da", "deu": "de", "ell": "el",
                "eng": "en", "spa": "es", "est": "et", "eus": "eu", "fas": "fa", "pes": "fa", "fin": "fi", "fra": "fr",
                "gle": "ga", "glg": "gl", "heb": "he", "hin": "hi", "hrv": "hr", "hun": "hu", "ind": "id", "ita": "it",
                "jpn": "ja", "kor": "ko", "lit": "lt", "lav": "lv", "lvs": "lv", "msa": "ms", "zsm": "ms", "nob": "nb",
                "nld": "nl", "pol": "pl", "por": "pt", "ron": "ro", "rus": "ru", "slk": "sk", "slv": "sl", "sqi": "sq",
                "als": "sq", "swe": "sv", "tha": "th", "tur": "tr", "ukr": "uk", "urd": "ur", "vie": "vi", "zho": "zh"}


# Languages written in two scripts or more (their ISO 639-1 codes, by NLLB-200's codes)
_SEVERAL_SCRIPTS = {"zho": "zh", "srp": "sr", "bos": "bs", "pan": "pa", "azj": "az", "uzn": "uz", "kas": "ks",
                    "snd": "sd", "khk": "mn"}


def two_letter(code: str) -> str | None:
    """A code's ISO 639-1 language (de for de, deu, deu_Latn, de_AT, de-AT), where the tables know it."""
    base = code.replace("-", "_").split("_")[0]
    return base if len(base) == 2 else THREE_LETTER.get(base)


def language_tag(code: str) -> str:
    """A language code as HTML's lang attribute writes it (BCP 47): de for de, deu or deu_Latn,
    de-AT for de_AT, zh-Hant for zho_Hant (a script kept where the language has several in use)."""
    parts = code.replace("-", "_").split("_")
    tag = two_letter(code) or _SEVERAL_SCRIPTS.get(parts[0]) or parts[0]
    rest = parts[1] if len(parts) > 1 else ""
    if len(rest) == 2 and rest.isalpha() or (len(rest) == 4 and tag in _SEVERAL_SCRIPTS.values()):
        tag += f"-{rest}"
    return tag


def language_match(wanted: str, found: str) -> int:
    """How well a language code found in a file (a TMX variant's, a TBX entry's) answers a wanted
    one (a recipe's): 2 for the same code (in any case, with `_` or `-`, or as BCP 47 writes it:
    `en` for NLLB-200's `eng_Latn`), 1 for the same language where the wanted code names no region
    (`en` takes `en-GB`; `pt-BR` takes that region only), 0 for another language."""
    def normal(code: str) -> str:
        return code.strip().lower().replace("_", "-")

    found, tag = normal(found), normal(language_tag(wanted))
    if found in (normal(wanted), tag):
        return 2
    return int("-" not in tag and found.split("-")[0] == tag)


# a language code as a table's first row may write one: en, eng, en_US, pt-BR, zh_Hans
LANGUAGE_CODE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*")


def code_match(wanted: str, found: str) -> int:
    """language_match, with a found code of ISO 639-3 (`eng`, `deu`) read as BCP 47 writes it too."""
    return max(language_match(wanted, found), language_match(wanted, language_tag(found)))


def language_name(code: str) -> str:
    """A language's English name (for `de`, `deu`, or NLLB-200's `deu_Latn`), or its code where the
    table has none."""
    return LANGUAGE_NAMES.get(code) or LANGUAGE_NAMES.get(two_letter(code) or "", code)
