"""Every shell command shown on the lab pages runs as the page says.

The commands are read from the fenced ``bash`` blocks of the English lab and solutions pages (the
Spanish twins hold identical code blocks, which tests/test_docs.py enforces): lines that start with
``python -m phase24``, ``TRITON_INTERPRET=1 python -m phase24`` or ``nvcc``. Each becomes one test,
run with ``sys.executable -m phase24`` in a scratch directory where ``labs/`` points at the
repository's, so files a command writes (``out/minigpt/*.npz``, ``./hello``) stay out of the tree.

Three kinds:

* CPU commands run here (doctor, build, results, the checks that run without a GPU, the Triton
  interpreter, the nvcc builds of lab 00, the quick MiniGPT runs).
* GPU commands (``bench``, ``hello``, ``profile``, checks of the CUDA C implementations, anything with
  ``--device cuda``, the GPU form of a Triton check) carry ``pytest.mark.gpu``: skipped, visibly,
  without a GPU, and run by ``scripts/gpu-session.sh`` (``pytest -m gpu``). A ``bench`` or
  ``profile`` without ``--out`` is given a scratch ``--out``: recorded results are never overwritten.
* Long commands, listed in ``LONG`` with the reason, are skipped everywhere; each names where it
  does run.

Whatever the kind, every ``phase24`` command must parse with the real argument parser, so a page
cannot show an option or a subcommand that does not exist.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(p for folder in ("lab", "solutions")
               for p in (ROOT / "docs" / "phase-24-cuda-triton" / folder).glob("*.md")
               if not p.name.endswith(".es.md"))
GPU = torch.cuda.is_available()
TIMEOUT_S = 600

# Commands too long for CI on a CPU, with the reason and where they do run. Matched on the whole
# command line after whitespace normalisation.
LONG = {
    "python -m phase24 minigpt parity":
        "the full parity report (100 + 100 exact steps) takes over 2 minutes on 2 cores; "
        "tests/test_minigpt_parity.py covers it, and `python -m phase24 run` shows it",
    "python -m phase24 minigpt train --impl torch":
        "300 steps of the small model; the tiny-preset command on the same page runs here",
    "python -m phase24 minigpt speed":
        "the small model on every backend; scripts/gpu-session.sh runs it on the H200 (minigpt step)",
    "python -m phase24 bench softmax":
        "the full benchmark sweep; scripts/gpu-session.sh runs it (bench step)",
    "python -m phase24 bench softmax --impl torch cuda":
        "the full benchmark sweep for two implementations; scripts/gpu-session.sh runs the sweep",
    "python -m phase24 bench softmax --impl torch cuda triton-naive triton-v1 triton-v2 triton-v3 "
    "triton-v4 triton-v5 triton":
        "the full benchmark sweep of the Triton ladder; results/h200/softmax.json is its run",
    "python -m phase24 minigpt train --impl torch --device cuda --steps 1000":
        "1000 training steps of the small model; not part of any automatic run",
}

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<info>[^`]*)$")
PREFIXES = ("python -m phase24", "TRITON_INTERPRET=1 python -m phase24", "nvcc ")


@dataclass
class Command:
    line: str                      # as shown on the page, whitespace normalised
    where: list[str] = field(default_factory=list)  # page:line of each occurrence
    env: dict[str, str] = field(default_factory=dict)
    argv: list[str] = field(default_factory=list)   # after the program: phase24's arguments or nvcc's
    tool: str = "phase24"          # or "nvcc"

    @property
    def id(self) -> str:
        return self.line


def bash_lines(text: str):
    """(line number, command line) for each line of each ```bash block, continuations joined."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        info, fence = m["info"].strip().split(), m["fence"]
        j = i + 1
        pending, start = "", 0
        while j < len(lines) and not re.match(r"^[ \t]*" + fence + r"`*[ \t]*$", lines[j]):
            if info[:1] == ["bash"]:
                body = lines[j].strip()
                if not pending:
                    start = j + 1
                if body.endswith("\\"):
                    pending += body[:-1] + " "
                else:
                    yield start, " ".join((pending + body).split())
                    pending = ""
            j += 1
        i = j + 1


def lab_commands() -> list[Command]:
    found: dict[str, Command] = {}
    for page in PAGES:
        for n, line in bash_lines(page.read_text(encoding="utf-8")):
            if not line.startswith(PREFIXES):
                continue
            where = f"{page.relative_to(ROOT)}:{n}"
            if line in found:
                found[line].where.append(where)
                continue
            words = shlex.split(line.split(" #", 1)[0])
            env = {}
            while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
                k, v = words.pop(0).split("=", 1)
                env[k] = v
            if words[0] == "nvcc":
                cmd = Command(line, [where], env, words[1:], "nvcc")
            else:
                assert words[:3] == ["python", "-m", "phase24"], line
                cmd = Command(line, [where], env, words[3:])
            found[line] = cmd
    return list(found.values())


COMMANDS = lab_commands()


# ----------------------------------------------------------------------------------------------
# What each command needs, and what it must do


def _opt(argv: list[str], name: str) -> list[str] | None:
    """Values of an option that takes one or more values (None when absent)."""
    if name not in argv:
        return None
    i = argv.index(name) + 1
    vals = []
    while i < len(argv) and not argv[i].startswith("--"):
        vals.append(argv[i])
        i += 1
    return vals


def kind(cmd: Command) -> tuple[str, str]:
    """('cpu' | 'gpu' | 'long' | 'cpu-only', reason)."""
    if cmd.line in LONG:
        return "long", LONG[cmd.line]
    if cmd.tool == "nvcc":
        return "cpu", ""
    a = cmd.argv
    interp = cmd.env.get("TRITON_INTERPRET", "0") not in ("", "0")
    if a[0] in ("hello", "bench", "profile"):
        return "gpu", f"`{a[0]}` needs a GPU"
    if "--device" in a and (_opt(a, "--device") or [""])[0].startswith("cuda"):
        return "gpu", "runs on --device cuda"
    if a[0] == "check":
        impls = _opt(a, "--impl") or []
        file = (_opt(a, "--file") or [""])[0]
        if any(i.startswith("cuda") for i in impls):
            return "gpu", "checks CUDA C implementations"
        if interp:
            return "cpu-only", "the Triton interpreter form, for machines without a GPU"
        if any(i.startswith("triton") for i in impls) or file.endswith(".py"):
            return "gpu", "the GPU form of a Triton check (the TRITON_INTERPRET=1 form runs on CPU)"
    return "cpu", ""


def expected(cmd: Command) -> tuple[int, str | None]:
    """(exit status, a string the output must contain) on this machine."""
    a = cmd.argv
    if cmd.tool == "nvcc":
        return 0, None
    file = (_opt(a, "--file") or [""])[0]
    if a[0] == "check" and file.startswith("labs/starters/"):
        if file.endswith(".cu") and not GPU:
            return 0, "Compiled."  # compile-only on a CPU
        return 1, " failed (seed"  # the starter runs and fails by design until the learner fills it
    if a[0] == "minigpt" and "--gelu-c" in a:
        return 1, "overall: FAIL"  # the planted error must be caught
    if a[0] == "minigpt" and a[1] == "parity":
        return 0, "overall: PASS"
    if a[0] == "check":
        return 0, " passed, 0 failed"
    return 0, None


def _nvcc() -> str | None:
    for c in (os.environ.get("NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if c and Path(c).exists():
            return c
    return None


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("lab-commands")
    (d / "labs").symlink_to(ROOT / "labs", target_is_directory=True)
    return d


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ, NO_COLOR="1", PYTHONUNBUFFERED="1", **extra)
    env["PYTHONPATH"] = str(ROOT / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _run(cmd: Command, workdir: Path) -> subprocess.CompletedProcess:
    argv = list(cmd.argv)
    if cmd.tool == "nvcc":
        nvcc = _nvcc()
        if nvcc is None:
            pytest.skip("nvcc is not installed")
        full = [nvcc, *argv]
    else:
        if argv[0] in ("bench", "profile") and "--out" not in argv:  # never over recorded results
            argv += ["--out", str(workdir / argv[0])]
        full = [sys.executable, "-m", "phase24", *argv]
        _make_inputs(cmd, workdir)
    return subprocess.run(full, cwd=workdir, env=_env(cmd.env), capture_output=True, text=True,
                          timeout=TIMEOUT_S)


def _train_output(c: Command) -> str | None:
    a = c.argv
    if a[:2] != ["minigpt", "train"]:
        return None
    return (_opt(a, "--out") or [f"out/minigpt/{(_opt(a, '--impl') or ['numpy'])[0]}.npz"])[0]


def _make_inputs(cmd: Command, workdir: Path) -> None:
    """A command that reads a checkpoint gets it from the page's command that writes it."""
    for opt in ("--ckpt", "--init"):
        need = (_opt(cmd.argv, opt) or [None])[0]
        if need is None or (workdir / need).exists():
            continue
        producer = next((c for c in COMMANDS if _train_output(c) == need and kind(c)[0] == "cpu"), None)
        assert producer is not None, f"{cmd.line}: no command on the pages writes {need}"
        proc = _run(producer, workdir)
        assert proc.returncode == 0, f"{producer.line} (to make {need}) failed:\n{proc.stdout}{proc.stderr}"


def _params():
    out = []
    for c in COMMANDS:
        k, reason = kind(c)
        marks = []
        if k == "gpu":
            marks.append(pytest.mark.gpu)
        elif k == "long":
            marks.append(pytest.mark.skip(reason=f"long: {reason}"))
        elif k == "cpu-only" and GPU:
            marks.append(pytest.mark.skip(reason=reason))
        out.append(pytest.param(c, marks=marks, id=c.id))
    return out


# ----------------------------------------------------------------------------------------------
# The tests


def test_pages_show_commands():
    assert PAGES, "no lab pages found"
    assert len(COMMANDS) >= 10, f"only {len(COMMANDS)} commands found on {PAGES}"
    assert any(c.tool == "nvcc" for c in COMMANDS)


@pytest.mark.parametrize("cmd", [pytest.param(c, id=c.id) for c in COMMANDS if c.tool == "phase24"])
def test_command_parses(cmd: Command):
    from phase24.cli import build_parser

    try:
        build_parser().parse_args(cmd.argv)
    except SystemExit as err:
        pytest.fail(f"{cmd.line} (shown at {', '.join(cmd.where)}) does not parse: exit {err.code}")


@pytest.mark.parametrize("cmd", _params())
def test_command_runs(cmd: Command, workdir: Path):
    status, needle = expected(cmd)
    proc = _run(cmd, workdir)
    out = proc.stdout + proc.stderr
    shown = f"{cmd.line} (shown at {', '.join(cmd.where)})"
    assert "Traceback (most recent call last)" not in out, f"{shown} crashed:\n{out[-4000:]}"
    assert proc.returncode == status, f"{shown}: exit {proc.returncode}, expected {status}:\n{out[-4000:]}"
    if needle:
        assert needle in out, f"{shown}: the output lacks {needle!r}:\n{out[-4000:]}"


# Lab 00's standalone program: what CHECK prints without a GPU, and PASS with one.


def _build_hello(workdir: Path) -> Path:
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    arch = "sm_90a"
    if GPU:
        major, minor = torch.cuda.get_device_capability()
        arch = f"sm_{major}{minor}" + ("a" if major == 9 else "")
    exe = workdir / f"hello_{arch}"
    subprocess.run([nvcc, "-O2", f"-arch={arch}", "-o", str(exe), "labs/00-hello-cuda/hello.cu"],
                   cwd=workdir, check=True, capture_output=True, timeout=TIMEOUT_S)
    return exe


@pytest.mark.skipif(GPU, reason="this machine has a GPU: test_hello_passes_on_gpu runs instead")
def test_hello_reports_the_failing_call_without_gpu(workdir: Path):
    proc = subprocess.run([str(_build_hello(workdir))], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert re.search(r"hello\.cu:\d+: CUDA error cuda\w+: .+\n  in cuda\w+\(", proc.stderr), proc.stderr


@pytest.mark.gpu
def test_hello_passes_on_gpu(workdir: Path):
    proc = subprocess.run([str(_build_hello(workdir))], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "PASS:" in proc.stdout, proc.stdout + proc.stderr
