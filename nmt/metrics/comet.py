"""COMET and CometKiwi from a model directory the user already has, through unbabel-comet.

A COMET model directory is what unbabel-comet's download writes: `hparams.yaml` and
`checkpoints/model.ckpt`. Its hparams name the encoder (`pretrained_model`, e.g.
xlm-roberta-large), whose tokenizer and configuration unbabel-comet reads with transformers;
nothing is ever downloaded here: the encoder is taken from a local folder (`pretrained_model`
itself when it is one, else `DIR/encoder/`) or from the Hugging Face cache, with the hub set
offline, and where it is in none of them the error says where to put it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from nmt.errors import NmtError

# unbabel-comet's model classes (`class_identifier` in hparams.yaml) by what they need.
REFERENCE_BASED = {"regression_metric", "unified_metric", "xcomet_metric"}
REFERENCE_FREE = {"referenceless_regression_metric", "unified_metric", "xcomet_metric"}
KINDS = {"comet": REFERENCE_BASED, "cometkiwi": REFERENCE_FREE}


@dataclass(frozen=True)
class CometScores:
    system: float  # unbabel-comet's system_score: the mean of the segments'
    segments: list[float]


def require_comet():
    """unbabel-comet, or a one-line error naming the extra."""
    try:
        import comet
    except ImportError:
        raise NmtError("COMET needs unbabel-comet: pip install 'nmt[comet]'") from None
    return comet


def model_files(directory: Path) -> tuple[Path, dict]:
    """(checkpoint file, hparams) of a COMET model directory, or a one-line error saying what is missing.
    `directory` may also be the checkpoint file itself (DIR/checkpoints/model.ckpt)."""
    directory = Path(directory)
    if directory.is_file():
        checkpoint, directory = directory, directory.parents[1]
    else:
        checkpoint = directory / "checkpoints" / "model.ckpt"
    if not directory.is_dir():
        raise NmtError(f"{directory}: no such COMET model directory")
    hparams_path = directory / "hparams.yaml"
    if not checkpoint.is_file() or not hparams_path.is_file():
        raise NmtError(f"{directory}: not a COMET model directory: expected hparams.yaml and checkpoints/model.ckpt "
                       "(as unbabel-comet's download writes them)")
    try:
        hparams = yaml.safe_load(hparams_path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise NmtError(f"{hparams_path}: not readable YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(hparams, dict) or "class_identifier" not in hparams:
        raise NmtError(f"{hparams_path}: no class_identifier: not a COMET model's hparams")
    return checkpoint, hparams


def check_kind(directory: Path, hparams: dict, kind: str) -> None:
    """A model fit for `kind` (comet: with references; cometkiwi: without), or an error naming the other."""
    identifier = hparams["class_identifier"]
    if identifier in KINDS[kind]:
        return
    if identifier in REFERENCE_FREE:
        raise NmtError(f"{directory}: a quality-estimation model ({identifier}), scored without references: "
                       "use --metric cometkiwi")
    if identifier in REFERENCE_BASED:
        raise NmtError(f"{directory}: a reference-based model ({identifier}): use --metric comet")
    raise NmtError(f"{directory}: a COMET model of type {identifier}, which does not score translations "
                   "(expected one of " + ", ".join(sorted(REFERENCE_BASED | REFERENCE_FREE)) + ")")


def local_encoder(directory: Path, name: str) -> str | None:
    """The encoder folder to read instead of the hub name `name`, or None where the Hugging Face
    cache has it (read there offline); an error where neither has it."""
    for candidate in (Path(name), directory / name, directory / "encoder"):
        if (candidate / "config.json").is_file():
            return None if candidate == Path(name) else str(candidate)
    from huggingface_hub import try_to_load_from_cache

    if isinstance(try_to_load_from_cache(name, "config.json"), str):
        return None
    raise NmtError(f"{directory}: its encoder '{name}' (hparams.yaml: pretrained_model) is not on this machine: "
                   f"save its tokenizer and config (save_pretrained) into {directory / 'encoder'}, "
                   "or into the Hugging Face cache (HF_HOME)")


@contextlib.contextmanager
def _quiet():
    """Lightning's banners and tips go to stderr, never into the scores printed on stdout."""
    loggers = [logging.getLogger(name) for name in ("lightning", "lightning.pytorch", "pytorch_lightning",
                                                     "lightning_fabric", "comet")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
            warnings.simplefilter("ignore")
            yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


class CometScorer:
    """A COMET model loaded once: `score` many times (system and segment scores)."""

    def __init__(self, directory: Path, kind: str = "comet", device: str = "cpu", batch_size: int = 16):
        self.directory, self.kind, self.device, self.batch_size = Path(directory), kind, device, batch_size
        checkpoint, hparams = model_files(self.directory)
        check_kind(self.directory, hparams, kind)
        require_comet()
        encoder = local_encoder(self.directory, str(hparams.get("pretrained_model", "")))
        os.environ["HF_HUB_OFFLINE"] = "1"  # nothing is downloaded, whatever the hparams name
        from comet.models import str2model

        overrides = {"pretrained_model": encoder} if encoder else {}
        with _quiet():
            try:
                # weights_only: a checkpoint holds tensors and plain values; nothing in it is run.
                self.model = str2model[hparams["class_identifier"]].load_from_checkpoint(
                    checkpoint, map_location="cpu", load_pretrained_weights=False, strict=False,
                    local_files_only=True, weights_only=True, **overrides)
            except Exception as e:  # a broken file, or one that is not a COMET checkpoint
                raise NmtError(f"{checkpoint}: not a loadable COMET checkpoint ({type(e).__name__}: "
                               f"{str(e).splitlines()[0] if str(e) else ''})") from None

    def score(self, sources: list[str], hypotheses: list[str], references: list[str] | None = None,
              done: Callable[[int], None] | None = None, per_call: int | None = None) -> CometScores:
        """Scores of `hypotheses` (with `references` for a reference-based model). With `done`, the
        segments go to the model `per_call` at a time (16 batches by default) and `done(n)` hears
        how many are scored after each call; the system score is their mean either way, as
        unbabel-comet's."""
        if self.kind == "comet" and references is None:
            raise NmtError("--metric comet needs references (-r); without them use --metric cometkiwi")
        if not hypotheses:
            return CometScores(0.0, [])
        samples = [{"src": s, "mt": h} for s, h in zip(sources, hypotheses)]
        if self.kind == "comet":
            for sample, reference in zip(samples, references):
                sample["ref"] = reference
        step = len(samples) if done is None else per_call or 16 * self.batch_size
        scores: list[float] = []
        for start in range(0, len(samples), step):
            scores += self._predict(samples[start:start + step])
            if done is not None:
                done(len(scores))
        return CometScores(sum(scores) / len(scores), scores)

    def _predict(self, samples: list[dict]) -> list[float]:
        gpus = 1 if self.device.startswith("cuda") else 0
        with _quiet():
            prediction = self.model.predict(samples, batch_size=self.batch_size, gpus=gpus, progress_bar=False,
                                            num_workers=0)
        return [float(s) for s in prediction.scores]
