"""The package's layers, read from its imports: core/, bridge/ and emulator/ (bridge's counterpart
on a CPU, which keeps its builds in bridge's cache folder; core's loader of a learner's CUDA C
file builds it with either) below everything, the harness
(the commands' machinery) below the operations, which take it by name (harness/ops.py); no
operation imports another, and the packages' graph has no circle."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
OPERATIONS = {"softmax", "gemm", "minigpt"}
MAY_IMPORT = {"bridge": set(), "emulator": {"bridge"}, "core": {"bridge", "emulator"},
              "harness": {"core", "bridge", "emulator"}}


def package_imports(src: Path = SRC) -> dict[str, set[str]]:
    """{top-level package or module under phase24: the others it imports}."""
    graph: dict[str, set[str]] = defaultdict(set)
    for path in (src / "phase24").rglob("*.py"):
        me = path.relative_to(src / "phase24").with_suffix("").parts[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module == "phase24":
                names = [f"phase24.{a.name}" for a in node.names]
            for name in names:
                parts = name.split(".")
                if parts[0] == "phase24" and len(parts) > 1 and parts[1] != me:
                    graph[me].add(parts[1])
    return graph


def circles(graph: dict[str, set[str]]) -> list[str]:
    seen, stack, found = set(), [], []

    def visit(node):
        if node in stack:
            found.append(" -> ".join(stack[stack.index(node):] + [node]))
            return
        if node in seen:
            return
        seen.add(node)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            visit(nxt)
        stack.pop()

    for node in sorted(graph):
        visit(node)
    return found


def test_each_layer_imports_only_what_lies_below_it():
    graph = package_imports()
    assert graph["harness"] and graph["gemm"], "the imports were not read"
    for package, allowed in MAY_IMPORT.items():
        assert graph.get(package, set()) <= allowed, (package, graph[package] - allowed)
    for op in OPERATIONS:
        assert not graph.get(op, set()) & (OPERATIONS | {"cli"}), (op, graph[op])
    assert not circles(graph), circles(graph)


def test_the_reading_sees_an_import_that_runs_back_up(tmp_path):
    for name, text in {"core/a.py": "from phase24.softmax import spec\n",
                       "softmax/spec.py": "from phase24.core import a\n",
                       "harness/b.py": "import phase24.gemm.tables\n"}.items():
        (tmp_path / "phase24" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "phase24" / name).write_text(text)
    graph = package_imports(tmp_path)
    assert graph["core"] == {"softmax"} and graph["harness"] == {"gemm"}
    assert circles(graph) == ["core -> softmax -> core"]
