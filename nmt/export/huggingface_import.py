"""A Hugging Face `transformers` Marian (OPUS-MT), Pegasus, M2M-100 (NLLB-200, M2M-100), mBART-50
or T5 (MADLAD-400) directory as an nmt checkpoint: `nmt import`.

The inverse of `nmt.export.huggingface`: MarianMTModel's layers are nmt's post-LN layers, Pegasus's
its pre-LN ones, and the d_model dimensions are permuted back from sines-then-cosines to nmt's
interleaved layout (see that module), so the imported model computes what the directory's does.

The vocabulary needs the most care. nmt's token ids are sentencepiece ids, with PAD, UNK, BOS, EOS
at 0..3; Marian's are vocab.json's, with its own specials (`</s>` 0, `<unk>` 1, `<pad>` last in
OPUS-MT models) and no BOS (the decoder starts from `decoder_start_token_id`, usually the pad
token). So each side gets a new sentencepiece model: the original one's pieces, scores and
normalization, reordered so that a piece's id is its row in the imported embedding:

    0 <pad>  1 <unk>  2 <s> (Marian's decoder start row)  3 </s>  4.. vocab.json's other entries in order

Entries of vocab.json that the side's sentencepiece model lacks (the other language's pieces, in
a shared vocabulary) stay in the model as UNUSED pieces: never produced by encoding, decoded as
text, so the output layer keeps every row Marian's has. Pieces that the sentencepiece model has
but vocab.json lacks would be `<unk>` to Marian but not to nmt: refused with a one-line error, as
are features nmt lacks (unscaled embeddings, an output bias, per-stack head or feed-forward sizes).

An M2M100ForConditionalGeneration (NLLB-200, M2M-100) is a pre-LN model with fairseq's
sinusoid (model.positions: fairseq) and language tokens on both sides (data.language_token:
both: the source's language code in front of the source, the target's forced first in the
output); its vocabulary is read by nmt.export.m2m100_vocabulary, and every language code becomes
a language of the checkpoint (data.languages). An MBartForConditionalGeneration (mBART-50) is
the same but for learned positions, a table per side (model.positions: learned), and a LayerNorm
on the embeddings (model.embedding_norm); its MBart50Tokenizer puts the codes where NLLB's does.
A T5ForConditionalGeneration (MADLAD-400) is read by nmt.export.t5_import.
"""

from __future__ import annotations

import gc
import json
import re
from contextlib import contextmanager
from pathlib import Path

import torch

import nmt
from nmt.checkpoint import save_checkpoint
from nmt.config import language_token, recipe_from_dict, recipe_to_dict
from nmt.special_tokens import BOS, EOS, PAD, UNK
from nmt.data.languages import listed, same_language
from nmt.data.tokenizer import CARRIED, load_processor
from nmt.errors import NmtError
from nmt.files import replaced_whole
from nmt.export.huggingface import marian_code, marian_order, require_transformers
from nmt.export.m2m100_vocabulary import SPM_FILE, default_direction, m2m100_vocabulary, pack_original
from nmt.export.t5_import import (check_t5_config, codes_read_as_text, spm_path, t5_model_section, t5_state_dict,
                                  t5_vocabulary)
from nmt.export.vocabulary_extension import (check_extension, extend_vocabulary, parse_added_languages,
                                             read_added_pieces)
from nmt.model.from_weights import transformer_from_weights
from nmt.model.transformer import Transformer, start_token_of

NORM_OF = {"marian": "post", "pegasus": "pre", "m2m_100": "pre", "mbart": "pre", "t5": "pre"}
POSITIONS_OF = {"m2m_100": "fairseq", "mbart": "learned"}  # else the paper's sinusoid
MULTILINGUAL = ("m2m_100", "mbart")  # language codes on both sides, the vocabulary of nmt.export.m2m100_vocabulary
# Architectures nmt's Transformer cannot compute, and what it lacks for each.
UNSUPPORTED = {"bart": "a byte-level BPE tokenizer (GPT-2's; nmt's tokenizer is sentencepiece)",
               "mt5": "mT5's tokenizer without language tokens (nmt imports T5 models with <2xx> pieces, as MADLAD-400)"}
ACTIVATION_OF = {"relu": "relu", "swish": "swish", "silu": "swish", "gelu": "gelu"}
SPECIAL_PIECES = ("<pad>", "<unk>", "<s>", "</s>")  # nmt's ids 0..3
MAX_LOGIT_DIFFERENCE = 1e-3  # the import's own check against transformers


def import_huggingface(directory: Path, out: Path, force: bool = False, src_lang: str | None = None,
                       tgt_lang: str | None = None, add_languages: str | None = None,
                       add_pieces: Path | None = None) -> dict:
    """Write `out`, an nmt checkpoint that fine-tunes, translates and exports like any other; return a
    summary. `add_languages` (`xx_Latn,yy_Cyrl=zz_Cyrl`) and `add_pieces` (a file, one piece a line)
    extend its vocabulary (nmt.export.vocabulary_extension)."""
    transformers = require_transformers()
    directory, out = Path(directory), Path(out)
    if out.exists() and not force:
        raise NmtError(f"{out}: already exists (--force replaces it)")
    added_languages = parse_added_languages(add_languages) if add_languages else []
    added_pieces = read_added_pieces(add_pieces) if add_pieces else []
    config = _read_config(transformers, directory)
    tokenizer_config = _read_json(directory / "tokenizer_config.json", required=False)
    specials = {"pad": config.pad_token_id, "eos": config.eos_token_id, "start": config.decoder_start_token_id}
    languages: list[str] = []
    decoder_start, language_as_text = "bos", False
    if config.model_type == "t5":  # the target's code <2xx> in front of the source; the decoder starts from <pad>
        vocab, codes = t5_vocabulary(transformers, directory, config.vocab_size)
        languages = list(codes)
        src_lang, tgt_lang = default_direction(directory, languages, src_lang, tgt_lang, tokenizer_config)
        spm_file = spm_path(directory)
        language_as_text = codes_read_as_text(spm_file, codes)
        one = reordered_tokenizer(spm_file, vocab, specials, spm_file, controls=set(codes.values()))
        tokenizers = {"src": one, "tgt": one}
    elif config.model_type in MULTILINGUAL:
        if config.decoder_start_token_id == config.eos_token_id:
            # fairseq's decoder starts from </s>: nmt's does too (model.decoder_start: eos), and nmt's
            # BOS is the row of the <s> the model never reads, so each row maps to one nmt token.
            specials["start"], decoder_start = config.bos_token_id, "eos"
        vocab, codes = m2m100_vocabulary(transformers, directory, config.vocab_size, config.model_type)
        languages = list(codes)
        src_lang, tgt_lang = default_direction(directory, languages, src_lang, tgt_lang, tokenizer_config)
        one = reordered_tokenizer(directory / SPM_FILE, vocab, specials, directory / SPM_FILE,
                                  controls={language_token(code) for code in languages})
        tokenizers = {"src": one, "tgt": one}
    else:
        separate = bool(tokenizer_config.get("separate_vocabs", False))
        vocabs = {"src": _read_json(directory / "vocab.json")}
        vocabs["tgt"] = _read_json(directory / "target_vocab.json") if separate else vocabs["src"]
        languages = marian_languages(vocabs["src"])  # a multilingual OPUS-MT model's target codes (>>fra<<)
        if languages:
            vocabs = {side: _language_tokens_renamed(vocab, languages) for side, vocab in vocabs.items()}
            tgt_lang = _marian_target(directory, languages, tgt_lang or tokenizer_config.get("target_lang"),
                                      given=tgt_lang is not None)
        controls = {language_token(code) for code in languages}
        tokenizers = {side: reordered_tokenizer(directory / name, vocabs[side], specials, directory / json_name, controls)
                      for side, name, json_name in (("src", "source.spm", "vocab.json"),
                                                    ("tgt", "target.spm", "target_vocab.json" if separate else "vocab.json"))}

    if added_languages or added_pieces:  # every request checked before the model is read
        if tokenizers["src"][0] != tokenizers["tgt"][0]:
            raise NmtError(f"{directory}: separate source and target vocabularies; --add-languages and --add-pieces "
                           "extend one joint vocabulary")
        check_extension(tokenizers["tgt"][0], languages, added_languages, added_pieces, str(add_pieces))
    with collecting_new_objects_only():  # the model's cycles, not the whole heap's
        try:  # in fp32, as nmt holds it, whatever precision the directory stores: the check compares alike
            with _without_progress_bars(transformers):  # nmt import's own spinner says what is happening
                hf_model = transformers.AutoModelForSeq2SeqLM.from_pretrained(directory, dtype=torch.float32).eval()
        except (OSError, ValueError) as e:
            raise NmtError(f"{directory}: transformers cannot load the model ({str(e).strip().splitlines()[0]})") from None
        architecture = type(hf_model).__name__
        hf_state = hf_model.state_dict()
        _check_output_bias(hf_state, specials, directory)
        src_lang = src_lang or tokenizer_config.get("source_lang")
        tgt_lang = tgt_lang or tokenizer_config.get("target_lang")
        if not src_lang or not tgt_lang:
            raise NmtError(f"{directory}/tokenizer_config.json names no source_lang/target_lang: give --src-lang and --tgt-lang")
        recipe = _recipe(config, directory, out, tokenizers, hf_state, str(src_lang), str(tgt_lang), languages,
                         decoder_start, language_as_text)
        protos = {side: tokenizers[side][0] for side in ("src", "tgt")}
        indices = {side: tokenizers[side][1] for side in ("src", "tgt")}
        probe = LogitProbe(hf_model, recipe.model, indices)
        # The weights are converted tensor by tensor, each of transformers' freed once read (the
        # converters pop them), so that the import holds about one copy of the weights at a time: the
        # model's modules go now, with any reference cycle among them.
        del hf_model
        gc.collect()
    if config.model_type == "t5":
        weights = t5_state_dict(hf_state, recipe.model, config, indices["tgt"])
    else:
        weights = nmt_state_dict(hf_state, recipe.model, indices)
    del hf_state
    model = transformer_from_weights(recipe.model, len(indices["src"]), len(indices["tgt"]), weights).eval()
    del weights
    difference = probe.difference(model)
    if difference > MAX_LOGIT_DIFFERENCE:
        raise NmtError(f"{directory}: the imported model's logits differ from transformers' by {difference:.2g} "
                       "(a feature this import does not read); nothing written")
    extension = None
    if added_languages or added_pieces:
        proto, model, recipe, extension = extend_vocabulary(protos["tgt"], model, recipe, added_languages, added_pieces)
        protos = {"src": proto, "tgt": proto}
        languages = recipe.data.languages
    carried = {}
    if config.model_type in MULTILINGUAL:  # what exporting back to an M2M100ForConditionalGeneration needs
        carried[CARRIED] = torch.frombuffer(bytearray(pack_original(directory, indices["tgt"], codes)), dtype=torch.uint8)
    save_checkpoint({
        "recipe": recipe_to_dict(recipe),
        "model": model.state_dict(),
        "tokenizer": {side: torch.frombuffer(bytearray(proto), dtype=torch.uint8) for side, proto in protos.items()}
        | carried,
        "imported_from": str(directory),
        "versions": {"nmt": nmt.__version__, "torch": str(torch.__version__),
                     "transformers": str(transformers.__version__)},
    }, out)
    return {"checkpoint": str(out), "architecture": architecture, "direction": f"{src_lang}-{tgt_lang}",
            "vocab": {side: len(index) for side, index in indices.items()}, "max_logit_difference": difference,
            "languages": languages, "recipe": recipe, "extension": extension}


# --- reading the directory ----------------------------------------------------------------------

def _read_json(path: Path, required: bool = True) -> dict:
    if not path.is_file():
        if required:
            raise NmtError(f"{path}: missing (a Marian tokenizer directory has vocab.json, source.spm and target.spm)")
        return {}
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise NmtError(f"{path}: not JSON ({e})") from None
    if not isinstance(content, dict):
        raise NmtError(f"{path}: not a JSON object (a {type(content).__name__})")
    return content


def _read_config(transformers, directory: Path):
    if not (directory / "config.json").is_file():
        raise NmtError(f"{directory}: not a transformers model directory (no config.json)")
    model_type = _read_json(directory / "config.json").get("model_type")
    if model_type in UNSUPPORTED:
        raise NmtError(f"{directory}: a {model_type} model; nmt's Transformer lacks {UNSUPPORTED[model_type]}")
    if model_type not in NORM_OF:
        raise NmtError(f"{directory}: a {model_type!r} model; nmt imports Marian (MarianMTModel, OPUS-MT), "
                       "Pegasus, M2M-100 (M2M100ForConditionalGeneration: NLLB-200, M2M-100), mBART-50 "
                       "(MBartForConditionalGeneration) and T5 (T5ForConditionalGeneration: MADLAD-400) models")
    try:
        config = transformers.AutoConfig.from_pretrained(directory)
    except (OSError, ValueError) as e:
        raise NmtError(f"{directory}/config.json: {str(e).strip().splitlines()[0]}") from None
    if model_type == "t5":
        check_t5_config(config, directory)
        return config
    lacking = []
    if not config.scale_embedding:
        lacking.append("scale_embedding false (nmt scales embeddings by sqrt(d_model))")
    if model_type != "mbart" and not getattr(config, "static_position_embeddings", True):
        lacking.append("learned positions (static_position_embeddings false)")
    if config.encoder_attention_heads != config.decoder_attention_heads:
        lacking.append("different encoder and decoder attention heads")
    if config.encoder_ffn_dim != config.decoder_ffn_dim:
        lacking.append("different encoder and decoder feed-forward sizes")
    if config.activation_function not in ACTIVATION_OF:
        lacking.append(f"activation_function {config.activation_function}")
    if config.d_model % 2:
        lacking.append("an odd d_model")
    if model_type == "m2m_100" and config.pad_token_id != 1:
        lacking.append(f"pad_token_id {config.pad_token_id} (fairseq's positions start at the padding id + 1; "
                       "nmt's at 2, for pad_token_id 1)")
    if lacking:
        raise NmtError(f"{directory}/config.json: nmt's Transformer lacks " + "; ".join(lacking))
    return config


def marian_languages(vocab: dict[str, int]) -> list[str]:
    """The target language codes of a multilingual OPUS-MT vocabulary: its `>>fra<<` entries,
    which MarianTokenizer reads in front of a source text."""
    return [match.group(1) for piece in vocab if (match := re.fullmatch(r">>(.+)<<", piece))]


def _language_tokens_renamed(vocab: dict[str, int], languages: list[str]) -> dict[str, int]:
    """`>>fra<<` as nmt's language token `<2fra>` (nmt.config.language_token), its id kept."""
    renamed = {marian_code(code): language_token(code) for code in languages}
    return {renamed.get(piece, piece): i for piece, i in vocab.items()}


def _marian_target(directory: Path, languages: list[str], tgt_lang: str | None, given: bool) -> str:
    """The default target language of a multilingual OPUS-MT model: --tgt-lang, else its
    tokenizer's target_lang where that is one of its codes or names one's language (fr: fra);
    often it names a group (roa)."""
    if tgt_lang in languages:
        return tgt_lang
    if tgt_lang and not given and len(same := same_language(tgt_lang, languages)) == 1:
        return same[0]  # target_lang fr, the code fra
    if given:
        raise NmtError(f"--tgt-lang {tgt_lang}: not a language code of {directory} ({listed(languages)})")
    raise NmtError(f"{directory} translates into the language whose code starts the source (>>{languages[0]}<<, ...): "
                   f"give the default with --tgt-lang, one of {listed(languages)}")


def reordered_tokenizer(spm_path: Path, vocab: dict[str, int], specials: dict[str, int],
                        vocab_path: Path, controls: set[str] = frozenset()) -> tuple[bytes, list[int]]:
    """(a sentencepiece model whose id i is nmt's token i, the Marian id of each nmt id);
    `controls` (language tokens) become control pieces: never produced from text, dropped from output."""
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    if not spm_path.is_file():
        raise NmtError(f"{spm_path}: missing (a Marian tokenizer directory has vocab.json, source.spm and target.spm)")
    original = model_pb2.ModelProto()
    load_processor(spm_path)  # a one-line error for a file that is not a sentencepiece model
    original.ParseFromString(spm_path.read_bytes())
    piece_of = {i: p for p, i in vocab.items()}
    unk = vocab.get("<unk>", vocab.get(original.trainer_spec.unk_piece or "<unk>"))
    for name, token_id in (("pad_token_id", specials["pad"]), ("eos_token_id", specials["eos"]),
                           ("decoder_start_token_id", specials["start"]), ("<unk>", unk)):
        if token_id is None or token_id not in piece_of:
            raise NmtError(f"{vocab_path}: has no entry for {name} ({token_id})")
    index = [specials["pad"], unk, specials["start"], specials["eos"]]
    kinds = model_pb2.ModelProto.SentencePiece
    kept = {p.piece: p for p in original.pieces if p.type in (kinds.NORMAL, kinds.USER_DEFINED, kinds.BYTE)}
    missing = [piece for piece in kept if piece not in vocab]
    if missing:
        raise NmtError(f"{vocab_path}: lacks {len(missing)} pieces of {spm_path.name} (e.g. {', '.join(missing[:3])}), "
                       "which Marian reads as <unk>; nmt's vocabulary is the sentencepiece model's")
    rebuilt = model_pb2.ModelProto()
    rebuilt.CopyFrom(original)
    del rebuilt.pieces[:]
    for piece, kind in zip(SPECIAL_PIECES, (kinds.CONTROL, kinds.UNKNOWN, kinds.CONTROL, kinds.CONTROL)):
        rebuilt.pieces.add(piece=piece, score=0.0, type=kind)
    lowest = min((p.score for p in kept.values()), default=0.0)
    placed = set(index)  # a set: NLLB's 256k ids against a list took minutes
    for marian_id in sorted(piece_of):
        piece = piece_of[marian_id]
        if marian_id in placed:
            continue
        if piece in SPECIAL_PIECES:
            raise NmtError(f"{vocab_path}: {piece} has id {marian_id}, which nmt's vocabulary has no room for "
                           "(its <pad>, <unk>, <s>, </s> are the model's pad, unknown, decoder-start and EOS tokens)")
        if piece in controls:  # (T5's <2xx> are pieces of its sentencepiece model)
            rebuilt.pieces.add(piece=piece, score=0.0, type=kinds.CONTROL)
        elif piece in kept:
            rebuilt.pieces.append(kept[piece])
        else:  # the other side's piece in a shared vocabulary: a row of the model, never produced by encoding
            rebuilt.pieces.add(piece=piece, score=lowest - 10.0, type=kinds.UNUSED)
        index.append(marian_id)
    spec = rebuilt.trainer_spec
    spec.pad_id, spec.unk_id, spec.bos_id, spec.eos_id = PAD, UNK, BOS, EOS
    spec.pad_piece, spec.unk_piece, spec.bos_piece, spec.eos_piece = SPECIAL_PIECES
    spec.vocab_size = len(rebuilt.pieces)
    return rebuilt.SerializeToString(), index


def _check_output_bias(hf_state: dict, specials: dict, directory: Path) -> None:
    """nmt's output layer has no bias; a zero one (OPUS-MT's), or one that only forbids the
    pad/decoder-start token (nmt never predicts those), maps exactly."""
    bias = hf_state.get("final_logits_bias")
    if bias is None:
        return
    bias = bias.flatten().clone()
    forbidden = [specials["pad"], specials["start"]]
    if (bias[forbidden] > 0).any():
        raise NmtError(f"{directory}: final_logits_bias favours the pad token; nmt never predicts it")
    bias[forbidden] = 0.0
    if bias.abs().max() > 0:
        raise NmtError(f"{directory}: final_logits_bias is not zero; nmt's output layer has no bias")


def _recipe(config, directory: Path, out: Path, tokenizers: dict, hf_state: dict, src_lang: str, tgt_lang: str,
            languages: list[str], decoder_start: str, language_as_text: bool = False):
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    src_proto, tgt_proto = tokenizers["src"][0], tokenizers["tgt"][0]
    joint = src_proto == tgt_proto
    prefix = "" if config.model_type == "t5" else "model."
    share = joint and torch.equal(hf_state[f"{prefix}encoder.embed_tokens.weight"],
                                  hf_state[f"{prefix}decoder.embed_tokens.weight"])
    spec = model_pb2.ModelProto()
    spec.ParseFromString(tgt_proto)
    model_type = {1: "unigram", 2: "bpe"}.get(spec.trainer_spec.model_type)
    if model_type is None:
        raise NmtError(f"{directory}: a word or character sentencepiece model; nmt's tokenizer is unigram or BPE")
    generation = _read_json(directory / "generation_config.json", required=False)
    decode = {"beam_size": int(generation.get("num_beams") or 1),
              "length_penalty": float(generation.get("length_penalty", 1.0)),
              "no_repeat_ngram_size": int(generation.get("no_repeat_ngram_size") or 0)}
    if generation.get("early_stopping") is False and decode["length_penalty"] != 0:
        decode["patience"] = 2.0  # a longer search than patience 1, as transformers' heuristic makes it
    raw = {
        "output_dir": str(out.with_suffix("")),
        "data": {"src_lang": src_lang, "tgt_lang": tgt_lang, "train": f"(imported from {directory})",
                 "valid": f"(imported from {directory})",
                 **({"language_token": "source" if config.model_type in ("t5", "marian") else "both",
                     "languages": languages, **({"language_token_as_text": True} if language_as_text else {})}
                    if languages else {})},
        "tokenizer": {"model_type": model_type, "vocab_size": len(tokenizers["tgt"][1]), "joint": joint},
        "model": t5_model_section(config, share) if config.model_type == "t5" else
        _model_section(config, hf_state, share, decoder_start),
        "decode": decode,
    }
    return recipe_from_dict(raw, str(directory))


def _model_section(config, hf_state: dict, share: bool, decoder_start: str) -> dict:
    """The recipe's model section for a Marian, Pegasus, M2M-100 or mBART configuration."""
    return {"encoder_layers": config.encoder_layers, "decoder_layers": config.decoder_layers,
            "d_model": config.d_model, "heads": config.encoder_attention_heads, "d_ff": config.encoder_ffn_dim,
            "dropout": config.dropout, "attention_dropout": config.attention_dropout,
            "activation_dropout": config.activation_dropout, "norm": NORM_OF[config.model_type],
            "activation": ACTIVATION_OF[config.activation_function], "share_embeddings": share,
            "tie_output": torch.equal(hf_state["lm_head.weight"], hf_state["model.decoder.embed_tokens.weight"]),
            "max_positions": config.max_position_embeddings,
            "positions": POSITIONS_OF.get(config.model_type, "sinusoidal"),
            "embedding_norm": config.model_type == "mbart", "decoder_start": decoder_start}


# --- the weights ---------------------------------------------------------------------------------

def nmt_state_dict(hf: dict[str, torch.Tensor], cfg, indices: dict[str, list[int]]) -> dict[str, torch.Tensor]:
    """transformers' weights under nmt's names: the inverse of `transformers_state_dict`. Each
    tensor read is popped from `hf`, so that it is freed once converted (where nothing else holds it)."""
    back = torch.argsort(marian_order(cfg.d_model))  # nmt's dimension j is Marian's back[j]
    out: dict[str, torch.Tensor] = {}

    def columns(t):
        return t[:, back].contiguous()

    def rows(t):
        return t[back].contiguous()

    def reads_stream(target: str, source: str) -> None:  # a projection whose input is the residual stream
        out[f"{target}.weight"], out[f"{target}.bias"] = columns(hf.pop(f"{source}.weight")), hf.pop(f"{source}.bias").clone()

    def writes_stream(target: str, source: str) -> None:  # a projection whose output is the residual stream
        out[f"{target}.weight"], out[f"{target}.bias"] = rows(hf.pop(f"{source}.weight")), rows(hf.pop(f"{source}.bias"))

    def norm(target: str, source: str) -> None:
        out[f"{target}.weight"], out[f"{target}.bias"] = rows(hf.pop(f"{source}.weight")), rows(hf.pop(f"{source}.bias"))

    def fused(target: str, source: str, names: tuple[str, ...]) -> None:
        out[f"{target}.weight"] = torch.cat([columns(hf.pop(f"{source}.{n}.weight")) for n in names])
        out[f"{target}.bias"] = torch.cat([hf.pop(f"{source}.{n}.bias") for n in names])

    def feed_forward(target: str, source: str) -> None:
        reads_stream(f"{target}.w1", f"{source}.fc1")
        writes_stream(f"{target}.w2", f"{source}.fc2")

    def self_attention(target: str, source: str) -> None:
        fused(f"{target}.qkv_proj", source, ("q_proj", "k_proj", "v_proj"))
        writes_stream(f"{target}.out_proj", f"{source}.out_proj")

    for i in range(cfg.encoder_layers):
        t, s = f"encoder_layers.{i}", f"model.encoder.layers.{i}"
        self_attention(f"{t}.self_attn", f"{s}.self_attn")
        norm(f"{t}.attn_sublayer.norm", f"{s}.self_attn_layer_norm")
        feed_forward(f"{t}.feed_forward", s)
        norm(f"{t}.ff_sublayer.norm", f"{s}.final_layer_norm")
    for i in range(cfg.decoder_layers):
        t, s = f"decoder_layers.{i}", f"model.decoder.layers.{i}"
        self_attention(f"{t}.self_attn", f"{s}.self_attn")
        norm(f"{t}.self_sublayer.norm", f"{s}.self_attn_layer_norm")
        fused(f"{t}.cross_attn.q_proj", f"{s}.encoder_attn", ("q_proj",))
        fused(f"{t}.cross_attn.kv_proj", f"{s}.encoder_attn", ("k_proj", "v_proj"))
        writes_stream(f"{t}.cross_attn.out_proj", f"{s}.encoder_attn.out_proj")
        norm(f"{t}.cross_sublayer.norm", f"{s}.encoder_attn_layer_norm")
        feed_forward(f"{t}.feed_forward", s)
        norm(f"{t}.ff_sublayer.norm", f"{s}.final_layer_norm")
    if cfg.norm == "pre":
        norm("encoder_norm", "model.encoder.layer_norm")
        norm("decoder_norm", "model.decoder.layer_norm")
    for target, side in (("src_embed", "encoder"), ("tgt_embed", "decoder")):
        if cfg.embedding_norm:
            norm(f"{target}.norm", f"model.{side}.layernorm_embedding")
        if cfg.positions == "learned":  # mBART reads its table from row 2 (fairseq's offset) on
            out[f"{target}.positions.weight"] = columns(hf.pop(f"model.{side}.embed_positions.weight")[2:2 + cfg.max_positions])

    src_index, tgt_index = torch.tensor(indices["src"]), torch.tensor(indices["tgt"])
    out["tgt_embed.tokens.weight"] = columns(hf.pop("model.decoder.embed_tokens.weight")[tgt_index])
    out["src_embed.tokens.weight"] = (out["tgt_embed.tokens.weight"] if cfg.share_embeddings  # one table, made once
                                      else columns(hf.pop("model.encoder.embed_tokens.weight")[src_index]))
    if not cfg.tie_output:
        out["output_proj.weight"] = columns(hf.pop("lm_head.weight")[tgt_index])
    return {name: t.float() for name, t in out.items()}


class LogitProbe:
    """transformers' logits on a random probe sentence pair, kept so that its model can be freed
    before nmt's is built; `difference` compares nmt's model with them."""

    def __init__(self, hf_model, cfg, indices: dict[str, list[int]], length: int = 12):
        self.src_index, self.tgt_index = torch.tensor(indices["src"]), torch.tensor(indices["tgt"])
        generator = torch.Generator().manual_seed(0)
        self.src = torch.randint(4, len(self.src_index), (1, length), generator=generator)
        self.src[0, -1] = EOS
        self.tgt = torch.randint(4, len(self.tgt_index), (1, length), generator=generator)
        self.tgt[0, 0] = start_token_of(cfg)
        with torch.no_grad():
            self.logits = hf_model(input_ids=self.src_index[self.src],
                                   decoder_input_ids=self.tgt_index[self.tgt]).logits[0]

    def difference(self, model: Transformer) -> float:
        """The largest difference between nmt's logits and transformers' (every id nmt can predict,
        PAD and BOS aside; transformers' ids mapped through the index)."""
        with torch.no_grad():
            ours = model(self.src, self.tgt)[0]
        kept = torch.ones(len(self.tgt_index), dtype=torch.bool)
        kept[[PAD, BOS]] = False
        return float((ours[:, kept] - self.logits[:, self.tgt_index[kept]]).abs().max())


def write_finetuning_recipe(recipe, checkpoint: Path, path: Path) -> None:
    """A recipe that fine-tunes the imported checkpoint: its model, tokenizer and decode sections,
    a data section to fill in (my_corpus/..., as recipes/my_data.yaml), train.init_from set and a
    fine-tuning rate; written atomically."""
    import yaml

    raw = recipe_to_dict(recipe)
    raw["output_dir"] = f"runs/{Path(checkpoint).stem}"
    raw["data"].update(train="my_corpus/train", valid="my_corpus/dev", test="my_corpus/test")
    # a sentence and its EOS within the model's positions
    raw["data"]["max_tokens_per_sentence"] = min(raw["data"]["max_tokens_per_sentence"], recipe.model.max_positions - 1)
    raw["train"].update(init_from=str(checkpoint), lr=1e-4, warmup_steps=500, max_minutes=60)
    header = (f"# Fine-tunes {checkpoint} (imported by `nmt import`): edit the data section, then\n"
              f"#   nmt tokenizer {path} && nmt prepare {path} && nmt train {path}\n"
              "# The model and tokenizer sections are the imported model's: fine-tuning needs them as they are.\n")
    with replaced_whole(path) as f:
        f.write(header + yaml.safe_dump(raw, sort_keys=False, allow_unicode=True))


def import_with_recipe(directory: Path, out: Path, force: bool = False, src_lang: str | None = None,
                       tgt_lang: str | None = None, recipe: Path | None = None, add_languages: str | None = None,
                       add_pieces: Path | None = None) -> list[str]:
    """`nmt import`: the checkpoint, and, with `recipe`, a recipe that fine-tunes it; returns the
    lines to print (what was imported, how close its logits are, how to fine-tune it)."""
    if recipe and recipe.exists() and not force:
        raise NmtError(f"{recipe}: already exists (--force replaces it)")
    summary = import_huggingface(directory, out, force, src_lang, tgt_lang, add_languages, add_pieces)
    lines = []
    if extension := summary["extension"]:
        added = [f"{len(extension['languages'])} language(s) ({', '.join(extension['languages'])})"] if extension["languages"] else []
        added += [f"{extension['pieces']} piece(s)"] if extension["pieces"] else []
        lines.append(f"added {' and '.join(added)}: vocabulary {extension['vocab']['before']} -> "
                     f"{extension['vocab']['after']}; each new row starts from the mean of related rows (docs/huggingface.md)")
        if unreached := extension["unreached_pieces"]:
            lines.append(f"note: {len(unreached)} added piece(s) the tokenizer never produces from their own text, as "
                         f"BPE reaches a piece only through pieces it has: {', '.join(unreached[:5])}")
    if recipe:
        write_finetuning_recipe(summary["recipe"], out, recipe)
        lines.append(f"wrote {recipe}: fill in its data section, then `nmt tokenizer {recipe} && nmt prepare {recipe} "
                     f"&& nmt train {recipe}`")
    if summary["languages"]:
        some = ", ".join(summary["languages"][:5]) + (", ..." if len(summary["languages"]) > 5 else "")
        how = ("a direction with `nmt translate --src-lang CODE --tgt-lang CODE`"
               if summary["recipe"].data.src_lang in summary["languages"] else "the target with `nmt translate --tgt-lang CODE`")
        lines.append(f"{len(summary['languages'])} languages ({some}): choose {how}")
    model, tokenizer = summary["recipe"].model, summary["recipe"].tokenizer
    shape = ", ".join(f"{key}: {getattr(model, key)}" for key in
                      ("encoder_layers", "decoder_layers", "d_model", "heads", "d_ff", "norm", "activation",
                       "share_embeddings", "tie_output")
                      + (("positions", "decoder_start") if model.positions != "sinusoidal" else ()))
    shape += "".join(f", {key}" for key in model.t5_layout() if not key.startswith(("positions", "activation")))
    lines.append(f"imported {directory} ({summary['architecture']}, {summary['direction']}, vocabularies "
                 f"{summary['vocab']['src']}/{summary['vocab']['tgt']}) to {out}; logits within "
                 f"{summary['max_logit_difference']:.1g} of transformers'. Fine-tune with `nmt train RECIPE --init-from "
                 f"{out}`, whose model section is {{{shape}}} and tokenizer section {{joint: "
                 f"{tokenizer.joint}, vocab_size: {tokenizer.vocab_size}}}")
    return lines


@contextmanager
def collecting_new_objects_only():
    """Inside, gc.collect() scans the objects made inside it: everything older is frozen
    (gc.freeze) until the block ends. A full collection in a long-lived process with a large heap
    (a server's, a test run's) takes 0.5-1 s; the import's own objects take milliseconds. A heap
    the process froze itself is left as it is (unfreezing is all or nothing)."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextmanager
def _without_progress_bars(transformers):
    shown = transformers.utils.logging.is_progress_bar_enabled()
    transformers.utils.logging.disable_progress_bar()
    try:
        yield
    finally:
        if shown:
            transformers.utils.logging.enable_progress_bar()
