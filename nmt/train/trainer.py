"""`nmt train`: build → loop → checkpoint. Resumes from `checkpoints/last.pt` when it exists (or
from the newest intact step checkpoint when `last.pt` is damaged; nmt.train.checkpointing).

Resume is exact: the batches of an epoch depend only on (seed, epoch), and a checkpoint holds
the position inside the epoch, the optimizer, the schedule and the RNG states.

Under torchrun each update's `update_freq` batches are dealt out to the ranks (rank r takes
every K-th; K must divide update_freq), so K processes make the same update as one process with
the same recipe. One update itself is `nmt.train.step.TrainStep`.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.text import Text

from nmt.checkpoint import resumable, run_checkpoints
from nmt.config import Recipe, save_recipe
from nmt.data.buckets import epoch_shapes
from nmt.data.packing import packed_rows_per_batch
from nmt.data.tokenizer import CARRIED, carried_path, load_processor, tokenizer_paths
from nmt.devices import resolve_device, use_threads
from nmt.host_memory import anonymous_memory, keep_freed_memory
from nmt.model.from_weights import unfilled_transformer
from nmt.model.guided_alignment import alignment_heads
from nmt.model.precision import emulated, training_precision
from nmt.model.transformer import Transformer
from nmt.train.checkpointing import RunCheckpoints, TrainingState
from nmt.train import sharding
from nmt.train.distributed import batches_per_rank, join_world, launched_rank
from nmt.train.freezing import frozen_as_configured
from nmt.train.loss_window import LossWindow
from nmt.train.memory_estimate import estimate_memory
from nmt.train.metrics import MetricsLog
from nmt.train.micro_batches import rank_passes
from nmt.train.run_lock import exclusive_run
from nmt.train.step import TrainStep
from nmt.train.stopping import StopSignal, budget_fractions, budget_text, stop_reason
from nmt.train.training_data import TrainingData
from nmt.train.utilization import Utilization
from nmt.train.validate import improved, validate


@dataclass
class TrainResult:
    step: int
    stopped_because: str
    best_score: float | None
    checkpoint: Path


class Trainer:
    def __init__(self, recipe: Recipe, console: Console | None = None):
        self.recipe = recipe
        self.train_cfg = recipe.train
        self.console = console or Console(stderr=True, soft_wrap=True, emoji=False)  # ":x:" stays as written
        use_threads(self.train_cfg.threads, "train.threads")
        self.world, device_name = join_world(self.train_cfg.device)
        self.device = resolve_device(device_name, "train.device")
        # train.precision auto as this device runs it: the step, the memory estimate and MFU see bf16 or fp32
        precision, self.precision_chosen = training_precision(self.train_cfg.precision, self.device)
        self.train_cfg = self.train_cfg.model_copy(update={"precision": precision})
        if self.device.type == "cpu":
            keep_freed_memory()
        torch.manual_seed(self.train_cfg.seed + self.world.rank)  # each rank its own dropout masks

        src_model, tgt_model = tokenizer_paths(recipe.out, recipe.tokenizer.joint)
        self.src_tokenizer, self.tgt_tokenizer = load_processor(src_model), load_processor(tgt_model)
        tokenizer_protos = {side: torch.frombuffer(bytearray(path.read_bytes()), dtype=torch.uint8)
                            for side, path in (("src", src_model), ("tgt", tgt_model))}
        if carried_path(recipe.out).is_file():  # an imported model's own tokenizer, carried on
            tokenizer_protos[CARRIED] = torch.frombuffer(bytearray(carried_path(recipe.out).read_bytes()), dtype=torch.uint8)
        self.data = TrainingData(recipe)
        self.train_data = self.data.pairs  # the current epoch's
        # The recipe's update_freq counts batches over all ranks: each takes its share.
        self.batches_per_rank = batches_per_rank(self.train_cfg.update_freq, self.train_cfg.max_tokens, self.world.size)

        # On a CPU the run shares the machine's memory with the interpreter and the data: the estimate counts them
        self.held_before_model = (anonymous_memory() or 0) if self.device.type == "cpu" else 0
        vocabularies = self.src_tokenizer.get_piece_size(), self.tgt_tokenizer.get_piece_size()
        if self.train_cfg.init_from or resumable(run_checkpoints(recipe.out)):
            # every weight comes from this run's own checkpoint or its parent: none drawn
            self.model = unfilled_transformer(recipe.model, *vocabularies, self.device)
        else:
            self.model = Transformer(recipe.model, *vocabularies).to(self.device)
        self.model.checkpoint_layers = self.train_cfg.checkpoint_activations
        self.model.alignment_heads = alignment_heads(recipe)
        self.frozen = frozen_as_configured(self.model, self.train_cfg)
        self.progress = TrainingState()
        self.batches_this_epoch = 0  # known once the epoch's batches are built
        self.shapes_met: set[tuple[int, int, int]] = set()  # under CUDA graphs: the passes' shapes so far
        self.update = TrainStep(self.model, self.train_cfg, self.device, self.world, self._budget_used, self.log,
                                self.data.alignment_targets)
        # MFU in the log, where the device's peak is known (nmt.train.utilization)
        self.utilization = Utilization.of_run(self.model, vocabularies[1], self.train_cfg, self.device, self.world.size)
        self.checkpoints = RunCheckpoints(recipe, self.model, self.update, self.world, self.device, tokenizer_protos,
                                          lambda message: self.log(message))
        self.metrics = MetricsLog(recipe.out / "metrics.jsonl", recipe.out / "tensorboard") if self.world.is_main else None

    def log(self, message: str | Text) -> None:
        """One line on stderr from the main process, as written: not read as rich markup, where
        a path's square brackets would vanish as tags; a rich Text keeps its styles."""
        if self.world.is_main:
            self.console.print(message, highlight=False, markup=False)

    def resume(self) -> bool:
        progress = self.checkpoints.resume()
        self.progress = progress or self.progress
        return progress is not None

    def train_step(self, group: list[np.ndarray]) -> tuple[torch.Tensor, int]:
        """One update from a group of batches; returns this rank's summed loss and the group's target tokens."""
        return self.update(self.train_data, group)

    def validate_and_save(self) -> Path:
        """Validate on rank 0 (the result is shared), log it, save; best.pt if it is the best yet."""
        result = None
        with self.update.validation_model() as model:  # every rank enters: FSDP gathers the weights
            if self.world.is_main:
                result = validate(model, self.data.valid_sets, self.recipe, self.tgt_tokenizer, self.device)
        result = self.world.share_from_main(result)
        best = improved(self.progress, result, self.train_cfg.selection_metric)
        cut = self._cut_rate_on_plateau()  # before the checkpoint, which keeps the schedule's state
        if self.metrics:
            self.metrics.write("valid", self.progress.step, **result)
        path = self.checkpoints.save(self.progress, best=best)
        shown = ", ".join(f"{k} {v:.3f}" for k, v in result.items())
        self.log(f"step {self.progress.step} valid: {shown}{' (best)' if best else ''} -> {path.name}")
        if cut:
            self.log(cut)
        return path

    def _cut_rate_on_plateau(self) -> str | None:
        """train.lr_plateau: after each `patience` validations in a row without a better dev score,
        the rate times `factor`, from the next update on; what to say of it, if it was cut."""
        plateau, bad, schedule = self.train_cfg.lr_plateau, self.progress.bad_validations, self.update.scheduler
        if not (plateau.factor < 1 and bad and bad % plateau.patience == 0):
            return None
        schedule.cut(plateau.factor)
        return (f"dev {self.train_cfg.selection_metric} not better for {bad} validations: the rate is now "
                f"{schedule.scale:g} × the schedule's (train.lr_plateau)")

    def _budget_used(self, completed_updates: int) -> float:
        """The fraction of the training budget spent: the largest of steps, wall time and epochs."""
        return max(budget_fractions(self.train_cfg, self.progress, completed_updates, self.batches_this_epoch).values())

    def run(self, show_progress: bool = True) -> TrainResult:
        finished = False
        try:
            result = self._run(show_progress and self.world.is_main)
            finished = True
            return result
        finally:
            if self.metrics:
                self.metrics.close(quiet=not finished)
            # The DDP wrapper holds the process group and sits in a reference cycle: left to interpreter
            # shutdown, gloo's threads can be torn down too late and abort the process. One process
            # has no group, and skips the collection (about 0.4 s in a process holding many objects).
            self.update.forward = self.model
            if self.world.distributed:
                gc.collect()
            self.world.close(together=finished)

    def _run(self, show_progress: bool) -> TrainResult:
        """Epochs of updates until a budget, a signal or patience ends the run. On any stop the
        model is validated and saved, unless that was just done; on a signal, saved only."""
        self._start()
        cfg, p = self.train_cfg, self.progress
        if (stop := stop_reason(cfg, p)) is not None:
            self.log(f"nothing to do: already stopped by {stop} at step {p.step}")
            return TrainResult(p.step, stop, p.best_score, self.checkpoints.folder / "last.pt")
        with StopSignal() as signal, self._progress_bar(show_progress) as bar:
            window, clock, epoch = LossWindow(self.device), time.perf_counter(), None
            validated = saved = False  # the model as it stands now: validated, saved
            while stop is None:
                if epoch != p.epoch:
                    batches, epoch = self._epoch_batches(), p.epoch
                if p.batch_in_epoch >= len(batches):  # the epoch's end
                    p.epoch, p.batch_in_epoch, saved = p.epoch + 1, 0, False
                    stop = stop_reason(cfg, p)
                    continue
                group = batches[p.batch_in_epoch:p.batch_in_epoch + cfg.update_freq]
                flops = self.utilization.update_flops(self.train_data, group) if self.utilization else 0.0
                window.add(*self.train_step(group), self.update.alignment_loss, flops)
                p.batch_in_epoch, p.step = p.batch_in_epoch + len(group), p.step + 1
                validated = saved = self._after_update(bar, window)
                clock, signalled = self._advance_clock(clock, signal)
                stop = stop_reason(cfg, p, signalled, signal.received)
            bar.update(bar.task_ids[0], **self._budget_shown())  # with the last update's time
            if not (validated or stop.startswith("signal")):
                self._validate_showing(bar)  # the final model competes for best.pt
            elif not saved:
                self.checkpoints.save(p)
        best = "none" if p.best_score is None else f"{abs(p.best_score):.3f}"
        self.log(f"stopped by {stop} at step {p.step}; best dev {cfg.selection_metric} {best} at step {p.best_step}")
        return TrainResult(p.step, stop, p.best_score, self.checkpoints.folder / "last.pt")

    def _start(self) -> None:
        """Resume, or start from a parent (fine-tuning) or from scratch; say which, and with what batch."""
        cfg = self.train_cfg
        started = self.checkpoints.start()  # this run's own state, or a continued parent's
        self.progress = started or self.progress
        passes = self.update.micro_batches
        effective = f"{cfg.update_freq} × {cfg.max_tokens} tokens per update"
        if self.world.distributed:
            effective += f" ({self.world.size} processes × {self.batches_per_rank} batches)"
        effective += f" in {passes} pass{'es' if passes > 1 else ''}" + (" each" if self.world.distributed else "")
        effective += ", compiled" if self.update.compiled else ""
        if cfg.pack_width:
            effective += f", packed into {packed_rows_per_batch(cfg.max_tokens, cfg.pack_width)} rows of {cfg.pack_width} per batch"
        if self.precision_chosen:
            self.log(self.precision_chosen)
        elif emulated(cfg.precision, self.device):
            self.log(f"warning: train.precision={cfg.precision} on a CPU without {cfg.precision} arithmetic: "
                     "slower than fp32 (train.precision auto chooses for this CPU)")
        summary = (f"{self.recipe.output_dir}: {self.model.num_parameters():,} parameters, {len(self.train_data):,} "
                   f"training pairs, device {self.device}, {effective}"
                   + (f", resumed at step {self.progress.step}" if self.checkpoints.resumed else ""))
        self.log(Text.assemble(("nmt train", "bold"), " ", summary))
        if self.frozen:
            what = f"LoRA rank {cfg.lora_rank} on {', '.join(cfg.lora_targets)}" if cfg.lora_rank else ", ".join(cfg.freeze)
            self.log(f"frozen ({what}): {self.frozen[0]:,} of {self.frozen[1]:,} parameters")
        if self.update.average:
            self.log(f"averaging the weights (train.ema_decay {cfg.ema_decay:g}): validation, best.pt and every "
                     "checkpoint's weights are their exponential moving average")
        if cfg.sharded_checkpoints and not self.update.sharded:
            self.log("note: train.sharded_checkpoints: this run is not sharded (train.parallel fsdp under torchrun); "
                     "its checkpoints are whole")
        if self.update.sharded:
            held = sharding.local_parameters(self.model)
            self.log(f"sharded (train.parallel fsdp): each of {self.world.size} processes holds {held:,} of "
                     f"{self.model.num_parameters():,} parameters, their gradients and Adam's moments")
        if self.world.is_main or self.update.sharded:  # the probe's forward pass gathers shards on every rank
            tokens_per_pass = cfg.max_tokens * self.batches_per_rank // passes
            memory = estimate_memory(self.model, cfg, self.device, tokens_per_pass,
                                     self.update.master_weights is not None, shards=self.world.size if self.update.sharded else 1,
                                     compiled=self.update.compiled, process=self.held_before_model)
            self.log(("warning: " if memory.fits is False else "") + memory.describe())

    def _progress_bar(self, show: bool) -> Progress:
        """The bar of the budget spent: of max_minutes or max_epochs where one of them ends training
        first (a 12-minute run's bar and time left are those of its 12 minutes, not of max_steps)."""
        columns = [TextColumn("[progress.description]{task.description}"), TextColumn("{task.fields[budget]}"),
                   BarColumn(), TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[status]}")]
        bar = Progress(*columns, console=self.console, disable=not show)
        bar.add_task("training", total=1.0, status="", **self._budget_shown())
        return bar

    def _budget_shown(self) -> dict:
        """The progress bar's fraction done and its text (nmt.train.stopping.budget_text)."""
        used = budget_fractions(self.train_cfg, self.progress, self.progress.step, self.batches_this_epoch)
        return {"completed": min(1.0, max(used.values())), "budget": budget_text(self.train_cfg, self.progress, used)}

    def _epoch_batches(self) -> list[np.ndarray]:
        self.train_data, batches = self.data.epoch(self.progress.epoch)
        self.batches_this_epoch = len(batches)
        if self.update.shape_buckets:
            self._say_epoch_shapes(batches)
        return batches

    def _say_epoch_shapes(self, batches: list[np.ndarray]) -> None:
        """Under CUDA graphs: the shapes this epoch's passes take, and how many this process meets
        for the first time (a resumed run records its graphs again). Each new one runs eagerly at its
        first pass and is recorded at its second, both slower than a replay."""
        freq = self.train_cfg.update_freq
        passes = [run for start in range(0, len(batches), freq)
                  for run in rank_passes(batches[start:start + freq], 0, 1, self.update.micro_batches)[0]]
        census = epoch_shapes(self.train_data, passes, self.train_cfg.max_tokens)
        new = census["distinct"] - self.shapes_met
        self.shapes_met |= census["distinct"]
        self.log(f"CUDA graphs: epoch {self.progress.epoch + 1}'s {census['passes']:,} passes take {census['shapes']} "
                 f"shapes, {len(new)} new to this process (a new shape's first pass runs eagerly, its second is recorded); "
                 f"{100 * census['target_padding_fraction']:.1f} % of target positions are padding")

    def _after_update(self, bar: Progress, window: LossWindow) -> bool:
        """Between two updates: the progress bar, the log and, on schedule, validation and a
        checkpoint; whether it validated."""
        cfg, p = self.train_cfg, self.progress
        task = bar.task_ids[0]
        bar.update(task, **self._budget_shown())
        if p.step % cfg.log_every == 0 or p.step == cfg.max_steps:
            loss_sum, tokens, seconds = window.read(self.world)
            stats = {"loss": loss_sum / tokens, "lr": self.update.scheduler.get_last_lr()[0],
                     "tgt_tokens_per_s": tokens / seconds, "epoch": p.epoch}
            if cfg.guided_alignment.active:  # per target token, unweighted
                stats["alignment_loss"] = window.last_alignment_loss / tokens
            if self.utilization:
                stats["mfu"] = self.utilization.mfu(window.last_flops, seconds)
            if self.metrics:
                self.metrics.write("train", p.step, **stats)
            status = f"loss {stats['loss']:.3f} lr {stats['lr']:.2e} {stats['tgt_tokens_per_s']:.0f} tok/s"
            if "alignment_loss" in stats:
                status += f" alignment {stats['alignment_loss']:.3f}"
            if "mfu" in stats:
                status += f" MFU {100 * stats['mfu']:.1f} %"
            bar.update(task, status=status)
            if bar.disable:
                self.log(f"step {p.step}: {status}")
        if p.step % cfg.valid_every == 0 or p.step == cfg.max_steps:
            self._validate_showing(bar)
            window.restart()  # validation time is not training speed
            return True
        return False

    def _validate_showing(self, bar: Progress) -> None:
        """validate_and_save, the bar saying so meanwhile (tens of seconds on a CPU, the bar standing still)."""
        task, training_status = bar.task_ids[0], bar.tasks[0].fields["status"]
        bar.update(task, status=self._validating())
        bar.refresh()  # drawn now, however short the validation
        self.validate_and_save()
        bar.update(task, status=training_status)

    def _validating(self) -> str:
        """What the bar says while the model is validated."""
        sets, cfg = self.data.valid_sets, self.train_cfg
        what = f"validating: loss on {sum(len(s.pairs) for s in sets):,} dev pairs"
        if cfg.valid_bleu_sentences > 0:
            what += f", {cfg.valid_metric} of {sum(len(s.references) for s in sets):,} translations"
        return what

    def _advance_clock(self, clock: float, signal: StopSignal) -> tuple[float, bool]:
        """Add this update's wall time. Ranks' clocks differ: all take the slowest one's time (so they
        agree on the cool-down rate and stop together), and a signal seen by one stops them all."""
        p = self.progress
        now = time.perf_counter()
        p.elapsed_seconds += now - clock
        p.elapsed_seconds, signalled = self.world.max([p.elapsed_seconds, float(signal.received is not None)])
        return now, bool(signalled)


def train(recipe: Recipe, console: Console | None = None, show_progress: bool = True) -> TrainResult:
    """Train `recipe` (one process of a torchrun group, or the only one), its recipe kept beside
    its checkpoints as recipe.yaml; one run per output directory at a time."""
    recipe.out.mkdir(parents=True, exist_ok=True)
    with exclusive_run(recipe.out):
        if launched_rank() == 0:  # under torchrun, one process writes
            save_recipe(recipe, recipe.out / "recipe.yaml")
        return Trainer(recipe, console).run(show_progress)
