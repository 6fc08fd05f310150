"""Every shell command shown on the pages runs as the page shows it, from a fresh shell.

The commands are read from the fenced ``bash`` blocks of the README, the home page and the English
lab and solutions pages (the Spanish twins hold identical code blocks, which tests/test_docs.py
enforces): lines that start with ``python -m phase24`` (after any ``VAR=value`` words) or ``nvcc``.

How they run: lab 00's set-up block is the source of the first steps. Its ``bash scripts/setup.sh``
runs once, from a fresh shell in the repository; each command then runs in a fresh shell of its own
(``bash --noprofile --norc``, an environment of PATH without the repository's .venv, HOME, and the
kernel caches' and thread counts' variables where set) that runs the block's
``source .venv/bin/activate`` in the repository and then the command, exactly as shown, in a
scratch directory holding ``labs/`` as committed (the starters as the pages hand them out, not the learner's working copies), so the files
a command writes (``out/minigpt/*.npz``, ``./hello``) stay out of the tree. One change: a ``bench`` or ``profile`` without ``--out`` is given a scratch ``--out`` on a GPU,
so that recorded results are never overwritten.

Each command is two tests: ``test_command_on_cpu`` (skipped, visibly, where there is a GPU) expects
what a machine without a GPU does (the GPU commands say what they skip and why, and exit 0), and
``test_command_on_gpu`` (marked ``gpu``: run by ``scripts/gpu-session.sh``) expects the GPU's results.
Long commands, listed in ``LONG`` with the reason, are skipped everywhere; each names where it
does run. Whatever the machine, every ``phase24`` command must parse with the real argument
parser, so a page cannot show an option or a subcommand that does not exist.
"""

from __future__ import annotations

import fcntl
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch

from committed import committed_tree

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "phase-24-cuda-triton"
LAB00 = DOCS / "lab" / "00-hello-cuda.md"
PAGES = [ROOT / "README.md", ROOT / "docs" / "index.md"] + sorted(
    p for folder in ("lab", "solutions") for p in (DOCS / folder).glob("*.md")
    if not p.name.endswith(".es.md"))
GPU = torch.cuda.is_available()
NVCC = shutil.which("nvcc")  # the system's, or .venv/bin/nvcc (NVIDIA's wheels: scripts/setup.sh)
TIMEOUT_S = 600
# What a fresh shell inherits besides PATH and HOME: where the kernel caches are, when set
# (scripts/gpu-session.sh points them into the tree), which GPUs the machine lends, and how many
# threads a process may use (tests/conftest.py sets one per pytest-xdist worker).
KEPT_VARIABLES = ("PHASE24_CACHE", "TRITON_CACHE_DIR", "CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS",
                  "OPENBLAS_NUM_THREADS")

# Commands too long for CI on a CPU, with the reason and where they do run. Matched on the whole
# command line after whitespace normalisation.
LONG = {
    "python -m phase24 check softmax":
        "every implementation on every case: on a CPU, Triton's interpreter takes minutes; "
        "`bash run.sh` runs it on both machines (its check step; results/cpu/run.log), "
        "tests/test_cli_cpu.py runs it on one case",
    "python -m phase24 minigpt parity":
        "the full parity report (100 + 100 exact steps) takes over 2 minutes on 2 cores; "
        "tests/test_minigpt_parity.py covers it, and `python -m phase24 run` shows it",
    "python -m phase24 minigpt train --impl torch":
        "300 steps of the small model; the tiny-preset command on the same page runs here",
    "python -m phase24 minigpt speed":
        "the small model on every backend; scripts/gpu-session.sh runs it on the H200 (minigpt step)",
    "python -m phase24 bench softmax":
        "the full benchmark sweep; scripts/gpu-session.sh runs it (bench step)",
    "python -m phase24 profile softmax --all":
        "Nsight Compute on seven kernels, about 5 minutes: scripts/gpu-session.sh's profile step "
        "runs it (results/h200/profiles/)",
    "python -m phase24 bench gemm --impl cublas cuda triton":
        "the full GEMM sweep, the main job's bench step for gemm: `bash run.sh` runs it as "
        "written (results/h200/softmax/run-16bcbe5.log)",
    "python -m phase24 bench softmax --impl torch cuda":
        "the full benchmark sweep for two implementations; scripts/gpu-session.sh runs the sweep",
    "python -m phase24 minigpt train --impl torch --device cuda --steps 1000":
        "1000 training steps of the small model; not part of any automatic run (its run on the "
        "H200, as written: results/h200/tests/minigpt-commands-bff14d4.log)",
}

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<info>[^`]*)$")
COMMAND = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:python -m phase24|nvcc)\b")


@dataclass
class Command:
    line: str                      # as shown on the page, whitespace normalised, comment removed
    shown: str = ""                # as shown, comment included: what the shell runs
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
        for n, shown in bash_lines(page.read_text(encoding="utf-8")):
            if not COMMAND.match(shown):
                continue
            line = shown.split(" #", 1)[0].strip()
            where = f"{page.relative_to(ROOT)}:{n}"
            if line in found:
                found[line].where.append(where)
                continue
            words = shlex.split(line)
            env = {}
            while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
                k, v = words.pop(0).split("=", 1)
                env[k] = v
            if words[0] == "nvcc":
                cmd = Command(line, shown, [where], env, words[1:], "nvcc")
            else:
                assert words[:3] == ["python", "-m", "phase24"], line
                cmd = Command(line, shown, [where], env, words[3:])
            found[line] = cmd
    return list(found.values())


def setup_block() -> tuple[list[str], list[str]]:
    """Lab 00's first steps: (the set-up commands, run once; the activation, run in every shell)."""
    lines = [line.split(" #", 1)[0].strip() for _, line in bash_lines(LAB00.read_text("utf-8"))]
    for i, line in enumerate(lines[:-1]):
        if line.startswith("bash scripts/setup.sh") and lines[i + 1].startswith("source "):
            return [line], [lines[i + 1]]
    raise AssertionError(f"{LAB00.name} shows no `bash scripts/setup.sh` then `source ...` block")


COMMANDS = lab_commands()
SETUP, ACTIVATE = setup_block()


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


def needs_gpu(cmd: Command) -> str:
    """What of the command needs a GPU, in words ('' when a CPU runs all of it)."""
    a = cmd.argv
    if cmd.tool == "nvcc":
        return ""
    if a[0] in ("hello", "bench", "profile"):
        return f"`{a[0]}`"
    if "--device" in a and (_opt(a, "--device") or [""])[0].startswith("cuda"):
        return "--device cuda"
    if a[0] == "check" and any(i.startswith("cuda") for i in _opt(a, "--impl") or []):
        return "the CUDA C implementations"
    return ""


def expected(cmd: Command, gpu: bool) -> tuple[int, list[str]]:
    """(exit status, strings the output must contain) on a machine with or without a GPU."""
    a = cmd.argv
    if cmd.tool == "nvcc":
        return 0, []
    file = (_opt(a, "--file") or [""])[0]
    if a[0] == "check" and file.startswith("labs/starters/"):
        if file.endswith(".cu") and not gpu:  # emulated on a CPU: its verdicts, then its counts
            return 1, [" failed (seed", f"ABI: {a[1]}_f32: found", "counts, not times"]
        return 1, [" failed (seed"]  # the starter runs and fails by design until the learner fills it
    if a[0] == "minigpt" and a[1] == "parity" and file.startswith("labs/starters/"):
        return 1, ["FAIL before step 1"]  # the port starter fails by design until it is written
    if a[0] == "minigpt" and a[1] == "parity":
        return 0, ["PASS: your MLP and cross_entropy match" if file else "overall: PASS"]
    if not gpu and a[0] == "minigpt" and needs_gpu(cmd) == "--device cuda":
        return 2, ["--device cuda: this machine has no CUDA GPU"]  # one line: use --device cpu
    if not gpu and a[0] == "bench" and file:
        return 1, ["No GPU here: timing"]  # a learner's file: nothing recorded to show instead
    if a[0] == "bench" and file.startswith("labs/starters/"):
        return 1, ["does not pass check: it is not timed"]  # the starter, as committed
    if not gpu and a[0] == "hello":
        return 0, ["matches a + b exactly (emulated on the CPU"]  # lab 00 in the emulator
    if not gpu and a[0] == "profile" and file:  # his kernel: no profile, the recorded ones named
        return 1, ["No GPU here: Nsight Compute profiles", "labs/starters/my_profile.md"]
    if not gpu and a[0] in ("bench", "profile"):
        return 0, ["No GPU here"]
    if a[0] == "dod":  # the starters as committed: the Definition of Done is not done yet
        return 1, ["of 6 done", "not yet", "next: python -m phase24"]
    if a[0] == "check":
        impls = _opt(a, "--impl") or []
        if not gpu and impls and all(i.startswith("cuda") for i in impls):
            return 1, ["needs a GPU: skipped", "nothing was checked"]
        return 0, [" passed, 0 failed"] + (["needs a GPU: skipped"] if needs_gpu(cmd) and not gpu
                                          else [])
    return 0, []


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("lab-commands")
    committed_tree("labs", d)  # the starters as committed, not the learner's working copies
    # One set-up at a time: pytest-xdist runs this fixture once per worker, and two set-ups at
    # once in one checkout would remake each other's .venv.
    with open(Path(tempfile.gettempdir()) / "phase24-setup.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = _fresh_shell(" && ".join(SETUP), ROOT)
    assert proc.returncode == 0, f"{SETUP} (lab 00's set-up) failed:\n{proc.stdout}{proc.stderr}"
    return d


def fresh_env() -> dict[str, str]:
    """A new shell's environment: PATH without this repository's virtual environment (a
    machine's own Python stays, even when it is itself a venv, as on the H200 image, where
    python3 is /opt/torch/.venv's), HOME, the kept variables; no PYTHONPATH, no VIRTUAL_ENV."""
    path = [p for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
            if p and not Path(p).resolve().is_relative_to(ROOT)]
    env = {"PATH": os.pathsep.join(path), "HOME": os.environ.get("HOME", "/tmp")}
    env.update({k: os.environ[k] for k in KEPT_VARIABLES if k in os.environ})
    return env


def _fresh_shell(script: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "--noprofile", "--norc", "-c", script], cwd=cwd,
                          env=fresh_env(), capture_output=True, text=True, timeout=TIMEOUT_S)


def _run(cmd: Command, workdir: Path) -> subprocess.CompletedProcess:
    shown = cmd.shown
    if GPU and cmd.tool == "phase24" and cmd.argv[0] in ("bench", "profile") and \
            "--out" not in cmd.argv and "--file" not in cmd.argv:  # never over the recorded
        # results (a learner's file's runs go to out/history/ in the workdir: --out is refused)
        shown = f"{cmd.line} --out {shlex.quote(str(workdir / cmd.argv[0]))}"
    _make_inputs(cmd, workdir)
    script = " && ".join([f"cd {shlex.quote(str(ROOT))}", *ACTIVATE,
                          f"cd {shlex.quote(str(workdir))}", shown])
    return _fresh_shell(script, workdir)


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
        producer = next((c for c in COMMANDS if _train_output(c) == need and c.line not in LONG
                         and not needs_gpu(c)), None)
        assert producer is not None, f"{cmd.line}: no command on the pages writes {need}"
        proc = _run(producer, workdir)
        assert proc.returncode == 0, f"{producer.line} (to make {need}) failed:\n{proc.stdout}{proc.stderr}"


def needs_nvcc(cmd: Command) -> bool:
    """The command compiles CUDA C: nvcc itself, `build`, or a check of a .cu file."""
    a = cmd.argv
    return cmd.tool == "nvcc" or a[0] == "build" or \
        (a[0] in ("check", "bench") and (_opt(a, "--file") or [""])[0].endswith(".cu"))


def _params(gpu: bool):
    out = []
    for c in COMMANDS:
        marks = [pytest.mark.gpu] if gpu else \
            [pytest.mark.skipif(GPU, reason="this machine has a GPU: test_command_on_gpu runs it")]
        if c.line in LONG:
            marks.append(pytest.mark.skip(reason=f"long: {LONG[c.line]}"))
        if needs_nvcc(c):
            marks.append(pytest.mark.skipif(NVCC is None, reason="needs nvcc, not on this machine "
                                            "(scripts/setup.sh installs NVIDIA's wheels where it can)"))
        out.append(pytest.param(c, marks=marks, id=c.id))
    return out


# ----------------------------------------------------------------------------------------------
# The tests


def test_pages_show_commands():
    assert PAGES, "no lab pages found"
    assert len(COMMANDS) >= 10, f"only {len(COMMANDS)} commands found on {PAGES}"
    assert any(c.tool == "nvcc" for c in COMMANDS)


def test_every_long_command_is_on_a_page():
    """A LONG entry whose command left the pages would skip nothing and hide the drift."""
    shown = {c.line for c in COMMANDS}
    gone = [line for line in LONG if line not in shown]
    assert not gone, f"LONG lists commands no page shows: {gone}"


def test_first_steps_are_the_same_everywhere():
    """The README, the home page and lab 00 show the same set-up, before any phase24 command."""
    for page in (ROOT / "README.md", ROOT / "docs" / "index.md", LAB00):
        lines = [line for _, line in bash_lines(page.read_text(encoding="utf-8"))]
        first = next(i for i, line in enumerate(lines) if COMMAND.match(line) and "phase24" in line)
        for step in SETUP + ACTIVATE:
            assert step in [line.split(" #", 1)[0].strip() for line in lines[:first]], \
                f"{page.name}: `{step}` is not shown before its first phase24 command"


@pytest.mark.parametrize("cmd", [pytest.param(c, id=c.id) for c in COMMANDS if c.tool == "phase24"])
def test_command_parses(cmd: Command):
    from phase24.cli import build_parser

    try:
        build_parser().parse_args(cmd.argv)
    except SystemExit as err:
        pytest.fail(f"{cmd.line} (shown at {', '.join(cmd.where)}) does not parse: exit {err.code}")


def _check(cmd: Command, workdir: Path, gpu: bool) -> None:
    status, needles = expected(cmd, gpu)
    proc = _run(cmd, workdir)
    out = proc.stdout + proc.stderr
    shown = f"{cmd.line} (shown at {', '.join(cmd.where)})"
    assert "Traceback (most recent call last)" not in out, f"{shown} crashed:\n{out[-4000:]}"
    assert "RuntimeWarning" not in out, f"{shown} shows NumPy's warnings:\n{out[-4000:]}"
    assert proc.returncode == status, f"{shown}: exit {proc.returncode}, expected {status}:\n{out[-4000:]}"
    flat = " ".join(out.split())  # a message may be wrapped to the terminal's width
    for needle in needles:
        assert needle in flat, f"{shown}: the output lacks {needle!r}:\n{out[-4000:]}"


@pytest.mark.parametrize("cmd", _params(gpu=False))
def test_command_on_cpu(cmd: Command, workdir: Path):
    _check(cmd, workdir, gpu=False)


@pytest.mark.parametrize("cmd", _params(gpu=True))
def test_command_on_gpu(cmd: Command, workdir: Path):
    _check(cmd, workdir, gpu=True)


# Lab 00's standalone program: what CHECK prints without a GPU, and PASS with one.


def _build_hello(workdir: Path) -> Path:
    arch = "sm_90a"
    if GPU:
        major, minor = torch.cuda.get_device_capability()
        arch = f"sm_{major}{minor}" + ("a" if major == 9 else "")
    exe = workdir / f"hello_{arch}"
    proc = _fresh_shell(" && ".join([f"cd {shlex.quote(str(ROOT))}", *ACTIVATE,
                                     f"cd {shlex.quote(str(workdir))}",
                                     f"nvcc -O2 -arch={arch} -o {exe} labs/00-hello-cuda/hello.cu"]),
                        workdir)
    if proc.returncode == 127:
        pytest.skip("nvcc is not installed")
    assert proc.returncode == 0, proc.stdout + proc.stderr
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
