"""Checkpoints: one file with everything needed to resume or translate, written atomically,
read with `torch.load(weights_only=True)` so that no pickled code is ever run.

Training writes them; decoding, export, `nmt info` and fine-tuning read them, as a `Checkpoint`
whose recipe is validated once, when it is opened: this module sits below all of them and imports
nothing of theirs."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

import nmt
from nmt.compat import keep_stored_meaning
from nmt.config import Recipe, recipe_from_dict
from nmt.errors import NmtError
from nmt.files import cannot_write, replaced_whole

FORMAT = "nmt-checkpoint-1"
_STEP_FILE = re.compile(r"step_(\d+)\.pt$")


def save_checkpoint(payload: dict, path: Path) -> None:
    """Write to a temporary file in the same folder, flush to disk, then rename over `path`
    (nmt.files.replaced_whole)."""
    with replaced_whole(path, "wb", sync=True) as f:
        torch.save({"format": FORMAT} | payload, f)


def link_checkpoint(source: Path, path: Path) -> None:
    """Make `path` the same checkpoint as `source` (hard link, else copy), atomically."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.unlink(missing_ok=True)
        try:
            os.link(source, tmp)
        except OSError:
            shutil.copyfile(source, tmp)
        tmp.replace(path)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise cannot_write(path, e) from None


def discard_unfinished(folder: Path) -> tuple[int, int]:
    """Remove what saves into `folder` that never finished left: the hidden temporary files a
    checkpoint is written under (`save_checkpoint`, `link_checkpoint`), which a process killed
    mid-save (SIGKILL, the machine's end) leaves, each the size of a checkpoint: regular files,
    as saves write them (anything else there is not theirs). For a run that holds its folder
    (nothing else writes there). Returns (files, bytes) removed."""
    files = size = 0
    for unfinished in [*folder.glob(".*.tmp"), *folder.glob("step_*.shards/.*.tmp")]:
        if unfinished.is_symlink() or not unfinished.is_file():
            continue
        with contextlib.suppress(OSError):
            length = unfinished.stat().st_size
            unfinished.unlink()
            files, size = files + 1, size + length
    return files, size


def shard_folder(path: Path) -> Path:
    """Where the processes of a sharded run keep their shards of checkpoint `path`:
    step_0000100.pt -> step_0000100.shards/ beside it."""
    return path.with_name(f"{path.stem}.shards")


def shard_file(folder: Path, rank: int) -> Path:
    return folder / f"rank_{rank:03d}.pt"


def load_checkpoint(path: Path, map_location: str | torch.device = "cpu", assemble: bool = True,
                    optimizer: bool = True, mapped: bool = False) -> dict:
    """A checkpoint's payload; a sharded one's (train.sharded_checkpoints) with its processes'
    shards put together into whole weights and optimizer state, as an ordinary one holds them
    (unless not `assemble`: then as written, naming its shards; `assembled`, `load_shard`).
    Without `optimizer`, the optimizer's state (and the trained weights beside their average,
    TRAINING_WEIGHTS) is left unread: a reader of the weights then needs a third of a training
    checkpoint's memory under Adam. `mapped` leaves the tensors mapped from
    the file, read only where touched: for a reader that reads each tensor once and keeps none
    (`nmt info`, the exports, averaging), not for weights kept while the file may change."""
    payload = _load(path, map_location, optimizer, mapped)
    if FROZEN_WEIGHTS in payload:
        raise NmtError(f"{path}: the frozen weights of a run's checkpoints, not a checkpoint; "
                       "read the step_*.pt, last.pt or best.pt beside it")
    if FROZEN in payload:
        payload = with_frozen_weights(payload, Path(path), map_location, mapped)
    if SHARDS in payload and assemble:
        payload = assembled(payload, Path(path), map_location, optimizer)
    return payload


def _load_failure(error: Exception) -> str:
    """Why torch.load refused a file, in a few words: torch's weights-only message is a page of
    advice to load the file unsafely, which nmt never does."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(error))  # torch bolds part of it for terminals
    if unsupported := re.search(r"Unsupported global: GLOBAL ([\w.]+)", text):
        return f"it holds a Python object ({unsupported[1]}) besides tensors and plain values, which nmt never unpickles"
    if "WeightsUnpickler error:" in text:  # what the unpickler met, without the advice around it
        text = text.split("WeightsUnpickler error:", 1)[1].split("Check the documentation", 1)[0]
    detail = " ".join(text.split()) or type(error).__name__
    return f"corrupt or truncated? {detail[:200]}"


def checkpoints_inside(directory: Path) -> str:
    """Where a run's folder was named for a checkpoint: the checkpoints it holds, to name one of."""
    found = sorted(directory.glob("*.pt")) + sorted(directory.glob("checkpoints/*.pt"))
    names = [str(f.relative_to(directory)) for f in found]
    return f" (it holds {', '.join(names[:4])}{', ...' if len(names) > 4 else ''})" if names else ""


def _checkpoints_of_recipe(path: Path) -> str:
    """Where a recipe was named for a checkpoint: where its run's checkpoints are, or go."""
    import yaml

    try:
        recipe = yaml.safe_load(path.read_text(encoding="utf-8"))
        folder = run_checkpoints(Path(recipe["output_dir"]))
    except Exception:  # not a recipe nmt reads: the message names the file only
        return ""
    best = folder / "best.pt"
    return f"; its run's best is {best}" if best.is_file() else f"; `nmt train` writes its checkpoints into {folder}"


def require_checkpoint_file(path: Path) -> None:
    """The one-line error where `path` is not a file a checkpoint could be read from."""
    if path.is_dir():
        raise NmtError(f"{path}: a directory, not a checkpoint file{checkpoints_inside(path)}")
    if not path.is_file():
        raise NmtError(f"{path}: checkpoint not found")


def _load(path: Path, map_location: str | torch.device, optimizer: bool = True, mapped: bool = False) -> dict:
    path = Path(path)
    require_checkpoint_file(path)
    if not zipfile.is_zipfile(path):  # torch.save has written zip archives since PyTorch 1.6
        if path.suffix in (".yaml", ".yml"):
            raise NmtError(f"{path}: a recipe, not a checkpoint{_checkpoints_of_recipe(path)}")
        raise NmtError(f"{path}: not a readable nmt checkpoint (not a PyTorch archive: truncated, or another kind of file)")
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True, mmap=True)
    except Exception as e:  # torch raises many types for truncated or foreign files
        raise NmtError(f"{path}: not a readable nmt checkpoint ({_load_failure(e)})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise NmtError(f"{path}: not an nmt checkpoint (format {FORMAT} expected)")
    keep_stored_meaning(payload.get("recipe"))
    # The file is mapped, not read, so that the optimizer's state is read only where it is wanted.
    # Unless `mapped`, what is kept is copied out of the mapping at once: no tensor stays backed by
    # the file, which may be overwritten in place later (a fault, or changed weights, in a reader
    # that kept it).
    copies: dict[int, torch.UntypedStorage] = {}
    return {key: value if mapped else _in_memory(value, copies) for key, value in payload.items()
            if optimizer or key not in ("optimizer", TRAINING_WEIGHTS)}


def _in_memory(value, copies: dict[int, torch.UntypedStorage]):
    """`value` with each tensor mapped from the file copied into memory of its own; tensors that
    share a storage in the file (tied embeddings) share its one copy (`copies`, by the mapped
    storage's address)."""
    if isinstance(value, torch.Tensor):
        if value.device.type != "cpu":
            return value
        storage = value.untyped_storage()
        copy = copies.setdefault(storage.data_ptr(), storage.clone())
        return torch.empty(0, dtype=value.dtype).set_(copy, value.storage_offset(), value.size(), value.stride())
    if isinstance(value, dict):
        return {key: _in_memory(item, copies) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_in_memory(item, copies) for item in value)
    return value


SHARDS = "shards"  # a sharded checkpoint's entry: {"folder": name beside it, "processes": K}
# A run that trains some weights only (LoRA, train.freeze) keeps the others, which never change,
# in one file beside its checkpoints, each of which names it and holds the trained ones alone:
FROZEN = "frozen"  # a checkpoint's entry: {"file": name beside it, "order": every weight's name}
FROZEN_WEIGHTS = "frozen_weights"  # that file's entry: {name: tensor}
# With train.ema_decay a checkpoint's "model" is the weights' average; the trained weights, which
# only resuming reads, lie under this key (nmt.train.weight_average).
TRAINING_WEIGHTS = "training_weights"
_FROZEN_FILE = re.compile(r"frozen_\d+(_\d+)?\.pt$")


def frozen_file(folder: Path, step: int) -> Path:
    """Where a run writes its frozen weights at update `step`: a name no file has yet."""
    path, again = folder / f"frozen_{step:07d}.pt", 1
    while path.exists():
        path, again = folder / f"frozen_{step:07d}_{again}.pt", again + 1
    return path


def save_frozen_weights(weights: dict[str, torch.Tensor], path: Path) -> None:
    save_checkpoint({FROZEN_WEIGHTS: weights}, path)


def with_frozen_weights(payload: dict, path: Path, map_location: str | torch.device = "cpu",
                        mapped: bool = False) -> dict:
    """A checkpoint's payload whose frozen weights lie in the file it names (FROZEN), with
    them put back among its trained ones, in the model's order: what every reader gets."""
    info = payload[FROZEN]
    file = Path(path).parent / info["file"]
    if not file.is_file():
        raise NmtError(f"{path}: its frozen weights {file} are missing (a checkpoint of a run with frozen weights, "
                       f"LoRA or train.freeze, is {Path(path).name} with {info['file']} beside it)")
    frozen = _load(file, map_location, mapped=mapped)[FROZEN_WEIGHTS]
    weights = frozen | payload["model"]
    if missing := [name for name in info["order"] if name not in weights]:
        raise NmtError(f"{path}: {file} does not hold its frozen weight {missing[0]} (another run's file?)")
    whole = {key: value for key, value in payload.items() if key != FROZEN}
    whole["model"] = {name: weights[name] for name in info["order"]}
    return whole


def frozen_reference(path: Path) -> tuple[str, frozenset[str]] | None:
    """The frozen-weights file a checkpoint names and the weights it takes from there, if any
    (the checkpoint's own payload read, mapped: small where weights are frozen)."""
    payload = _load(path, "cpu", optimizer=False, mapped=True)
    if FROZEN not in payload:
        return None
    return payload[FROZEN]["file"], frozenset(payload[FROZEN]["order"]) - set(payload["model"])


def load_shard(path: Path, payload: dict, rank: int, map_location: str | torch.device = "cpu",
               optimizer: bool = True, mapped: bool = False) -> dict:
    """Process `rank`'s shards of the sharded checkpoint `path` (its payload as written):
    {"model": ..., "optimizer": ...}, each tensor that process's first-dimension slice."""
    info = payload[SHARDS]
    file = shard_file(Path(path).parent / info["folder"], rank)
    if not file.is_file():
        raise NmtError(f"{path}: its shard {file} is missing (a sharded checkpoint is {Path(path).name} with the "
                       f"folder {info['folder']}/ beside it)")
    return _load(file, map_location, optimizer, mapped)


def assembled(payload: dict, path: Path, map_location: str | torch.device = "cpu", optimizer: bool = True) -> dict:
    """The shards of FSDP (which splits each tensor along its first dimension, in process order)
    joined again: each weight and each of the optimizer's per-parameter tensors concatenated in
    process order; a scalar (Adam's step count) is the first process's. The shards are read
    mapped, each tensor once, into the joined copies: the whole model is held once, not twice."""
    parts = [load_shard(path, payload, rank, map_location, optimizer, mapped=True)
             for rank in range(payload[SHARDS]["processes"])]
    joined: dict[int, torch.Tensor] = {}  # by the first shard's storage: tied weights stay one tensor

    def join(tensors: list) -> torch.Tensor:
        first = tensors[0]
        if not isinstance(first, torch.Tensor):
            return first
        if first.dim() == 0:
            return first.clone()  # out of the mapping
        key = first.untyped_storage().data_ptr()
        if key not in joined:
            joined[key] = torch.cat(tensors, dim=0)
        return joined[key]

    whole = {k: v for k, v in payload.items() if k != SHARDS}
    whole["model"] = {name: join([part["model"][name] for part in parts]) for name in parts[0]["model"]}
    if TRAINING_WEIGHTS in parts[0]:  # (train.ema_decay: "model" is the average's shards)
        whole[TRAINING_WEIGHTS] = {name: join([part[TRAINING_WEIGHTS][name] for part in parts])
                                   for name in parts[0][TRAINING_WEIGHTS]}
    optimizer = parts[0].get("optimizer")
    if optimizer is not None:
        whole["optimizer"] = {
            "state": {i: {key: join([part["optimizer"]["state"][i][key] for part in parts]) for key in state}
                      for i, state in optimizer["state"].items()},
            "param_groups": optimizer["param_groups"]}
    return whole


def run_checkpoints(out: Path) -> Path:
    """The folder of a run's checkpoints (out: its output_dir)."""
    return out / "checkpoints"


def step_checkpoints(directory: Path) -> list[Path]:
    """`step_*.pt` files in update order."""
    found = [(int(m.group(1)), p) for p in directory.glob("step_*.pt") if (m := _STEP_FILE.search(p.name))]
    return [p for _, p in sorted(found)]


def resumable(directory: Path) -> list[Path]:
    """The checkpoints a run in `directory` resumes from, the first that loads (load_latest):
    last.pt, then the step checkpoints, newest first. Where there is one, a run resumes from it or
    stops with an error, never starting anew."""
    last = directory / "last.pt"
    return ([last] if last.is_file() else []) + step_checkpoints(directory)[::-1]


def load_latest(directory: Path, map_location: str | torch.device = "cpu",
                warn: Callable[[str], None] = lambda message: None, assemble: bool = True) -> tuple[Path, dict] | None:
    """The checkpoint to resume from: `last.pt`, or, when it is missing or damaged (a crash while
    copying, a full disk), the newest step checkpoint that loads, with a warning naming both files.
    None when the folder holds no checkpoint at all; an error when none of them loads."""
    last = directory / "last.pt"
    candidates = resumable(directory)
    if not candidates:
        return None
    problems = []
    for path in candidates:
        try:
            payload = load_checkpoint(path, map_location, assemble)
        except NmtError as e:
            problems.append(str(e))
            continue
        if path != last:
            why = problems[0] if last.is_file() else f"{last}: missing"
            warn(f"resuming from {path} instead of {last} ({why})")
        return path, payload
    raise NmtError(f"{directory}: no checkpoint can be read to resume from ({problems[0]}; "
                   f"{len(problems) - 1} more damaged); move the folder away to start anew")


def prune(directory: Path, keep_last: int) -> None:
    """Keep the newest `keep_last` step checkpoints; a sharded one's folder of shards goes with it,
    unless last.pt or best.pt still refers to it; a file of frozen weights once no checkpoint
    names it."""
    for old in step_checkpoints(directory)[:-keep_last] if keep_last > 0 else []:
        old.unlink(missing_ok=True)
    frozen = [f for f in directory.glob("frozen_*.pt") if _FROZEN_FILE.search(f.name)]
    if frozen:  # a frozen-weights file stays while a checkpoint names it
        named = {reference[0] for p in [*step_checkpoints(directory), directory / "last.pt", directory / "best.pt"]
                 if p.is_file() and (reference := frozen_reference(p))}
        for file in frozen:
            if file.name not in named:
                file.unlink(missing_ok=True)
    folders = [f for f in directory.glob("step_*.shards") if not f.with_suffix(".pt").is_file()]
    if folders:
        kept = set()
        for name in ("last.pt", "best.pt"):
            if (directory / name).is_file():
                kept.add(_load(directory / name, "cpu", optimizer=False).get(SHARDS, {}).get("folder"))
        for folder in folders:
            if folder.name not in kept:
                shutil.rmtree(folder, ignore_errors=True)


def average_checkpoints(paths: list[Path]) -> dict:
    """A checkpoint whose model weights are the mean of `paths`' weights (optimizer state dropped).

    Checkpoints are mapped one at a time and added into a running float64 sum, so memory stays at
    about two models (the sum) and the mean however many are averaged. Tensors shared under several
    names (tied embeddings) stay shared in the result. A file named twice (best.pt is a link to a
    step checkpoint) counts once.
    """
    paths = _distinct(list(paths))
    if not paths:
        raise NmtError("no checkpoints to average")
    first = _merged(load_checkpoint(paths[0], optimizer=False, mapped=True))
    weights = first.pop("model")
    names_of_storage: dict[tuple, list[str]] = {}  # one sum per shared tensor, not per name
    for name, tensor in weights.items():
        if tensor.is_floating_point():
            names_of_storage.setdefault((tensor.data_ptr(), tensor.shape), []).append(name)
    averaged = {name: tensor.clone() for name, tensor in weights.items() if not tensor.is_floating_point()}  # the first's
    dtypes = {names[0]: weights[names[0]].dtype for names in names_of_storage.values()}
    sums = {names[0]: weights[names[0]].double() for names in names_of_storage.values()}
    keys, last = list(weights), first  # names in order, without holding the weights
    progress = first.get("progress")  # the last one's that has any (an imported model has none)
    shape = checkpoint_recipe(first, paths[0]).model
    del weights
    for path in paths[1:]:
        payload = _merged(load_checkpoint(path, optimizer=False, mapped=True))
        _check_averageable(payload, path, shape, first["tokenizer"], paths[0])
        if payload["model"].keys() != set(keys):
            raise NmtError(f"{path}: its weights are not named as those of {paths[0]}; cannot average")
        for name, total in sums.items():
            total += payload["model"][name].double()
        del payload["model"]
        last, progress = payload, payload.get("progress", progress)
    for names in names_of_storage.values():
        mean = (sums.pop(names[0]) / len(paths)).to(dtypes[names[0]])
        averaged.update(dict.fromkeys(names, mean))
    return {
        "recipe": last["recipe"], "model": {name: averaged[name] for name in keys},
        "tokenizer": _in_memory(last["tokenizer"], {}),
        **({"progress": progress} if progress is not None else {}),
        "averaged_from": [str(p) for p in paths],
    }


def _check_averageable(payload: dict, path: Path, shape, tokenizer: dict, first_path: Path) -> None:
    """Weights average into the first checkpoint's model (its model section `shape`, its
    `tokenizer`) only where they have its shape and its tokens mean the same pieces: a run's
    dropout or learning rate may differ (a parent and its fine-tuned child average), its layers
    or vocabularies may not."""
    from nmt.config import MODEL_SHAPE_KEYS

    theirs = checkpoint_recipe(payload, path).model
    for key in MODEL_SHAPE_KEYS:
        if getattr(theirs, key) != getattr(shape, key):
            raise NmtError(f"{path}: model.{key} is {getattr(theirs, key)}, {getattr(shape, key)} in {first_path}; "
                           "cannot average")
    for side in ("src", "tgt"):
        theirs, ours = payload["tokenizer"][side], tokenizer[side]
        if not torch.equal(theirs, ours) and _pieces(theirs) != _pieces(ours):
            raise NmtError(f"{path}: its {side} tokenizer's pieces are not those of {first_path}; cannot average")


def _pieces(proto: torch.Tensor) -> list[str]:
    """A serialized sentencepiece model's pieces, in id order."""
    import sentencepiece as spm

    processor = spm.SentencePieceProcessor(model_proto=proto.numpy().tobytes())
    return [processor.id_to_piece(i) for i in range(processor.get_piece_size())]


def average_into(output: Path, paths: list[Path], last: int = 0, folder: Path | None = None) -> list[Path]:
    """Average `paths` and, with `last`, the last N step checkpoints of `folder` (a checkpoints
    folder or a run's), into `output` (never one of them); each file once (best.pt and last.pt
    are links to step checkpoints); returns the checkpoints averaged."""
    paths = list(paths)
    if last:
        if folder is None:
            raise NmtError("--last needs --dir (the checkpoints folder)")
        if not step_checkpoints(folder) and step_checkpoints(run_checkpoints(folder)):
            folder = run_checkpoints(folder)  # a run's folder
        found = step_checkpoints(folder)
        if len(found) < last:
            raise NmtError(f"{folder}: {len(found)} step checkpoint{'' if len(found) == 1 else 's'}, {last} asked for")
        paths += found[-last:]
    paths = _distinct(paths)
    if _identity(output) in {_identity(p) for p in paths}:
        raise NmtError(f"{output}: would overwrite one of the checkpoints being averaged")
    if output.name in ("last.pt", "best.pt") and step_checkpoints(output.parent):
        raise NmtError(f"{output}: nmt train keeps this file (the checkpoint it resumes from, or its best); "
                       "write the average under another name")
    save_checkpoint(average_checkpoints(paths), output)
    return paths


def _distinct(paths: list[Path]) -> list[Path]:
    """`paths` without a file named twice, by any name (a hard or symbolic link)."""
    seen, kept = set(), []
    for path in paths:
        identity = _identity(path)
        if identity not in seen:
            seen.add(identity)
            kept.append(path)
    return kept


def _identity(path: Path) -> tuple[int, int] | Path:
    """The file `path` names, whatever the name (a hard or symbolic link): its device and inode;
    the path itself where there is no such file."""
    try:
        found = path.stat()
    except OSError:
        return path.resolve()
    return found.st_dev, found.st_ino


def tokenizer_models(payload: dict) -> dict[str, bytes]:
    """The serialized sentencepiece models a checkpoint carries, by side ("src", "tgt")."""
    return {side: payload["tokenizer"][side].numpy().tobytes() for side in ("src", "tgt")}


def count_parameters(state: dict[str, torch.Tensor]) -> int:
    """Distinct parameters of a state dict: tied embeddings appear under several names but count once."""
    seen, total = set(), 0
    for tensor in state.values():
        if tensor.is_floating_point() and tensor.data_ptr() not in seen:
            seen.add(tensor.data_ptr())
            total += tensor.numel()
    return total


def training_origin(payload: dict) -> str:
    """How a checkpoint came to be, for a model card: "update 1200", or the directory it was
    imported from (an import records no progress)."""
    step = payload.get("progress", {}).get("step")
    if step is not None:
        return f"update {step}"
    return f"imported from `{payload['imported_from']}`" if payload.get("imported_from") else "no training recorded"


def best_dev(payload: dict, recipe) -> dict | None:
    """The best validation score a checkpoint's run reached: {"metric", "score", "step"}, or None
    before any validation. best.pt is picked on train.valid_metric's score (BLEU, chrF, COMET), or on
    dev nll, which the training state stores negated (larger is better)."""
    progress = payload.get("progress", {})
    best = progress.get("best_score")
    if best is None:
        return None
    metric = recipe.train.selection_metric
    return {"metric": metric, "score": round(-best if metric == "nll" else best, 4), "step": progress.get("best_step")}


def merge_lora(weights: dict[str, torch.Tensor], scale: float) -> dict[str, torch.Tensor]:
    """The plain weights of a state dict with LoRA's A and B: W + scale · B A, A and B dropped.
    A state dict without them comes back as it is."""
    if not any(key.endswith(".lora_a") for key in weights):
        return weights
    merged = {key: value for key, value in weights.items() if not key.endswith((".lora_a", ".lora_b"))}
    for key in weights:
        if key.endswith(".lora_a"):
            prefix = key[: -len("lora_a")]
            a, b = weights[key].double(), weights[prefix + "lora_b"].double()
            weight = weights[prefix + "weight"]
            merged[prefix + "weight"] = (weight.double() + scale * (b @ a)).to(weight.dtype)
    return merged


def _merged(payload: dict) -> dict:
    """A payload whose LoRA updates (nmt.model.lora) are merged into its weights: an average is
    the mean of the merged models."""
    train = payload.get("recipe", {}).get("train", {})
    rank = train.get("lora_rank", 0)
    if not rank:
        return payload
    return payload | {"model": merge_lora(payload["model"], train.get("lora_alpha", 16.0) / rank)}


@dataclass
class Checkpoint:
    """A checkpoint as its readers use it: its recipe validated once, here (a key added after the
    file was written reads as its default, as it did then), beside the file's contents: `payload`
    holds the weights ("model"), the tokenizer models, the progress and, from a training run, the
    optimizer and RNG states."""

    path: Path  # the file (the first one, for an average)
    recipe: Recipe
    payload: dict

    @property
    def weights(self) -> dict[str, torch.Tensor]:
        """The model's plain weights: LoRA's updates merged in where the run trained some."""
        return merge_lora(self.payload["model"], self.recipe.train.lora_scale)

    def tokenizer_models(self) -> dict[str, bytes]:
        return tokenizer_models(self.payload)


def checkpoint_of(payload: dict, path: Path) -> Checkpoint:
    """A loaded payload with its recipe validated (errors name `path`)."""
    return Checkpoint(Path(path), checkpoint_recipe(payload, path), payload)


def checkpoint_recipe(payload: dict, path: Path) -> Recipe:
    """A checkpoint's recipe (or a CTranslate2 export's, from its info), validated; an error names
    `path`, and the nmt that wrote it where that is not this one (a key a later version added
    reads as unknown here)."""
    try:
        return recipe_from_dict(payload["recipe"], str(path))
    except NmtError as e:
        written_by = payload.get("versions", {}).get("nmt")
        if written_by is None or written_by == nmt.__version__:
            raise
        raise NmtError(f"{e} (written by nmt {written_by}; this is nmt {nmt.__version__})") from None


def open_checkpoint(paths: Path | list[Path], map_location: str | torch.device = "cpu",
                    optimizer: bool = False, mapped: bool = False) -> Checkpoint:
    """One checkpoint, or the mean of several checkpoints' weights, its recipe validated; the
    optimizer's state only if asked for, and the tensors left mapped if asked for (`load_checkpoint`)."""
    paths = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    payload = (average_checkpoints(paths) if len(paths) > 1
               else load_checkpoint(paths[0], map_location, optimizer=optimizer, mapped=mapped))
    return checkpoint_of(payload, paths[0])
