"""An nmt process imports torch quickly (nmt.startup): the first import of a module runs with the
collector paused, then one collection, then the survivors frozen; the module sees nothing of it.
Shown on made-up modules imported here (torch gets it in every `nmt` command the suite starts)."""

import gc
import sys
import textwrap
import uuid

import pytest

from nmt.startup import _FirstImportFinder, pause_collector_for_import

HEAVY = textwrap.dedent("""
    import weakref

    class Node:
        pass

    kept = [[i] for i in range(60_000)]  # alive as long as the module: to be frozen
    cycles = []
    for _ in range(100):  # garbage left in reference cycles: only the collector frees it
        node = Node()
        node.itself = node
        cycles.append(weakref.ref(node))
    del node
    loader_seen = type(__loader__).__name__
""")


@pytest.fixture
def heavy_module(tmp_path, monkeypatch):
    """A fresh importable module's name: 60,000 objects kept, 100 reference cycles left as garbage."""
    monkeypatch.syspath_prepend(str(tmp_path))
    names = []

    def make() -> str:
        name = f"heavy_{uuid.uuid4().hex}"
        (tmp_path / f"{name}.py").write_text(HEAVY, encoding="utf-8")
        names.append(name)
        return name

    yield make
    for name in names:
        sys.modules.pop(name, None)


def collections_while_importing(name: str) -> list[int]:
    runs = []

    def count(phase, info):
        if phase == "start":
            runs.append(info["generation"])

    gc.collect()  # every import from the same start: what earlier tests allocated triggers nothing here
    gc.callbacks.append(count)
    try:
        __import__(name)
    finally:
        gc.callbacks.remove(count)
    return runs


def test_the_first_import_runs_without_collections_and_leaves_its_objects_frozen(heavy_module):
    plain = heavy_module()
    assert len(collections_while_importing(plain)) > 10  # what the pause spares

    paused = heavy_module()
    finders = len(sys.meta_path)
    pause_collector_for_import(paused)
    assert len(sys.meta_path) == finders + 1
    frozen = gc.get_freeze_count()
    assert collections_while_importing(paused) == [2]  # only the one full collection after the import
    module = sys.modules[paused]
    assert gc.get_freeze_count() >= frozen + 60_000 and gc.isenabled()
    assert all(ref() is None for ref in module.cycles)  # the import's garbage was collected, not frozen
    assert module.loader_seen == type(module.__loader__).__name__ == type(module.__spec__.loader).__name__ == \
        "SourceFileLoader"  # its own loader, as without the pause
    assert len(sys.meta_path) == finders  # the finder stepped aside


def test_a_collector_the_program_turned_off_stays_off(heavy_module):
    name = heavy_module()
    pause_collector_for_import(name)
    gc.disable()
    try:
        assert collections_while_importing(name) == [2]
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_module_already_imported_or_already_awaited_gets_no_second_finder(heavy_module):
    finders = len(sys.meta_path)
    pause_collector_for_import("torch")  # imported in this process long ago
    assert len(sys.meta_path) == finders
    name = heavy_module()
    pause_collector_for_import(name)
    pause_collector_for_import(name)
    waiting = [f for f in sys.meta_path if isinstance(f, _FirstImportFinder)]
    assert [f.name for f in waiting] == [name]
    __import__(name)
    assert not any(isinstance(f, _FirstImportFinder) for f in sys.meta_path)
