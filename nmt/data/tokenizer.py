"""Sentencepiece: training a model on the recipe's text, with the special tokens at their fixed ids
(nmt.special_tokens)."""

from __future__ import annotations

import io
import json
import random
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable
from itertools import chain, count
from pathlib import Path

import sentencepiece as spm

from nmt.config import DataConfig, TokenizerConfig, changed_keys
from nmt.data.corpora import open_corpus, recipe_corpus
from nmt.errors import NmtError
from nmt.files import cached_record, cannot_write, replaced_whole
from nmt.special_tokens import BOS, EOS, PAD, UNK

# A checkpoint's "tokenizer" entry holds the sentencepiece models ("src", "tgt") and, for a model
# imported from an NLLB-200/M2M-100 directory, that directory's own tokenizer ("transformers", a
# zip; nmt.export.m2m100_vocabulary), which fine-tuning carries on (as `carried_path`) so that the
# result exports back to transformers.
CARRIED = "transformers"
_SPACES = re.compile(" {2,}")  # runs of spaces, which output_text takes out


def carried_path(out: Path) -> Path:
    return out / "transformers_tokenizer.zip"


def tokenizer_paths(out: Path, joint: bool) -> tuple[Path, Path]:
    """(source model, target model): the same file when the vocabulary is joint."""
    if joint:
        return out / "spm.model", out / "spm.model"
    return out / "spm.src.model", out / "spm.tgt.model"


def require_tokenizer(path: Path) -> None:
    """An error naming `nmt tokenizer` where its model is not at `path`."""
    if not Path(path).is_file():
        raise NmtError(f"{path}: tokenizer model not found (run `nmt tokenizer` first)")


def load_processor(path: Path | None = None, model_proto: bytes | None = None) -> spm.SentencePieceProcessor:
    processor = spm.SentencePieceProcessor()
    try:
        if model_proto is not None:
            processor.LoadFromSerializedProto(model_proto)
        else:
            require_tokenizer(path)
            processor.Load(str(path))
    except (OSError, RuntimeError) as e:
        raise NmtError(f"{path or 'checkpoint'}: not a sentencepiece model ({e})") from None
    return processor


def _write_sample(lines: Iterable[str], handle, limit: int, seed: int) -> int:
    """Copy training sentences to `handle`, reservoir-sampling `limit` of them when limit > 0."""
    rng = random.Random(seed)
    sample: list[str] = []
    seen = 0
    for line in lines:
        if not line.strip():
            continue
        seen += 1
        if limit <= 0 or len(sample) < limit:
            sample.append(line)
        else:
            j = rng.randrange(seen)
            if j < limit:
                sample[j] = line
    handle.write("\n".join(sample) + "\n")
    return len(sample)


def _train_one(lines: Iterable[str], source: str, model_path: Path, cfg: TokenizerConfig,
               control_tokens: list[str] = (), limit: int | None = None) -> None:
    """`limit`: sentences sampled (default tokenizer.input_sentence_size; 0 = all). The model is
    trained under a hidden name beside `model_path` and takes its place (and its .vocab the
    .vocab's) only once it loads back whole: sentencepiece does not report a write it could not
    finish (a full disk), and a failed training leaves the tokenizer that was there."""
    try:
        text = tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False)
    except OSError as e:
        raise cannot_write(tempfile.gettempdir(), e) from None
    staged = model_path.with_name(f".{model_path.stem}.tmp")  # sentencepiece adds .model and .vocab
    written = [Path(f"{staged}{extension}") for extension in (".model", ".vocab")]
    try:
        try:
            with text:
                n = _write_sample(lines, text, cfg.input_sentence_size if limit is None else limit, cfg.seed)
        except OSError as e:
            if e.filename is not None:  # a file it names (the corpus's)
                raise
            raise cannot_write(text.name, e) from None  # the sample's own write
        if n == 0:
            raise NmtError(f"{source}: no text to train the tokenizer on")
        _train_sentencepiece(text.name, staged, cfg, control_tokens)
        _check_written(written, model_path)
        for path, extension in zip(written, (".model", ".vocab")):
            path.replace(model_path.with_suffix(extension))
    finally:
        Path(text.name).unlink(missing_ok=True)
        for path in written:
            path.unlink(missing_ok=True)


def _check_written(written: list[Path], model_path: Path) -> None:
    """An error naming `model_path` unless sentencepiece's model and vocabulary (`written`) load
    back whole: one vocabulary line per piece of the model."""
    model, vocabulary = written
    try:  # (regular files: what sentencepiece makes, and never a device that reads without end)
        whole = model.is_file() and vocabulary.is_file() and vocabulary.read_bytes().count(b"\n") == \
            spm.SentencePieceProcessor(model_file=str(model)).get_piece_size()
    except (OSError, RuntimeError):
        whole = False
    if not whole:
        free = shutil.disk_usage(model_path.parent).free
        raise NmtError(f"{model_path}: cannot write there (sentencepiece's model did not load back whole; "
                       f"{free:,} bytes free on its disk)")


def _train_sentencepiece(text: str, prefix: Path, cfg: TokenizerConfig, control_tokens: list[str]) -> None:
    """sentencepiece's training on the sample in the file `text`, into `prefix`.model and .vocab."""
    try:
        spm.SentencePieceTrainer.Train(
            input=text,
            model_prefix=str(prefix),
            model_type=cfg.model_type,
            vocab_size=cfg.vocab_size,
            character_coverage=cfg.character_coverage,
            num_threads=cfg.num_threads,
            pad_id=PAD, unk_id=UNK, bos_id=BOS, eos_id=EOS,
            minloglevel=2,
            byte_fallback=cfg.byte_fallback,
            split_digits=cfg.split_digits,
            **({"control_symbols": list(control_tokens)} if control_tokens else {}),
            **({"user_defined_symbols": list(cfg.user_defined_symbols)} if cfg.user_defined_symbols else {}),
        )
    except RuntimeError as e:
        message = str(e).splitlines()[-1]
        if limit := re.search(r"Vocabulary size too high \((\d+)\)\. Please set it to a value <= (\d+)", message):
            raise NmtError(f"tokenizer.vocab_size {limit[1]}: more pieces than this training text holds "
                           f"(at most {limit[2]}); set a smaller tokenizer.vocab_size") from None
        if need := re.search(r"smaller than required_chars\. (\d+) vs (\d+)", message):
            raise NmtError(f"tokenizer.vocab_size {need[1]}: this training text's characters and the special "
                           f"tokens take {need[2]} pieces; set tokenizer.vocab_size to at least {need[2]} (or "
                           "tokenizer.character_coverage below 1)") from None
        if re.search(r"insert_id\(trainer_spec_\.\w+_id\(\)", message):  # no room for a special token
            raise NmtError(f"tokenizer.vocab_size {cfg.vocab_size}: fewer pieces than the special tokens take; "
                           "set a larger tokenizer.vocab_size") from None
        raise NmtError(f"sentencepiece training failed: {message}") from None


# Options added after tokenizers were first trained: recorded only when set, so that a tokenizer
# trained before they existed is still up to date for a recipe that leaves them at their defaults.
LATER_OPTIONS = ("byte_fallback", "split_digits", "user_defined_symbols")


def tokenizer_settings(cfg: TokenizerConfig) -> dict:
    """The settings that decide a trained tokenizer (it is retrained when they change)."""
    settings = cfg.model_dump(mode="json")
    default = TokenizerConfig()
    return {key: value for key, value in settings.items()
            if key not in LATER_OPTIONS or value != getattr(default, key)}


def train_tokenizer(data: DataConfig, cfg: TokenizerConfig, out: Path, init_from: str | None = None) -> dict:
    """Train the model(s) into `out`, skip if already trained with the same settings; return a summary.

    With `init_from` (fine-tuning), the parent checkpoint's tokenizer is copied instead, byte for byte.
    """
    out.mkdir(parents=True, exist_ok=True)
    summary_path = out / "tokenizer.json"
    settings = {"data": {"train": data.train, "src": data.src_lang, "tgt": data.tgt_lang},
                "tokenizer": tokenizer_settings(cfg)}
    if isinstance(data.train, list) or data.reserved_tokens():
        settings["data"] |= {"train": [c.model_dump(mode="json") for c in data.corpora()],
                             "control_tokens": data.control_tokens()}
        if data.target_control_tokens():
            settings["data"]["target_control_tokens"] = data.target_control_tokens()
    if not data.unescape:  # (recorded only off: the tokenizers trained before the setting read their corpora on)
        settings["data"]["unescape"] = False
    if init_from:
        settings = {"init_from": init_from, "tokenizer": {"joint": cfg.joint, "vocab_size": cfg.vocab_size}}
    src_model, tgt_model = tokenizer_paths(out, cfg.joint)
    text = None if init_from else _training_text(data)
    if summary_path.is_file() and src_model.is_file() and tgt_model.is_file():
        previous = cached_record(summary_path)
        found = previous | {"skipped": True, "models": [str(src_model), str(tgt_model)]}  # where they are now
        if previous.get("settings") == settings:
            if previous.get("text", text) == text:  # a record of before the text was recorded: kept
                return found
            from nmt.checkpoint import resumable, run_checkpoints  # here: prepare runs without torch's import

            if resumable(run_checkpoints(out)):  # the run's checkpoints were trained with it
                return found | {"kept_for_checkpoints": True}
        else:
            _refuse_under_checkpoints(out, previous.get("settings", {}), settings)

    if init_from:
        _copy_parent_tokenizer(Path(init_from), cfg, src_model, tgt_model)
    else:
        _train_from_corpus(data, cfg, src_model, tgt_model)
    summary = {"settings": settings, "text": text, "models": [str(src_model), str(tgt_model)]}
    summary.update(_measure(data, src_model, tgt_model))
    with replaced_whole(summary_path) as f:
        f.write(json.dumps(summary, indent=2))
    return summary | {"skipped": False}


def _training_text(data: DataConfig) -> list[dict]:
    """What identifies the training text: each file's size and modification time (a corpus edited
    or replaced retrains the tokenizer); a Hugging Face dataset by its name, read only to train."""
    return [{"dataset": spec} if spec.startswith("hf:") else open_corpus(spec, src, tgt).fingerprint()
            for spec, src, tgt in dict.fromkeys((c.path, c.src_lang, c.tgt_lang) for c in data.corpora())]


def _refuse_under_checkpoints(out: Path, before: dict, after: dict) -> None:
    """A run's checkpoints were trained with the tokenizer in its folder: another one there would
    leave them unable to resume (and its prepared data encoded for neither)."""
    from nmt.checkpoint import resumable, run_checkpoints

    folder = run_checkpoints(out)
    if resumable(folder):
        raise NmtError(f"{out}: the checkpoints in {folder} were trained with the tokenizer there; a new one "
                       f"({', '.join(changed_keys(before, after)) or 'other settings'}) needs another output_dir")


def describe_tokenizer(summary: dict, init_from: str | None = None) -> list[str]:
    """The lines `nmt tokenizer` prints about `train_tokenizer`'s summary."""
    models = ", ".join(sorted(set(summary["models"])))
    if summary.get("kept_for_checkpoints"):
        lines = [f"tokenizer kept: {summary['models'][0]} (the training text changed since it was trained, "
                 "but the run's checkpoints use it; another output_dir trains a new one)"]
    elif summary["skipped"]:
        lines = [f"tokenizer up to date: {summary['models'][0]}"]
    elif init_from:
        lines = [f"copied the tokenizer of {init_from} to {models}"]
    else:
        lines = [f"trained {models}"]
    for side in ("src", "tgt"):
        s = summary[side]
        lines.append(f"  {side}: vocabulary {s['vocab_size']}, {s['dev_pieces_per_sentence']} pieces per dev "
                     f"sentence, unknown rate {s['dev_unknown_rate']}")
    return lines


def _copy_parent_tokenizer(parent: Path, cfg: TokenizerConfig, src_model: Path, tgt_model: Path) -> None:
    from nmt.checkpoint import load_checkpoint, tokenizer_models

    payload = load_checkpoint(parent, optimizer=False)
    models = tokenizer_models(payload)
    theirs = payload["recipe"]["tokenizer"]
    for key in ("joint", "vocab_size", *LATER_OPTIONS):
        if theirs.get(key, getattr(TokenizerConfig(), key)) != getattr(cfg, key):
            raise NmtError(f"tokenizer.{key}: the recipe has {getattr(cfg, key)}, but {parent} was trained "
                           f"with {theirs.get(key)}; fine-tuning keeps the parent's vocabulary")
    for path, side in ((src_model, "src"), (tgt_model, "tgt")):
        with replaced_whole(path, "wb") as f:
            f.write(models[side])
    carried = carried_path(src_model.parent)
    if CARRIED in payload["tokenizer"]:
        with replaced_whole(carried, "wb") as f:
            f.write(payload["tokenizer"][CARRIED].numpy().tobytes())
    elif carried.exists():
        carried.unlink()


def _train_from_corpus(data: DataConfig, cfg: TokenizerConfig, src_model: Path, tgt_model: Path) -> None:
    if isinstance(data.train, list):
        return _train_from_corpora(data, cfg, src_model, tgt_model)
    corpus = recipe_corpus(data, data.train, data.src_lang, data.tgt_lang)
    if cfg.joint:
        _train_one(chain(corpus.side("src"), corpus.side("tgt")), str(corpus), src_model, cfg, data.reserved_tokens())
    else:
        _train_one(corpus.side("src"), str(corpus), src_model, cfg, data.control_tokens())
        _train_one(corpus.side("tgt"), str(corpus), tgt_model, cfg, data.target_control_tokens())


def _language_texts(data: DataConfig, sides: tuple[str, ...]) -> dict[str, list]:
    """Per language, the texts of the corpora's `sides` in it, each file once (a four-way corpus
    lists its English side in every direction)."""
    texts: dict[str, list] = {}
    seen = set()
    for corpus_cfg in data.corpora():
        corpus = recipe_corpus(data, corpus_cfg.path, corpus_cfg.src_lang, corpus_cfg.tgt_lang)
        for side in sides:
            lang = corpus_cfg.src_lang if side == "src" else corpus_cfg.tgt_lang
            if (corpus_cfg.path, lang) not in seen:
                seen.add((corpus_cfg.path, lang))
                texts.setdefault(lang, []).append(corpus.side(side))
    return texts


def _balanced_sample(texts: dict[str, list], cfg: TokenizerConfig) -> list[str]:
    """Up to input_sentence_size / (languages) sentences of each language, so that a large
    language does not crowd the others out of the joint vocabulary."""
    cap = cfg.input_sentence_size // len(texts) if cfg.input_sentence_size > 0 else 0
    sample: list[str] = []
    for lang in sorted(texts):
        buffer = io.StringIO()
        _write_sample(chain(*texts[lang]), buffer, cap, cfg.seed)
        sample += [line for line in buffer.getvalue().splitlines() if line]
    return sample


def _train_from_corpora(data: DataConfig, cfg: TokenizerConfig, src_model: Path, tgt_model: Path) -> None:
    """Several corpora: one joint model over every language (a balanced sample), or one per side."""
    source = ", ".join(c.path for c in data.corpora())
    if cfg.joint:
        sample = _balanced_sample(_language_texts(data, ("src", "tgt")), cfg)
        _train_one(sample, source, src_model, cfg, data.reserved_tokens(), limit=0)
        return
    for side, model, tokens in (("src", src_model, data.control_tokens()),
                                ("tgt", tgt_model, data.target_control_tokens())):
        texts = _language_texts(data, (side,))
        if len(texts) > 1:
            raise NmtError(f"tokenizer.joint: false, but the corpora have several {side} languages "
                           f"({', '.join(sorted(texts))}); several languages need one joint vocabulary")
        _train_one(chain(*next(iter(texts.values()))), source, model, cfg, tokens)


def _measure(data: DataConfig, src_model: Path, tgt_model: Path) -> dict:
    """Vocabulary size, pieces per sentence and unknown-piece rate on the dev set."""
    stats = {}
    dev = recipe_corpus(data, data.valid, data.src_lang, data.tgt_lang)
    for side, model in (("src", src_model), ("tgt", tgt_model)):
        sp = load_processor(model)
        lines = list(dev.side(side))
        ids = sp.encode(lines)
        pieces = sum(len(x) for x in ids)
        unknown = sum(x.count(UNK) for x in ids)
        stats[side] = {
            "vocab_size": sp.get_piece_size(),
            "dev_pieces_per_sentence": round(pieces / max(len(lines), 1), 2),
            "dev_unknown_rate": round(unknown / max(pieces, 1), 5),
        }
    return stats


def output_text(tokenizer: spm.SentencePieceProcessor, ids: list[int]) -> str:
    """The text of output token ids. A model may emit a lone "▁" piece before EOS or before a word
    (sentencepiece decodes it as one more space); such spaces are taken out, as the tokenizer's
    normalization took them out of the training text, so that no translation ends in a space or
    holds two in a row (a line joined from its sentences' tokens would, where one ended on "▁")."""
    return _SPACES.sub(" ", tokenizer.decode(ids)).strip()


def encode_lines(tokenizer: spm.SentencePieceProcessor, lines: Iterable[str]) -> list[list[int]]:
    """Each line's token ids, encoded one line at a time in this thread. Sentencepiece's encode of
    a list starts a pool of threads at every call, which for the few lines of a request costs far
    more than the encoding: beside torch's threads, 4.4 ms of a 4-line request's 74 ms on 2 cores,
    against 0.2 ms line by line. (`nmt prepare` encodes whole corpora in its threads.)"""
    return [tokenizer.encode(line) for line in lines]


def encode_within(tokenizer, lines: list[str], limit: int, what: str, warn: Callable[[str], None],
                  first_line: int, numbers: list[int] | None = None) -> list[list[int]]:
    """Each line's token ids, cut to `limit` with a warning naming the line (`what`: "" or "prefix of ";
    the lines are numbered from `first_line`, or by `numbers`)."""
    encoded = []
    for number, ids in zip(numbers or count(first_line), encode_lines(tokenizer, lines)):
        if len(ids) > limit:
            warn(f"line {number}: {what}{len(ids)} tokens, truncated to {limit} (model.max_positions)")
            ids = ids[:limit]
        encoded.append(ids)
    return encoded
