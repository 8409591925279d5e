"""nmt's packages form layers: each imports only from its own layer or those below, and no two
modules import each other (directly or around a longer loop). Imports inside functions count."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

NMT = Path(__file__).resolve().parents[2] / "nmt"

# Bottom to top; docs/architecture.md shows the same order.
LAYERS = [
    ("base", ["nmt", "nmt.errors", "nmt.files", "nmt.file_lock", "nmt.devices", "nmt.compat", "nmt.recipe_errors", "nmt.config", "nmt.special_tokens", "nmt.shutdown", "nmt.startup"]),
    ("checkpoints", ["nmt.checkpoint", "nmt.host_memory"]),  # files and memory: nothing of nmt's above base
    ("metrics", ["nmt.metrics"]),  # chrF between many pairs, COMET: for scores, validation and decoding
    ("data", ["nmt.data"]),
    ("model", ["nmt.model"]),
    ("export", ["nmt.export"]),
    ("decode", ["nmt.decode"]),
    ("jobs", ["nmt.jobs"]),  # distillation, back-translation, scores, shortlists: built on decode
    ("train", ["nmt.train"]),
    ("scores and reports", ["nmt.score", "nmt.language_id", "nmt.info", "nmt.machine"]),
    ("serve", ["nmt.serve"]),
    ("cli", ["nmt.console", "nmt.cli_options", "nmt.cli", "nmt.__main__"]),
]


def module_name(path: Path, root: Path = NMT) -> str:
    parts = ["nmt", *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str], root: Path = NMT) -> set[str]:
    """The nmt modules `path` imports, anywhere in it (`from nmt.a import b` is nmt.a.b when that
    is a module, else nmt.a)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "nmt"}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "nmt":
            for alias in node.names:
                found.add(f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module)
    return found - {module_name(path, root)}


def import_graph(root: Path = NMT) -> dict[str, set[str]]:
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    return {name: imports_of(path, set(files), root) & set(files) for name, path in sorted(files.items())}


def layer_of(module: str) -> int:
    for index, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or (p != "nmt" and module.startswith(p + ".")) for p in prefixes):
            return index
    raise AssertionError(f"{module}: in no layer; add it to LAYERS (and to docs/architecture.md)")


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return [f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
            for a, targets in graph.items() for b in sorted(targets) if layer_of(b) > layer_of(a)]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import loop, each found once from the module where the search first entered it."""
    found, state = [], {}  # state: 1 on the current path, 2 done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                found.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[module] = 2

    for module in graph:
        if module not in state:
            visit(module, [module])
    return found


def test_packages_import_only_downward_and_no_module_imports_another_that_imports_it(capsys):
    graph = import_graph()
    by_layer: dict[str, set[str]] = {}
    for module, targets in graph.items():
        name = LAYERS[layer_of(module)][0]
        by_layer.setdefault(name, set()).update(LAYERS[layer_of(t)][0] for t in targets if layer_of(t) != layer_of(module))
    with capsys.disabled():
        print("\nlayers, bottom to top, and what each imports:")
        for name, _ in LAYERS:
            print(f"  {name:20} <- {', '.join(sorted(by_layer.get(name, ()), key=[n for n, _ in LAYERS].index)) or '-'}")
    assert upward_imports(graph) == []
    assert cycles(graph) == []


def test_the_checks_catch_a_cycle_and_an_upward_import(tmp_path):
    package = tmp_path / "nmt"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "data" / "__init__.py").write_text("")
    (package / "data" / "a.py").write_text("from nmt.data.b import f\n")
    (package / "data" / "b.py").write_text("def f():\n    from nmt.data import a\n    from nmt.train import loop\n")
    (package / "train").mkdir()
    (package / "train" / "__init__.py").write_text("")
    (package / "train" / "loop.py").write_text("import nmt.data.a\n")
    graph = import_graph(package)
    assert cycles(graph) == [["nmt.data.a", "nmt.data.b", "nmt.data.a"],
                             ["nmt.data.a", "nmt.data.b", "nmt.train.loop", "nmt.data.a"]]
    assert upward_imports(graph) == ["nmt.data.b (data) imports nmt.train.loop (train)"]
    with pytest.raises(AssertionError, match="in no layer"):
        layer_of("nmt.newthing")


def test_each_command_only_parses_calls_the_library_and_prints():
    """cli.py holds declarations: a command's body that grows past a dozen statements has logic
    that belongs in the library (where it can be tested without the command line)."""
    tree = ast.parse((NMT / "cli.py").read_text(encoding="utf-8"))
    commands = [f for f in tree.body if isinstance(f, ast.FunctionDef)
                and any(isinstance(d, ast.Call) and getattr(d.func, "id", "") == "command" for d in f.decorator_list)]
    sizes = {f.name: sum(isinstance(n, ast.stmt) for n in ast.walk(f)) - 1 - bool(ast.get_docstring(f)) for f in commands}
    assert len(commands) >= 15 and max(sizes.values()) <= 12, sizes


def test_the_package_imports_nothing_from_the_benchmarks_studies_or_tools():
    """nmt/ is the library: bench/, experiments/ and tools/ use it, never the other way round."""
    outside = {"bench", "experiments", "tools"}
    found = []
    for path in NMT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else []
            found += [f"{path.relative_to(NMT.parent)}: {name}" for name in names if name.split(".")[0] in outside]
    assert not found, found


def test_the_architecture_page_names_only_paths_and_modules_that_exist():
    """docs/architecture.md walks through the code by path: every path and module it names resolves."""
    page = (NMT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:nmt|bench|experiments|tools|tests|docs|recipes)/[\w/.-]*)`", page))
    assert len(paths) > 40
    missing = sorted(p for p in paths if not (NMT.parent / p).exists())
    assert not missing, missing
    functions = re.findall(r"`(\w+)` \(`(nmt/[\w/]+\.py)`\)", page)  # "`translate_file` (`nmt/decode/stream.py`)"
    for name, path in functions:
        assert re.search(rf"^(def|class) {name}\b", (NMT.parent / path).read_text(encoding="utf-8"), re.M), (name, path)


def test_a_checkpoints_recipe_is_validated_in_one_place():
    """Readers of a checkpoint get its recipe from `nmt.checkpoint.Checkpoint`, validated when the
    file is opened, not re-parsed from the payload's raw dict in each reader."""
    callers = sorted(str(path.relative_to(NMT.parent)) for path in NMT.rglob("*.py")
                     if re.search(r"recipe_from_dict\(payload\[\"recipe\"\]", path.read_text(encoding="utf-8")))
    assert callers == ["nmt/checkpoint.py"], callers
