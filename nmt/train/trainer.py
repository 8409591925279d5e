"""`nmt train`: build → loop → checkpoint. Resumes from `checkpoints/last.pt` when it exists (or
from the newest intact step checkpoint when `last.pt` is damaged).

Resume is exact: the batches of an epoch depend only on (seed, epoch), and a checkpoint holds
the position inside the epoch, the optimizer, the schedule and the RNG states.

Under torchrun each update's `update_freq` batches are dealt out to the ranks (rank r takes
every K-th; K must divide update_freq), so K processes make the same update as one process with
the same recipe. One update itself is `nmt.train.step.TrainStep`.
"""

from __future__ import annotations

import gc
import math
import signal
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

import nmt
from nmt.config import MODEL_SHAPE_KEYS, Recipe, recipe_to_dict
from nmt.data.batching import epoch_batches
from nmt.data.corpus import open_corpus
from nmt.data.prepare import corpus_sizes, data_dir
from nmt.data.sampling import epoch_selection
from nmt.data.shards import ParallelShards
from nmt.data.tokenizer import load_processor, tokenizer_paths
from nmt.errors import NmtError
from nmt.model.transformer import Transformer
from nmt.checkpoint import link_checkpoint, load_checkpoint, load_latest, prune, save_checkpoint
from nmt.train.distributed import batches_per_rank, join_world
from nmt.host_memory import keep_freed_memory
from nmt.train.metrics import MetricsLog
from nmt.train.run_lock import exclusive_run
from nmt.train.step import TrainStep
from nmt.train.validate import dev_bleu, dev_loss


@dataclass
class ValidSet:
    label: str  # the direction (en-de) with several, else ""
    pairs: ParallelShards
    references: list[str]  # the first valid_bleu_sentences target lines, for BLEU


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


@dataclass
class TrainResult:
    step: int
    stopped_because: str
    best_score: float | None
    checkpoint: Path


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise NmtError(f"train.device={name}: CUDA is not available on this machine")
    return torch.device(name)


class StopSignal:
    """SIGINT/SIGTERM end training after the current update, with a checkpoint."""

    def __init__(self):
        self.received: str | None = None
        self._previous = {}

    def __enter__(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, _frame):
        self.received = signal.Signals(signum).name

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


class Trainer:
    def __init__(self, recipe: Recipe, console: Console | None = None):
        self.recipe = recipe
        self.train_cfg = recipe.train
        self.console = console or Console(stderr=True, soft_wrap=True)
        self.ckpt_dir = recipe.out / "checkpoints"
        if self.train_cfg.threads:
            torch.set_num_threads(self.train_cfg.threads)
        self.world, device_name = join_world(self.train_cfg.device)
        self.device = resolve_device(device_name)
        if self.device.type == "cpu":
            keep_freed_memory()
        torch.manual_seed(self.train_cfg.seed + self.world.rank)  # each rank its own dropout masks

        src_model, tgt_model = tokenizer_paths(recipe.out, recipe.tokenizer.joint)
        self.src_tokenizer, self.tgt_tokenizer = load_processor(src_model), load_processor(tgt_model)
        self.tokenizer_protos = {
            "src": torch.frombuffer(bytearray(src_model.read_bytes()), dtype=torch.uint8),
            "tgt": torch.frombuffer(bytearray(tgt_model.read_bytes()), dtype=torch.uint8),
        }
        shards = data_dir(recipe.out)
        if not (shards / "train.src.idx").is_file():
            raise NmtError(f"{shards}: no prepared data (run `nmt prepare` first)")
        self.train_data = ParallelShards(shards, "train")
        self.corpus_sizes = corpus_sizes(recipe.out)  # None: one training corpus
        if self.corpus_sizes and len(self.corpus_sizes) != len(recipe.data.corpora()):
            raise NmtError(f"{shards}: prepared from {len(self.corpus_sizes)} corpora, but data.train lists "
                           f"{len(recipe.data.corpora())} (run `nmt prepare` again)")
        self.train_samples = []  # subword regularization: one sampled segmentation per epoch, in turn
        if recipe.data.subword_sampling_alpha > 0:
            names = [f"train.s{k}" for k in range(recipe.data.subword_samples)]
            if not all((shards / f"{name}.src.idx").is_file() for name in names):
                raise NmtError(f"{shards}: no sampled segmentations for data.subword_sampling_alpha "
                               "(run `nmt prepare` again)")
            self.train_samples = [ParallelShards(shards, name) for name in names]
        if len(self.train_data) == 0:
            raise NmtError(f"{shards}: the training split is empty after cleaning")
        self.valid_sets = self._valid_sets(shards)

        # The recipe's update_freq counts batches over all ranks: each takes its share.
        self.batches_per_rank = batches_per_rank(self.train_cfg.update_freq, self.train_cfg.max_tokens, self.world.size)

        self.model = Transformer(recipe.model, self.src_tokenizer.get_piece_size(),
                                 self.tgt_tokenizer.get_piece_size()).to(self.device)
        self.progress = TrainingState()
        self.batches_this_epoch = 0  # known once the epoch's batches are built
        self.step = TrainStep(self.model, self.train_cfg, self.device, self.world, self._budget_used)
        self.metrics = MetricsLog(recipe.out / "metrics.jsonl", recipe.out / "tensorboard") if self.world.is_main else None

    def log(self, message: str) -> None:
        if self.world.is_main:
            self.console.print(message, highlight=False)

    # --- checkpoints ---------------------------------------------------------------------------
    def _rng_state(self) -> dict:
        rng = {"torch": torch.get_rng_state()}
        if self.device.type == "cuda":
            rng["cuda"] = torch.cuda.get_rng_state(self.device)
        return rng

    def _payload(self, rng_by_rank: list[dict]) -> dict:
        return {
            "recipe": recipe_to_dict(self.recipe),
            "model": self.model.state_dict(),
            **self.step.state_dict(),  # optimizer, scheduler, scaler
            "progress": asdict(self.progress),
            "rng": rng_by_rank[0] | {"ranks": rng_by_rank},
            "tokenizer": self.tokenizer_protos,
            "versions": {"nmt": nmt.__version__, "torch": str(torch.__version__)},  # plain str: weights_only loads it
        }

    def save(self, best: bool = False) -> Path:
        """Rank 0 writes; every rank takes part (their RNG states are saved too) and waits for it."""
        rng_by_rank = self.world.gather_objects(self._rng_state())
        path = self.ckpt_dir / f"step_{self.progress.step:07d}.pt"
        if self.world.is_main:
            save_checkpoint(self._payload(rng_by_rank), path)
            link_checkpoint(path, self.ckpt_dir / "last.pt")
            if best:
                link_checkpoint(path, self.ckpt_dir / "best.pt")
            prune(self.ckpt_dir, self.train_cfg.keep_last)
        self.world.barrier()
        return path

    def resume(self) -> bool:
        found = load_latest(self.ckpt_dir, self.device, lambda message: self.log(f"[yellow]warning:[/] {message}"))
        if found is None:
            return False
        path, payload = found
        saved_model = payload["recipe"]["model"]
        wanted = recipe_to_dict(self.recipe)["model"]
        changed = [f"{k}: {saved_model.get(k)} -> {v}" for k, v in wanted.items() if saved_model.get(k) != v]
        if changed:
            raise NmtError(f"{path}: recipe's model differs from the checkpoint's ({'; '.join(changed)}); "
                           "use another output_dir or the checkpoint's settings")
        try:
            self.model.load_state_dict(payload["model"])
        except RuntimeError as e:
            raise NmtError(f"{path}: weights do not fit the model: {str(e).splitlines()[0]}") from None
        for note in self.step.load_state_dict(payload):
            self.log(f"[yellow]note:[/] {path}: {note}")
        self.progress = TrainingState(**payload["progress"])
        ranks = payload["rng"].get("ranks", [payload["rng"]])
        if len(ranks) == self.world.size:  # same number of processes: continue each RNG exactly
            rng = ranks[self.world.rank]
            torch.set_rng_state(rng["torch"].cpu())
            if "cuda" in rng and self.device.type == "cuda":
                torch.cuda.set_rng_state(rng["cuda"].cpu(), self.device)
        else:  # another number of processes: fresh, but still reproducible, dropout masks
            torch.manual_seed(self.train_cfg.seed + 1000 * self.progress.step + self.world.rank)
        return True

    def init_from_parent(self) -> Path:
        """Fine-tuning: the parent's weights; optimizer, schedule and progress stay fresh."""
        parent = Path(self.train_cfg.init_from)
        # To the CPU: the tokenizers are compared with ours there; load_state_dict copies the weights over.
        payload = load_checkpoint(parent, map_location="cpu")
        theirs, ours = payload["recipe"]["model"], recipe_to_dict(self.recipe)["model"]
        for key in MODEL_SHAPE_KEYS:
            if theirs.get(key) != ours[key]:
                raise NmtError(f"model.{key}: the recipe has {ours[key]}, but {parent} has {theirs.get(key)}; "
                               "fine-tuning needs the parent's model shape")
        for side, proto in self.tokenizer_protos.items():
            if not torch.equal(proto, payload["tokenizer"][side]):
                raise NmtError(f"{self.recipe.out}: its tokenizer is not the one of {parent} "
                               "(run `nmt tokenizer` and `nmt prepare` with train.init_from set)")
        self.model.load_state_dict(payload["model"])
        return parent

    # --- one update ------------------------------------------------------------------------------
    def train_step(self, group: list[np.ndarray]) -> tuple[torch.Tensor, int]:
        """One update from a group of batches; returns this rank's summed loss and the group's target tokens."""
        return self.step(self.train_data, group)

    # --- validation (rank 0; the result is shared) -----------------------------------------------
    def _valid_sets(self, shards: Path) -> list[ValidSet]:
        """The dev set, or one per direction (`valid.en-de`, ...) when the corpora hold several, each
        with the first valid_bleu_sentences references for BLEU."""
        data = self.recipe.data
        directions = data.directions() if data.multidirectional else [(data.src_lang, data.tgt_lang)]
        sets = []
        for src, tgt in directions:
            label = f"{src}-{tgt}" if data.multidirectional else ""
            pairs = ParallelShards(shards, f"valid.{label}" if label else "valid")
            n_refs = min(self.train_cfg.valid_bleu_sentences, len(pairs))
            references = open_corpus(data.valid, src, tgt).side("tgt")
            sets.append(ValidSet(label, pairs, [line for _, line in zip(range(n_refs), references)]))
        return sets

    def validate(self) -> dict | None:
        """Dev nll (and BLEU); with several directions, each one's (nll_en-de, bleu_en-de, ...) and
        their means (nll, bleu), which pick best.pt."""
        result = None
        if self.world.is_main:
            self.model.eval()
            decode = self.recipe.decode
            results = []
            for valid in self.valid_sets:
                one = dev_loss(self.model, valid.pairs, self.train_cfg.max_tokens, self.device)
                if valid.references:
                    one["bleu"] = dev_bleu(self.model, valid.pairs, valid.references, self.tgt_tokenizer,
                                           self.train_cfg.max_tokens, self.device, decode.max_len_a, decode.max_len_b)
                results.append(one)
            result = results[0] if len(results) == 1 else {
                **{key: sum(r[key] for r in results) / len(results) for key in results[0]},
                **{f"{key}_{valid.label}": r[key] for valid, r in zip(self.valid_sets, results) for key in r}}
            if len(results) > 1:
                result["ppl"] = math.exp(result["nll"])  # of the mean nll, as each direction's is of its own
            self.model.train()
        return self.world.share_from_main(result)

    @property
    def _selection_metric(self) -> str:
        """What picks best.pt: dev BLEU when asked for and computed, else dev nll."""
        return "bleu" if self.train_cfg.best_metric == "bleu" and self.valid_sets[0].references else "nll"

    def _improved(self, result: dict) -> bool:
        score = result["bleu"] if self._selection_metric == "bleu" else -result["nll"]
        best = self.progress.best_score
        if best is None or score > best:
            self.progress.best_score, self.progress.best_step, self.progress.bad_validations = score, self.progress.step, 0
            return True
        self.progress.bad_validations += 1
        return False

    def validate_and_save(self) -> Path:
        result = self.validate()
        best = self._improved(result)
        if self.metrics:
            self.metrics.write("valid", self.progress.step, **result)
        path = self.save(best=best)
        shown = ", ".join(f"{k} {v:.3f}" for k, v in result.items())
        self.log(f"step {self.progress.step} valid: {shown}{' (best)' if best else ''} -> {path.name}")
        return path

    # --- the loop --------------------------------------------------------------------------------------
    def _finished(self) -> str | None:
        cfg, p = self.train_cfg, self.progress
        if p.step >= cfg.max_steps:
            return "max_steps"
        if cfg.max_epochs and p.epoch >= cfg.max_epochs:
            return "max_epochs"
        if cfg.patience and p.bad_validations >= cfg.patience:
            return "patience"
        return None

    def _budget_used(self, completed_updates: int) -> float:
        """The fraction of the training budget spent: the largest of steps, wall time and epochs."""
        cfg, p = self.train_cfg, self.progress
        used = completed_updates / cfg.max_steps
        if cfg.max_minutes > 0:
            used = max(used, p.elapsed_seconds / (60 * cfg.max_minutes))
        if cfg.max_epochs and self.batches_this_epoch:
            used = max(used, (p.epoch + p.batch_in_epoch / self.batches_this_epoch) / cfg.max_epochs)
        return used

    def _out_of_time(self) -> bool:
        return self.train_cfg.max_minutes > 0 and self.progress.elapsed_seconds >= 60 * self.train_cfg.max_minutes

    def run(self, show_progress: bool = True) -> TrainResult:
        finished = False
        try:
            result = self._run(show_progress and self.world.is_main)
            finished = True
            return result
        finally:
            if self.metrics:
                self.metrics.close()
            # The DDP wrapper holds the process group and sits in a reference cycle: left to interpreter
            # shutdown, gloo's threads can be torn down too late and abort the process.
            self.step.forward = self.model
            gc.collect()
            self.world.close(together=finished)

    def _run(self, show_progress: bool) -> TrainResult:
        """Epochs of updates until a budget, a signal or patience ends the run."""
        self._start()
        p = self.progress
        if (stop_reason := self._stop_reason()) is not None:
            self.log(f"nothing to do: already stopped by {stop_reason} at step {p.step}")
            return TrainResult(p.step, stop_reason, p.best_score, self.ckpt_dir / "last.pt")
        with StopSignal() as self.stop, self._progress_bar(show_progress) as self.bar:
            self.window = LossWindow(self.device)
            self.clock = time.perf_counter()  # elapsed_seconds is advanced from this after each update
            while stop_reason is None:
                batches = self._epoch_batches()
                while stop_reason is None and p.batch_in_epoch < len(batches):
                    group = batches[p.batch_in_epoch:p.batch_in_epoch + self.train_cfg.update_freq]
                    loss_sum, tokens = self.train_step(group)
                    p.batch_in_epoch += len(group)
                    p.step += 1
                    stop_reason = self._after_update(loss_sum, tokens)
                if stop_reason is None:
                    stop_reason = self._after_epoch()
        best = "none" if p.best_score is None else f"{abs(p.best_score):.3f}"
        self.log(f"stopped by {stop_reason} at step {p.step}; best dev {self._selection_metric} {best} at step {p.best_step}")
        return TrainResult(p.step, stop_reason, p.best_score, self.ckpt_dir / "last.pt")

    def _start(self) -> None:
        """Resume, or start from a parent (fine-tuning) or from scratch; say which, and with what batch."""
        cfg = self.train_cfg
        if cfg.init_from and Path(cfg.init_from).resolve().parent == self.ckpt_dir.resolve():
            raise NmtError(f"train.init_from={cfg.init_from} lies in this run's own checkpoints; "
                           "fine-tune into another output_dir, so that the parent run is kept as it is")
        resumed = self.resume()
        if not resumed and cfg.init_from:
            self.log(f"fine-tuning from {self.init_from_parent()}")
        effective = f"{self.train_cfg.update_freq} × {cfg.max_tokens} tokens per update"
        if self.world.distributed:
            effective += f" ({self.world.size} processes × {self.batches_per_rank} batches)"
        if self.device.type == "cpu" and cfg.precision != "fp32":
            self.log(f"warning: train.precision={cfg.precision} on a CPU: most CPUs lack fast {cfg.precision} "
                     "matmuls; use fp32 unless you have measured otherwise")
        self.log(f"[bold]nmt train[/] {self.recipe.output_dir}: {self.model.num_parameters():,} parameters, "
                 f"{len(self.train_data):,} training pairs, device {self.device}, {effective}"
                 + (f", resumed at step {self.progress.step}" if resumed else ""))

    def _progress_bar(self, show: bool) -> Progress:
        columns = [TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[status]}")]
        bar = Progress(*columns, console=self.console, disable=not show)
        self.task = bar.add_task("training", total=self.train_cfg.max_steps, completed=self.progress.step, status="")
        self.show_progress = show
        return bar

    def _epoch_batches(self) -> list[np.ndarray]:
        """This epoch's batches (a pure function of seed and epoch), from its segmentation sample."""
        p = self.progress
        if self.train_samples:
            self.train_data = self.train_samples[p.epoch % len(self.train_samples)]
        selection = None
        if self.corpus_sizes:  # several corpora: this epoch's draw from each (nmt.data.sampling)
            data = self.recipe.data
            selection = epoch_selection(self.corpus_sizes, [c.weight for c in data.corpora()],
                                        data.sampling_temperature, self.train_cfg.seed, p.epoch)
        batches = epoch_batches(self.train_data, self.train_cfg.max_tokens, self.train_cfg.seed, p.epoch,
                                selection=selection)
        self.batches_this_epoch = len(batches)
        return batches

    def _after_update(self, loss_sum: torch.Tensor, tokens: int) -> str | None:
        """Between two updates: logging, validation and checkpoints, the clock; why to stop, if so."""
        cfg, p = self.train_cfg, self.progress
        self.bar.update(self.task, completed=p.step)
        self.window.add(loss_sum, tokens)
        if p.step % cfg.log_every == 0 or p.step == cfg.max_steps:
            self._log_training()
        validated = p.step % cfg.valid_every == 0 or p.step == cfg.max_steps
        if validated:
            self.validate_and_save()
            self.window.restart()  # validation time is not training speed
        signalled = self._advance_clock()
        stop_reason = self._stop_reason(signalled)
        if stop_reason == "max_minutes" and not validated:
            self.validate_and_save()  # the final model competes for best.pt
        elif stop_reason and not validated:
            self.save()
        return stop_reason

    def _after_epoch(self) -> str | None:
        p = self.progress
        p.epoch += 1
        p.batch_in_epoch = 0
        stop_reason = self._finished()
        if stop_reason == "max_epochs":
            self.validate_and_save()
        return stop_reason

    def _log_training(self) -> None:
        p = self.progress
        loss_sum, tokens, seconds = self.window.read(self.world)
        stats = {"loss": loss_sum / tokens, "lr": self.step.scheduler.get_last_lr()[0],
                 "tgt_tokens_per_s": tokens / seconds, "epoch": p.epoch}
        if self.metrics:
            self.metrics.write("train", p.step, **stats)
        status = f"loss {stats['loss']:.3f} lr {stats['lr']:.2e} {stats['tgt_tokens_per_s']:.0f} tok/s"
        self.bar.update(self.task, status=status)
        if not self.show_progress:
            self.log(f"step {p.step}: {status}")

    def _advance_clock(self) -> bool:
        """Add this update's wall time. Ranks' clocks differ: all take the slowest one's time (so they
        agree on the cool-down rate and stop together), and a signal seen by one stops them all."""
        p = self.progress
        now = time.perf_counter()
        p.elapsed_seconds += now - self.clock
        self.clock = now
        p.elapsed_seconds, signalled = self.world.max([p.elapsed_seconds, float(self.stop.received is not None)])
        return bool(signalled)

    def _stop_reason(self, signalled: bool = False) -> str | None:
        if (reason := self._finished()) is not None:
            return reason
        if self._out_of_time():
            return "max_minutes"
        if signalled:
            return f"signal {self.stop.received or 'on another rank'}"
        return None


class LossWindow:
    """The training loss and target tokens since the last log line. The loss stays on the device
    until it is read, so that updates in between never wait for it."""

    def __init__(self, device: torch.device):
        self.loss = torch.zeros((), dtype=torch.float64, device=device)  # this rank's
        self.tokens = 0  # all ranks' (every rank knows them)
        self.start = time.perf_counter()

    def add(self, loss: torch.Tensor, tokens: int) -> None:
        self.loss += loss
        self.tokens += tokens

    def restart(self) -> None:
        self.start = time.perf_counter()

    def read(self, world) -> tuple[float, int, float]:
        """(loss summed over ranks, tokens, seconds) since the last read; starts a new window."""
        result = float(world.sum(self.loss.clone())), self.tokens, time.perf_counter() - self.start
        self.loss.zero_()
        self.tokens = 0
        self.restart()
        return result


def train(recipe: Recipe, console: Console | None = None, show_progress: bool = True) -> TrainResult:
    with exclusive_run(recipe.out):
        return Trainer(recipe, console).run(show_progress)
