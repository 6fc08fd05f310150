"""The package's layers, read from its imports: core/, bridge/ and emulator/ (bridge's counterpart
on a CPU, which keeps its builds in bridge's cache folder; core's loader of a learner's CUDA C
file builds it with either) below everything, the harness
(the commands' machinery) below the operations, which take it by name (harness/ops.py); no
operation imports another, and the packages' graph has no circle."""

from __future__ import annotations

import ast
import re
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


# Source says what the code does and why; results/ says how much and at which commit. A commit
# hash, or a measured figure (TFLOP/s, GB/s, TB/s, µs, a share of the copy or of cuBLAS), is
# refused in src/, except in a rung's prediction (its header's "Prediction:" paragraph, written
# before it was measured).
HASH = re.compile(r"(?<![0-9A-Za-z.])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}"
                  r"(?![0-9A-Za-z])")
FIGURE = re.compile(r"\b\d+(?:\.\d+)?\s?(?:TFLOP/s|GB/s|TB/s|µs)(?!\w)|"
                    r"\b\d+(?:\.\d+)?\s?% of (?:the )?(?:copy|cuBLAS)")


def notebook_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of each line of ``text`` that holds a commit hash or a measured figure
    outside a prediction paragraph (which runs from "Prediction:" to "Limit:" or a blank line)."""
    found, predicting = [], False
    for n, line in enumerate(text.splitlines(), start=1):
        body = line.strip().lstrip("/#* ").strip()
        if body.startswith("Prediction"):
            predicting = True
        elif not body or body.startswith("Limit"):
            predicting = False
        if HASH.search(line) or (FIGURE.search(line) and not predicting):
            found.append((n, line.strip()))
    return found


def test_source_holds_no_commit_and_no_measured_figure():
    found = [f"{path.relative_to(SRC)}:{n}: {line[:90]}"
             for path in sorted((SRC / "phase24").rglob("*"))
             if path.suffix in (".py", ".cu", ".cuh", ".cpp", ".h")
             for n, line in notebook_lines(path.read_text(encoding="utf-8", errors="replace"))]
    assert not found, "\n".join(found)


def test_a_figure_is_refused_outside_a_prediction():
    header = ("// v9: a rung.\n// Prediction: towards 90% of copy.\n// Limit: the wait.\n"
              "// Measured: 93.1% of copy at 4096 (results/h200/softmax.json).\n")
    assert [n for n, _ in notebook_lines(header)] == [4]
    log = "x = 1  # see bench-d722391.log\ny = 3.1415926e+0\n"
    assert [n for n, _ in notebook_lines(log)] == [1]
    assert notebook_lines('"""It ran at 512 GB/s."""\n')
    assert not notebook_lines("LOG2E = 1.4426950408889634f\n")
