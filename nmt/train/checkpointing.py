"""A training run's checkpoints: where it stands (`TrainingState`), saving it with every rank's
RNG state, resuming it exactly, and a fine-tuning run's start from its parent's weights."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from rich.text import Text

import nmt
from nmt.checkpoint import (FROZEN, SHARDS, assembled, checkpoint_of, discard_unfinished, frozen_file, frozen_reference,
                            link_checkpoint, load_latest, load_shard, open_checkpoint, prune, require_checkpoint_file,
                            resumable, run_checkpoints, save_checkpoint, save_frozen_weights, shard_file, shard_folder)
from nmt.config import MODEL_SHAPE_KEYS, Recipe, changed_keys, recipe_to_dict
from nmt.errors import NmtError
from nmt.model.transformer import Transformer
from nmt.train.distributed import World
from nmt.train.step import TrainStep


def check_parent(recipe: Recipe) -> None:
    """A fine-tuning run's parent (train.init_from), checked without reading it: not in the run's
    own checkpoints (which would change it), and there where the run does not resume its own.
    `nmt train --nproc` checks it before it starts the processes, each of which would say it."""
    parent = recipe.train.init_from
    if not parent:
        return
    folder = run_checkpoints(recipe.out)
    if Path(parent).resolve().parent == folder.resolve():
        raise NmtError(f"train.init_from={parent} lies in this run's own checkpoints; "
                       "fine-tune into another output_dir, so that the parent run is kept as it is")
    if not resumable(folder):
        require_checkpoint_file(Path(parent))


# what a checkpoint needs besides its weights for training to go on from it exactly
RESUMED_STATE = ("optimizer", "scheduler", "progress", "rng")


@dataclass
class TrainingState:
    """Where training stands; saved in every checkpoint."""

    step: int = 0  # updates done
    epoch: int = 0
    batch_in_epoch: int = 0  # batches of `epoch` already trained on (by all ranks together)
    best_score: float | None = None
    best_step: int = 0
    bad_validations: int = 0  # since the last improvement
    elapsed_seconds: float = 0.0  # wall time spent training (validation included), summed over resumes


def _refusal(write: Callable[[], None]) -> str | None:
    """write()'s one-line error (a write the system refused: nmt.files.cannot_write), or None."""
    try:
        write()
    except NmtError as e:
        return str(e)
    return None


class RunCheckpoints:
    """`checkpoints/` of one run: step_N.pt files, last.pt and best.pt links to them, the oldest
    pruned. What a checkpoint holds: the recipe, weights (with train.ema_decay their average, and
    the trained weights apart), optimizer, schedule and scaler, the training state, every rank's
    RNG state, both tokenizers and the versions that wrote it."""

    def __init__(self, recipe: Recipe, model: Transformer, update: TrainStep, world: World, device: torch.device,
                 tokenizer_protos: dict, log: Callable[[str], None]):
        self.recipe, self.model, self.update, self.world, self.device = recipe, model, update, world, device
        self.tokenizer_protos, self.log = tokenizer_protos, log
        self.folder = run_checkpoints(recipe.out)
        self.resumed = False  # set by start(): whether this run's own checkpoint was resumed
        # (file name, frozen weights' names) of the frozen-weights file this run's checkpoints name
        self._frozen_written: tuple[str, frozenset[str]] | None = None

    def _rng_state(self) -> dict:
        rng = {"torch": torch.get_rng_state()}
        if self.device.type == "cuda":
            rng["cuda"] = torch.cuda.get_rng_state(self.device)
        return rng

    @property
    def sharded(self) -> bool:
        """Whether each process writes its own shards (train.sharded_checkpoints under FSDP)."""
        return self.update.sharded and self.recipe.train.sharded_checkpoints

    def save(self, progress: TrainingState, best: bool = False) -> Path:
        """Rank 0 writes; every rank takes part (their RNG states are saved too) and waits for it.
        Sharded (train.sharded_checkpoints): each rank first writes its shards into step_N.shards/,
        then rank 0 the rest into step_N.pt, which names them. A write the system refuses (a full
        disk) stops every rank with the same one-line error, which says where training resumes."""
        rng_by_rank = self.world.gather_objects(self._rng_state())
        path = self.folder / f"step_{progress.step:07d}.pt"
        if self.sharded:
            shard = shard_file(shard_folder(path), self.world.rank)
            refused = _refusal(lambda: save_checkpoint(self.update.local_state(), shard))
            # every shard is written before the checkpoint that names them
            refused = next(filter(None, self.world.gather_objects(refused)), None)
            if refused:  # the shards written go: they make no checkpoint
                shard.unlink(missing_ok=True)
                self.world.barrier()
                if self.world.is_main:
                    with contextlib.suppress(OSError):
                        shard.parent.rmdir()
                self._stop_if_refused(refused, progress)
            whole = {SHARDS: {"folder": shard_folder(path).name, "processes": self.world.size}}
        else:  # every rank takes part: FSDP gathers
            whole = {**self.update.model_state(), "optimizer": self.update.optimizer_state()}
        refused = _refusal(lambda: self._write(path, whole, progress, rng_by_rank, best)) if self.world.is_main else None
        self._stop_if_refused(self.world.share_from_main(refused), progress)  # (every rank waits for rank 0 here)
        return path

    def _write(self, path: Path, whole: dict, progress: TrainingState, rng_by_rank: list, best: bool) -> None:
        """Rank 0's part of `save`: the checkpoint, then last.pt and best.pt made the same file."""
        if not self.sharded and (frozen := self.frozen_names()):
            whole = self._frozen_apart(whole, frozen, progress.step)
        payload = {
            "recipe": recipe_to_dict(self.recipe),
            **whole,  # the weights and the optimizer, or where their shards are
            **self.update.schedule_state(),
            "progress": asdict(progress),
            "rng": rng_by_rank[0] | {"ranks": rng_by_rank},
            "tokenizer": self.tokenizer_protos,
            "versions": {"nmt": nmt.__version__, "torch": str(torch.__version__)},  # plain str: weights_only loads it
        }
        save_checkpoint(payload, path)
        link_checkpoint(path, self.folder / "last.pt")
        if best:
            link_checkpoint(path, self.folder / "best.pt")
        prune(self.folder, self.recipe.train.keep_last)

    def _stop_if_refused(self, refused: str | None, progress: TrainingState) -> None:
        if refused:
            resumes = "its last checkpoint (last.pt)" if (self.folder / "last.pt").exists() else "the start"
            raise NmtError(f"{refused}; training stopped at step {progress.step}, and `nmt train` resumes it from "
                           f"{resumes}")

    def frozen_names(self) -> frozenset[str]:
        """The state-dict names of the weights this run does not train (LoRA, train.freeze)."""
        return frozenset(name for name, parameter in self.model.named_parameters(remove_duplicate=False)
                         if not parameter.requires_grad)

    def _frozen_apart(self, whole: dict, frozen: frozenset[str], step: int) -> dict:
        """The checkpoint's weights without the frozen ones, which never change: those go into one
        file beside the checkpoints (written once, before the first checkpoint that names it, and
        again only if another set of weights is frozen, as a resumed run may), so that a LoRA
        checkpoint holds its adapters and their optimizer state alone."""
        weights = whole["model"]
        if self._frozen_written is None or self._frozen_written[1] != frozen:
            file = frozen_file(self.folder, step)
            save_frozen_weights({name: weights[name] for name in weights if name in frozen}, file)
            self._frozen_written = (file.name, frozen)
        trained = {name: tensor for name, tensor in weights.items() if name not in frozen}
        return whole | {"model": trained, FROZEN: {"file": self._frozen_written[0], "order": list(weights)}}

    def start(self) -> TrainingState | None:
        """Resume the run, or start it from its parent (fine-tuning, said in the log) or from
        scratch; returns the training state resumed, if any."""
        parent = self.recipe.train.init_from
        check_parent(self.recipe)
        progress = self.resume()
        self.resumed = progress is not None
        if progress is None and parent:
            progress = self.init_from_parent()
            self.log(f"fine-tuning from {parent}" + (f", its optimizer and schedule continued from update "
                                                     f"{progress.step}" if progress else ""))
        return progress

    def resume(self) -> TrainingState | None:
        """The newest intact checkpoint's weights, optimizer and RNG states loaded; its training
        state, or None where the run has none."""
        def warn(message: str) -> None:
            self.log(Text.assemble(("warning:", "yellow"), " ", message))

        if self.world.is_main and (unfinished := discard_unfinished(self.folder))[0]:
            files, size = unfinished
            self.log(Text.assemble(("note:", "yellow"), " ", f"{self.folder}: removed {files} unfinished "
                                   f"checkpoint file{'s' * (files > 1)} ({size / 1e6:,.1f} MB) of a save that was cut off"))
        found = load_latest(self.folder, self.device, warn, assemble=False)
        if found is None:
            return None
        path, payload = found
        self._frozen_written = frozen_reference(path)  # named again by the checkpoints to come while they stay frozen
        shards = payload.get(SHARDS)
        # sharded as it was written, by as many processes: each reads only its own shards
        own_shards = shards is not None and self.update.sharded and shards["processes"] == self.world.size
        if shards is not None and not own_shards:
            payload = assembled(payload, path, self.device)
        if not own_shards and (missing := [key for key in RESUMED_STATE if key not in payload]):
            raise NmtError(f"{path}: no training state to resume from (no {', '.join(missing)}: an averaged, imported or "
                           f"exported checkpoint, not one nmt train wrote); move it out of {self.folder}, and nmt train "
                           "resumes from the newest step checkpoint there")
        saved = recipe_to_dict(checkpoint_of(payload, path).recipe)  # defaults filled
        wanted = recipe_to_dict(self.recipe)
        changed = [f"{k}: {saved['model'].get(k)} -> {v}" for k, v in wanted["model"].items()
                   if saved["model"].get(k) != v]
        if changed:
            raise NmtError(f"{path}: recipe's model differs from the checkpoint's ({'; '.join(changed)}); "
                           "use another output_dir or the checkpoint's settings")
        for side, proto in self.tokenizer_protos.items():
            if not torch.equal(proto, payload["tokenizer"][side].cpu()):
                raise NmtError(f"{path}: trained with another tokenizer than the one now in {self.recipe.out} "
                               "(retrained since); use another output_dir, or the tokenizer it was trained with")
        if settings := changed_settings(saved, wanted):
            self.log(Text.assemble(("note:", "yellow"), " ", f"{path}: resumed with the recipe changed: {settings}"))
        shard = load_shard(path, payload, self.world.rank, self.device) if own_shards else None
        try:
            if own_shards:
                notes = self.update.load_local_state(shard)
            else:
                notes = self.update.load_weights(payload)
        except (RuntimeError, NmtError) as e:
            raise NmtError(f"{path}: weights do not fit the model: {str(e).splitlines()[0]}") from None
        notes += self.update.load_schedule_state(payload) if own_shards else self.update.load_state_dict(payload)
        if own_shards:
            self.log(f"{path}: each process read its own shards ({shards['folder']}/)")
        for note in notes:
            self.log(Text.assemble(("note:", "yellow"), " ", f"{path}: {note}"))
        progress = TrainingState(**payload["progress"])
        ranks = payload["rng"].get("ranks", [payload["rng"]])
        if len(ranks) == self.world.size:  # same number of processes: continue each RNG exactly
            rng = ranks[self.world.rank]
            torch.set_rng_state(rng["torch"].cpu())
            if "cuda" in rng and self.device.type == "cuda":
                torch.cuda.set_rng_state(rng["cuda"].cpu(), self.device)
        else:  # another number of processes: fresh, but still reproducible, dropout masks
            torch.manual_seed(self.recipe.train.seed + 1000 * progress.step + self.world.rank)
        return progress

    def init_from_parent(self) -> TrainingState | None:
        """Fine-tuning: the parent's weights; optimizer, schedule and progress stay fresh, unless
        train.init_from_continues: then the parent's optimizer and update count too (returned)."""
        parent = Path(self.recipe.train.init_from)
        # To the CPU: the tokenizers are compared with ours there; load_state_dict copies the weights over,
        # so they are read mapped, once, unless the optimizer continues (it keeps the tensors it is given).
        continues = self.recipe.train.init_from_continues
        loaded = open_checkpoint(parent, map_location="cpu", optimizer=continues, mapped=not continues)
        payload, theirs, ours = loaded.payload, loaded.recipe.model, self.recipe.model
        picks = {f"{side}_layers": getattr(self.recipe.train, f"init_{side}_layers") for side in ("encoder", "decoder")}
        for key, picked in picks.items():
            if picked is not None and max(picked) >= getattr(theirs, key):
                raise NmtError(f"train.init_{key} {picked}: {parent} has {getattr(theirs, key)} "
                               f"{key.replace('_', ' ')} (0-based)")
        for key in MODEL_SHAPE_KEYS:
            if picks.get(key) is None and getattr(theirs, key) != getattr(ours, key):
                raise NmtError(f"model.{key}: the recipe has {getattr(ours, key)}, but {parent} has "
                               f"{getattr(theirs, key)}; fine-tuning needs the parent's model shape")
        for side, proto in self.tokenizer_protos.items():
            if not torch.equal(proto, payload["tokenizer"][side]):
                raise NmtError(f"{self.recipe.out}: its tokenizer is not the one of {parent} "
                               "(run `nmt tokenizer` and `nmt prepare` with train.init_from set)")
        if self.recipe.train.init_from_continues:
            if "optimizer" not in payload or "progress" not in payload:
                raise NmtError(f"train.init_from_continues: {parent} has no optimizer state to continue (an averaged "
                               "or imported checkpoint); continue from a step checkpoint, or leave the key out")
            done = payload["progress"]["step"]
            if self.recipe.train.max_steps <= done:
                raise NmtError(f"train.max_steps={self.recipe.train.max_steps}: {parent} has made {done} updates "
                               "already; with train.init_from_continues, max_steps counts from the parent's start")
        adapted = any(key.endswith(".lora_a") for key in self.model.state_dict())
        weights = payload["model"] if adapted else loaded.weights  # a LoRA parent merged for a plain child
        missing, unexpected = self.update.load_model_state(picked_layers(weights, picks), strict=False)
        new_adapters = [key for key in missing if key.endswith((".lora_a", ".lora_b"))]
        if unexpected or len(new_adapters) != len(missing):  # only this run's new LoRA updates may be missing
            raise NmtError(f"{parent}: its weights do not fit this model (missing {sorted(set(missing) - set(new_adapters))[:3]}, "
                           f"unexpected {sorted(unexpected)[:3]})")
        if not self.recipe.train.init_from_continues:
            return None
        for note in self.update.load_state_dict(payload):
            self.log(Text.assemble(("note:", "yellow"), " ", f"{parent}: {note}"))
        return TrainingState(step=done, elapsed_seconds=payload["progress"].get("elapsed_seconds", 0.0))


def picked_layers(weights: dict[str, torch.Tensor], picks: dict[str, list[int] | None]) -> dict[str, torch.Tensor]:
    """A parent's weights with only the layers picked of each stack ("encoder_layers": [0, 3], say),
    renumbered in that order; a stack picked as None stays whole."""
    kept = {}
    for name, tensor in weights.items():
        stack, _, rest = name.partition(".")
        picked = picks.get(stack)
        if picked is None:
            kept[name] = tensor
            continue
        layer, _, inner = rest.partition(".")
        if int(layer) in picked:
            kept[f"{stack}.{picked.index(int(layer))}.{inner}"] = tensor
    return kept


def changed_settings(saved: dict, wanted: dict, shown: int = 8) -> str:
    """The recipe keys whose values differ between a checkpoint's recipe and the one resuming it
    ("train.lr 0.001 -> 0.002, ..."; at most `shown`, then how many more), "" where none do.
    The run's own folder (output_dir) is left out: moving a run is not changing it."""
    changes = [change for change in changed_keys(saved, wanted) if not change.startswith("output_dir ")]
    more = f", and {len(changes) - shown} more" if len(changes) > shown else ""
    return ", ".join(changes[:shown]) + more
