"""Sentencepiece: training a model on the recipe's text, and the fixed special-token ids."""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Iterable
from itertools import chain
from pathlib import Path

import sentencepiece as spm

from nmt.config import DataConfig, TokenizerConfig
from nmt.data.corpus import open_corpus
from nmt.errors import NmtError

PAD, UNK, BOS, EOS = 0, 1, 2, 3


def tokenizer_paths(out: Path, joint: bool) -> tuple[Path, Path]:
    """(source model, target model): the same file when the vocabulary is joint."""
    if joint:
        return out / "spm.model", out / "spm.model"
    return out / "spm.src.model", out / "spm.tgt.model"


def load_processor(path: Path | None = None, model_proto: bytes | None = None) -> spm.SentencePieceProcessor:
    processor = spm.SentencePieceProcessor()
    try:
        if model_proto is not None:
            processor.LoadFromSerializedProto(model_proto)
        else:
            if not Path(path).is_file():
                raise NmtError(f"{path}: tokenizer model not found (run `nmt tokenizer` first)")
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


def _train_one(lines: Iterable[str], source: str, model_path: Path, cfg: TokenizerConfig) -> None:
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as text:
        n = _write_sample(lines, text, cfg.input_sentence_size, cfg.seed)
    if n == 0:
        raise NmtError(f"{source}: no text to train the tokenizer on")
    prefix = model_path.with_suffix("")
    try:
        spm.SentencePieceTrainer.Train(
            input=text.name,
            model_prefix=str(prefix),
            model_type=cfg.model_type,
            vocab_size=cfg.vocab_size,
            character_coverage=cfg.character_coverage,
            num_threads=cfg.num_threads,
            pad_id=PAD, unk_id=UNK, bos_id=BOS, eos_id=EOS,
            minloglevel=2,
        )
    except RuntimeError as e:
        raise NmtError(f"sentencepiece training failed: {str(e).splitlines()[-1]}") from None
    finally:
        Path(text.name).unlink(missing_ok=True)


def train_tokenizer(data: DataConfig, cfg: TokenizerConfig, out: Path, init_from: str | None = None) -> dict:
    """Train the model(s) into `out`, skip if already trained with the same settings; return a summary.

    With `init_from` (fine-tuning), the parent checkpoint's tokenizer is copied instead, byte for byte.
    """
    out.mkdir(parents=True, exist_ok=True)
    summary_path = out / "tokenizer.json"
    settings = {"data": {"train": data.train, "src": data.src_lang, "tgt": data.tgt_lang},
                "tokenizer": cfg.model_dump(mode="json")}
    if init_from:
        settings = {"init_from": init_from, "tokenizer": {"joint": cfg.joint, "vocab_size": cfg.vocab_size}}
    src_model, tgt_model = tokenizer_paths(out, cfg.joint)
    if summary_path.is_file() and src_model.is_file() and tgt_model.is_file():
        previous = json.loads(summary_path.read_text())
        if previous.get("settings") == settings:
            return previous | {"skipped": True}

    if init_from:
        _copy_parent_tokenizer(Path(init_from), cfg, src_model, tgt_model)
    else:
        _train_from_corpus(data, cfg, src_model, tgt_model)
    summary = {"settings": settings, "models": [str(src_model), str(tgt_model)]}
    summary.update(_measure(data, src_model, tgt_model))
    summary_path.write_text(json.dumps(summary, indent=2))
    return summary | {"skipped": False}


def _copy_parent_tokenizer(parent: Path, cfg: TokenizerConfig, src_model: Path, tgt_model: Path) -> None:
    from nmt.checkpoint import load_checkpoint

    payload = load_checkpoint(parent)
    theirs = payload["recipe"]["tokenizer"]
    for key in ("joint", "vocab_size"):
        if theirs.get(key) != getattr(cfg, key):
            raise NmtError(f"tokenizer.{key}: the recipe has {getattr(cfg, key)}, but {parent} was trained "
                           f"with {theirs.get(key)}; fine-tuning keeps the parent's vocabulary")
    for path, side in ((src_model, "src"), (tgt_model, "tgt")):
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(payload["tokenizer"][side].numpy().tobytes())
        tmp.replace(path)


def _train_from_corpus(data: DataConfig, cfg: TokenizerConfig, src_model: Path, tgt_model: Path) -> None:
    corpus = open_corpus(data.train, data.src_lang, data.tgt_lang)
    if cfg.joint:
        _train_one(chain(corpus.side("src"), corpus.side("tgt")), str(corpus), src_model, cfg)
    else:
        _train_one(corpus.side("src"), str(corpus), src_model, cfg)
        _train_one(corpus.side("tgt"), str(corpus), tgt_model, cfg)


def _measure(data: DataConfig, src_model: Path, tgt_model: Path) -> dict:
    """Vocabulary size, pieces per sentence and unknown-piece rate on the dev set."""
    stats = {}
    dev = open_corpus(data.valid, data.src_lang, data.tgt_lang)
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
