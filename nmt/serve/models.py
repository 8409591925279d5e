"""The models one `nmt serve` holds, each loaded once with its own request batcher, and which one
each line of a request goes to: by its languages (nmt's src_lang/tgt_lang, LibreTranslate's
source/target; a model trained on the direction before one that would translate it zero-shot),
else the first model; a request of several languages is split between models.
Two models that translate the same direction are refused: the second would never be asked (to
average checkpoints into one model, `nmt average`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nmt.data.languages import listed_sources
from nmt.data.source_language import SourceGuess
from nmt.decode.request import RequestRefused
from nmt.devices import on_a_thread_that_ends
from nmt.errors import NmtError
from nmt.serve.worker_process import WORKER_MODES, LoadSpec, resolve_worker_modes


@dataclass
class Served:
    translator: object  # an Engine (nmt.decode.engines.engine)
    name: str
    batcher: object = None  # nmt.serve.batcher.Batcher, started with the app
    spec: LoadSpec | None = None  # how it was loaded (for worker processes to load the same)
    worker_mode: str = "threads"  # its workers: "threads" of the server's process, or "processes" of their own

    @property
    def data(self):
        return self.translator.recipe.data

    def directions(self) -> frozenset[tuple[str, str]]:
        """(source, target) pairs it translates: its corpora's, and those of an import's languages."""
        return self._pairs

    @functools.cached_property
    def _pairs(self) -> frozenset[tuple[str, str]]:
        # found once: an imported NLLB-200 model has some 40,000, and each line of a request asks
        pairs = set(self.data.directions())
        return frozenset(pairs | {(a, b) for a in listed_sources(self.data) for b in self.data.languages if a != b})

    @functools.cached_property
    def sources(self) -> frozenset[str]:
        """The languages it translates from."""
        return frozenset(s for s, _ in self._pairs)

    @functools.cached_property
    def targets(self) -> frozenset[str]:
        """The languages it translates into."""
        return frozenset(t for _, t in self._pairs)

    def translates(self, source: str, target: str, zero_shot: bool = False) -> bool:
        """Whether it translates source→target (with `zero_shot`: from any of its source languages
        into any of its targets)."""
        return (source, target) in self._pairs or (zero_shot and source in self.sources and target in self.targets)

    @property
    def multidirectional(self) -> bool:
        """Whether requests must name their languages to it (language tokens, several directions)."""
        return self.data.language_token != "none" or len(self.directions()) > 1


class ServedModels:
    def __init__(self, models: list[Served]):
        self.models = models
        seen: dict[tuple[str, str], str] = {}
        for model in models:
            for pair in sorted(model.directions()):
                if pair in seen:
                    raise NmtError(f"{model.name} and {seen[pair]} both translate {pair[0]}→{pair[1]}: serve one of "
                                   "them (to average checkpoints into one model: nmt average)")
                seen[pair] = model.name

    @property
    def first(self) -> Served:
        return self.models[0]

    def directions(self) -> set[tuple[str, str]]:
        return {pair for model in self.models for pair in model.directions()}

    def describe(self, workers: int) -> str:
        """Each model, its directions and its workers, for the server's first line."""
        return ", ".join(f"{m.name} ({', '.join(sorted(f'{a}-{b}' for a, b in m.directions()))}; worker {m.worker_mode}: "
                         f"{workers})" for m in self.models)

    def for_line(self, source: str | None, target: str | None, number: int, zero_shot: bool = False) -> Served:
        """The model for line `number`'s languages (source None: each model's own; both None: the
        first model): one trained on the direction, else (with `zero_shot`) the first that can
        translate it zero-shot; RequestRefused where none translates them."""
        if len(self.models) == 1 or (source is None and target is None):
            return self.first
        for allowed in dict.fromkeys((False, zero_shot)):  # a trained direction before a zero-shot one
            for model in self.models:
                if model.translates(source or model.data.src_lang, target or model.data.tgt_lang, allowed):
                    return model
        offered = ", ".join(f"{a}-{b}" for a, b in sorted(self.directions()))
        raise RequestRefused(f"line {number}: no model here translates {source or '?'}-{target or '?'} "
                             f"(this server translates {offered})")

    def for_lines(self, sources: list[str | None], targets: list[str | None], zero_shot: bool = False
                  ) -> dict[int, list[int]]:
        """The lines each model translates ({model's index: the lines' indices}, in order)."""
        parts: dict[int, list[int]] = {}
        for i, (source, target) in enumerate(zip(sources, targets)):
            model = self.for_line(source, target, i + 1, zero_shot)
            parts.setdefault(self.models.index(model), []).append(i)
        return parts


class ServedSourceGuess(SourceGuess):
    """src_lang auto over several models: each line's source language among the languages any
    model translates into its target (the models' order first), so that the line then goes to
    the model of its direction."""

    who = "this server"

    def __init__(self, models: ServedModels, zero_shot: bool = False):
        super().__init__(models.first.data, zero_shot)
        self.models = models.models

    def sources(self, target: str) -> list[str]:
        return list(dict.fromkeys(source for model in self.models for source in sorted(model.sources)
                                  if model.translates(source, target, self.zero_shot)))


def load_served(paths: list[Path], device: str = "cpu", engine: str = "torch", compute_type: str = "default",
                threads: int = 0, decode_from: Path | None = None, overrides: list[str] = (),
                workers: int = 1, worker_mode: str = "threads",
                note: Callable[[str], None] = lambda _: None) -> ServedModels:
    """Each model loaded once, its decode defaults its recipe's, then `decode_from`'s, then
    `overrides`; `workers` will translate with each at once, as threads or processes of their
    own (`worker_mode`: auto, processes, threads; nmt.serve.worker_process). With decode.compile,
    a model served by threads compiles its decoding steps here (nmt.decode.warm_up), each worker
    process when it starts; `note` hears that it does. All on a thread that ends: the workers'
    threads then hold the process's only OpenMP teams (nmt.devices.on_a_thread_that_ends)."""
    return on_a_thread_that_ends(functools.partial(_load_each, paths, device, engine, compute_type, threads,
                                                   decode_from, overrides, workers, worker_mode, note))


def _load_each(paths: list[Path], device: str, engine: str, compute_type: str, threads: int,
               decode_from: Path | None, overrides: list[str], workers: int, worker_mode: str,
               note: Callable[[str], None]) -> ServedModels:
    from nmt.decode.engines.engine import load_engine
    from nmt.decode.engines.torch_engine import precision_warning
    from nmt.decode.glossary import glossary_of
    from nmt.decode.memory import memory_of
    from nmt.decode.translate import decode_settings
    from nmt.decode.warm_up import warm_up

    if worker_mode not in WORKER_MODES:
        raise NmtError(f"--worker-mode {worker_mode}: choose one of {', '.join(WORKER_MODES)}")
    models = []
    for path in paths:
        translator = load_engine([path], device, engine, compute_type, threads, parallel_calls=workers)
        if decode_from or overrides:  # the defaults each request starts from
            cfg = decode_settings(translator.recipe, decode_from, {}, list(overrides))
            translator.recipe = translator.recipe.model_copy(update={"decode": cfg})
        if warning := precision_warning(translator, translator.recipe.decode.precision):
            note(f"{path}: warning: {warning}")
        glossary_of(translator, translator.recipe.decode)  # a glossary or memory that cannot be used stops here
        memory_of(translator, translator.recipe.decode)
        models.append(Served(translator, str(path), spec=LoadSpec(str(path), device, engine, compute_type, threads)))
    modes = resolve_worker_modes(worker_mode, workers, [(m.spec, m.translator.capabilities.name) for m in models])
    for model, mode in zip(models, modes):
        model.worker_mode = mode
        if model.translator.recipe.decode.compile:
            note(f"{model.name}: compiling its decoding steps (decode.compile; about a minute on a CPU the "
                 "first time, seconds from the cache after)")
            if mode == "threads":  # worker processes warm up as they start
                warm_up(model.translator, model.translator.recipe.decode)
    return ServedModels(models)
