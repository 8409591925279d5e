"""Shared fixtures: the tiny recipe pointed at a temporary folder, and one tiny trained model."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

# CI has 2 cores and the suite runs on two pytest-xdist workers: one thread per process, the
# workers' and the commands' they start (nmt train, torchrun, ...), so no process spins waiting
# for a core the other worker holds. torch and nmt's library are imported where used, not here: the
# pytest-xdist controller loads this file too, and starts the workers only after it.
os.environ["OMP_NUM_THREADS"] = "1"


def _start_and_end_as_nmt_does() -> None:
    """Each test process imports torch as an nmt command does, the collector paused, and ends as
    one does, its heap frozen (nmt.startup): a worker's Python would otherwise take its million
    objects apart one by one at exit, seconds after its last test."""
    from nmt.startup import start_and_end_quickly

    start_and_end_quickly()


_start_and_end_as_nmt_does()


def _claim_the_tests_package() -> None:
    """`from tests.conftest import ...` means this folder: argostranslate's wheel (extra argos, in dev)
    installs a regular package named `tests`, which would win over this folder (a namespace
    package, found later) wherever it is on the path."""
    import sys
    import types

    here = str(Path(__file__).resolve().parent)
    module = sys.modules.get("tests")
    if module is None or here not in list(getattr(module, "__path__", [])):
        package = types.ModuleType("tests")
        package.__path__ = [here]
        sys.modules["tests"] = package


_claim_the_tests_package()


def _click_command_built_once() -> None:
    """typer's CliRunner builds the Click command of the app it is given at every invoke (30 ms:
    the type hints of every verb's function; about 460 invokes a run); the command is the same
    each time, so each test process builds it once per app."""
    import functools

    import typer.testing

    typer.testing._get_command = functools.cache(typer.testing._get_command)  # noqa: SLF001


_click_command_built_once()

if TYPE_CHECKING:
    from nmt.config import Recipe

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "recipes" / "tiny.yaml"
TINY_DATA = ROOT / "tests" / "fixtures" / "tiny"


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Each test starts on one of torch's threads and leaves it so: a test that sets more (a
    benchmark's --threads 2, run in this process) would otherwise leave every later test of its
    worker on two threads beside the other worker's, which slowed them several times over."""
    import torch

    yield
    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)


def pytest_collection_modifyitems(config, items):
    """Tests marked `slow` run first: with `--dist worksteal` (make test), a worker that runs out
    of tests takes half of the other's waiting ones, so the two end within one short test of each
    other instead of one idling while the other finishes a long test begun late. Tests marked
    `cuda` need a CUDA device: skipped without one (CI has none)."""
    import torch

    torch.set_num_threads(1)  # also where torch was loaded before OMP_NUM_THREADS was set
    # Stable: otherwise in the order of the test files' names, whatever folder holds them.
    items.sort(key=lambda item: ("slow" not in item.keywords, item.path.name))
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device (make gpu-check runs it on a GPU machine)")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


def pytest_collection_finish(session):
    """What a worker holds once it has collected (every test module, torch, transformers, ...)
    lives as long as it: frozen out of the collector's full passes, about 40 a worker, each of
    which would walk those objects again."""
    import gc

    gc.collect()
    gc.freeze()


def optional_module(name: str):
    """(the module or None, a mark for a test module's `pytestmark`): the tests of a module that
    needs an optional package skip one by one where it is missing. Unlike a module-level
    importorskip, nothing is skipped at collection, so where such a module also holds CUDA tests,
    the GPU check (`pytest -m cuda` on a machine that lacks some packages) counts no skipped test."""
    try:
        return importlib.import_module(name), pytest.mark.skipif(False, reason=f"{name} is installed")
    except ImportError as e:
        return None, pytest.mark.skip(reason=f"could not import {name!r}: {e}")


def tiny_recipe(out: Path, *overrides: str) -> Recipe:
    from nmt.config import load_recipe

    return load_recipe(TINY, [
        f"output_dir={out}", f"data.train={TINY_DATA / 'train'}", f"data.valid={TINY_DATA / 'valid'}",
        f"data.test={TINY_DATA / 'valid'}", *overrides,
    ])


def prepared(recipe: Recipe) -> Recipe:
    """`recipe` with its tokenizer trained (copied from train.init_from's checkpoint where set, as
    `nmt tokenizer` does) and its data prepared."""
    from nmt.data.prepare import prepare
    from nmt.data.tokenizer import train_tokenizer

    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out, recipe.train.init_from)
    prepare(recipe.data, recipe.tokenizer, recipe.out)
    return recipe


def prepared_tiny(out: Path, *overrides: str) -> Recipe:
    return prepared(tiny_recipe(out, *overrides))


@pytest.fixture(scope="session")
def trained_tiny(tmp_path_factory) -> Recipe:
    """The tiny recipe trained to its end (a few seconds), once per test run; tests must not modify it."""
    return trained_once(tmp_path_factory)


def trained_once(tmp_path_factory, *overrides: str, toy_corpus: Path | None = None) -> Recipe:
    """The tiny recipe with `overrides` (on the toy multilingual corpus where given: multilingual_recipe),
    trained once in a whole test run: pytest-xdist gives each worker its own session, so the first
    worker to ask trains it (in the run's shared temporary folder, under a file lock) and the others
    read it. Tests must not modify it."""
    from filelock import FileLock

    from nmt.train.trainer import train

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the folder every worker's temporary folder lies in
    key = repr(("toy" if toy_corpus else "tiny", overrides))  # each worker's toy corpus is the same text
    out = shared / f"trained-{hashlib.sha1(key.encode()).hexdigest()[:12]}"
    recipe = multilingual_recipe(out, toy_corpus, *overrides) if toy_corpus else tiny_recipe(out, *overrides)
    with FileLock(f"{out}.lock"):
        if not (out / "trained").is_file():
            train(prepared(recipe), show_progress=False)
            (out / "trained").touch()
    return recipe


def variant_checkpoint(tmp_path_factory, trained_tiny: Recipe, overrides: tuple[str, ...]) -> Path:
    """best.pt of the tiny recipe with a model variant's overrides (trained once per test run, 150
    updates), or of the tiny model itself without any: what the export tests export."""
    recipe = trained_once(tmp_path_factory, "train.max_steps=150", *overrides) if overrides else trained_tiny
    return recipe.out / "checkpoints" / "best.pt"


_EXPORTS: dict[tuple[Path, str], Path] = {}


def exported_variant(tmp_path_factory, trained_tiny: Recipe, overrides: tuple[str, ...], format: str) -> tuple[Path, Path]:
    """(checkpoint, export directory): a model variant (variant_checkpoint) through `nmt export
    --format`, exported once per test process (tests read it; one that edits an export copies it)."""
    from typer.testing import CliRunner

    from nmt.cli import app

    checkpoint = variant_checkpoint(tmp_path_factory, trained_tiny, overrides)
    if (checkpoint, format) not in _EXPORTS:
        out = tmp_path_factory.mktemp(format) / "model"
        result = CliRunner().invoke(app, ["export", str(checkpoint), "-o", str(out), "--format", format])
        assert result.exit_code == 0, result.output
        _EXPORTS[checkpoint, format] = out
    return checkpoint, _EXPORTS[checkpoint, format]


def one_line_error(result, *fragments: str) -> None:
    """A CLI result that failed as bad input should: exit code 2, one line, no traceback, naming `fragments`."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1, result.output
    for fragment in fragments:
        assert fragment in result.output


MARKERS = {"xa": "Alpha", "xb": "Beta"}  # the toy target languages: the source copied after a marker word


@pytest.fixture(scope="session")
def toy_corpus(tmp_path_factory):
    """English sources; xa and xb targets are the source after a language-dependent marker word."""
    root = tmp_path_factory.mktemp("toy")
    for split, name in (("train", "train"), ("valid", "valid")):
        lines = (TINY_DATA / f"{name}.en").read_text(encoding="utf-8").splitlines()
        (root / f"{split}.en").write_text("\n".join(lines) + "\n", encoding="utf-8")
        for lang, marker in MARKERS.items():
            (root / f"{split}.{lang}").write_text("\n".join(f"{marker} {line}" for line in lines) + "\n", encoding="utf-8")
    return root


def multilingual_recipe(out, corpus, *overrides):
    """The tiny recipe on the toy corpus, en→xa and en→xb, with source-side language tokens
    unless `overrides` say otherwise."""
    train = [{"path": str(corpus / "train"), "src_lang": "en", "tgt_lang": lang} for lang in MARKERS]
    return tiny_recipe(out, f"data.train={json.dumps(train)}", "data.src_lang=en", "data.tgt_lang=xa",
                       f"data.valid={corpus / 'valid'}", "data.test=null", "data.language_token=source",
                       "tokenizer.vocab_size=200", *overrides)


def assert_answers_in_each_language(model: str, corpus, tmp_path) -> None:
    """`nmt translate -c MODEL --tgt-lang L` on the toy corpus answers in L (its marker word first,
    in 90 % of the lines), one line per line, no language token shown."""
    from typer.testing import CliRunner

    from nmt.cli import app

    source = corpus / "train.en"
    lines = source.read_text(encoding="utf-8").splitlines()
    for lang, marker in MARKERS.items():
        out = tmp_path / f"out.{lang}"
        result = CliRunner().invoke(app, ["translate", "-c", model, "-i", str(source), "-o", str(out), "--tgt-lang", lang])
        assert result.exit_code == 0, result.output
        outputs = out.read_text(encoding="utf-8").splitlines()
        assert len(outputs) == len(lines)
        assert sum(o.split()[0] == marker for o in outputs if o) >= 0.9 * len(lines), (lang, outputs[:3])
        assert not any("<2x" in o for o in outputs)


def loss_and_gradients(model, batch, label_smoothing: float = 0.1) -> tuple:
    """One batch's summed loss and every parameter's gradient (in model.parameters() order)."""
    model.zero_grad()
    loss = model(batch.src, batch.tgt_in, batch.out_positions, batch.out_targets, label_smoothing)
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters()]


def compile_with_aot_eager(monkeypatch) -> list[bool]:
    """TrainStep compiling on the CPU as it does on a GPU, with the aot_eager backend: dynamo's and
    AOT autograd's traces run by torch's own kernels, without inductor's C++ compile of the step or
    of the compile smoke test (seconds each on a CPU). Never mode reduce-overhead (CUDA graphs
    need a GPU). Returns the dynamism TrainStep asks for, one entry per compile."""
    import functools

    from nmt.train import compiling
    from nmt.train import step as step_module

    asked: list[bool] = []

    def aot_eager(forward, cuda_graphs: bool = False, dynamic: bool = True):
        asked.append(dynamic)
        return compiling.compile_model(forward, backend="aot_eager", dynamic=dynamic)

    smoke_test = functools.partial(compiling.compile_smoke_test, backend="aot_eager")
    monkeypatch.setattr(step_module, "compile_model", aot_eager)
    monkeypatch.setattr(step_module, "resolve_compile", functools.partial(compiling.resolve_compile, smoke_test=smoke_test))
    return asked


def assert_same_gradients(model, expected: list, actual: list, rtol: float = 1e-5) -> None:
    """Gradients equal up to float rounding (another summation order): each within `rtol` of the
    largest element of its expected value."""
    for (name, _), a, b in zip(model.named_parameters(), expected, actual):
        assert (a - b).abs().max() <= rtol * a.abs().max() + 1e-12, name
