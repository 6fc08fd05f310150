"""`dod OP`: the learner's Definition of Done, one line per item, each done, not yet or needs a GPU,
with the command that moves it.

The items are the specification's: his CUDA C kernel passes its check; it reaches 30% of the
library's speed (torch.softmax, cuBLAS) at the plan's representative shape, in float32, in a run of
`bench OP --file` of that same file (its SHA-256) from his history; his Triton kernel passes; his
profile annotation is filled; his PyTorch port passes `minigpt parity --file`; his learner profile
names this phase. The files are the starters' (labs/starters/) unless he names others. Each check
runs as its own command in a child process, as he would type it: this process never imports his
code. The exit status is 0 only when every item this machine can check is done.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

from phase24.core.layout import Columns, out, say
from phase24.core.op import Op
from phase24.core.provenance import REPO

BAR = 0.30  # the specification's: 30% of the library's speed
DTYPE = "float32"
# The plan's representative shape per operation: softmax's middle bulk row (2^28 values in rows of
# 4096), GEMM's square that every recorded ladder times (docs/.../PHASE_24_PLAN.md §6).
REPRESENTATIVE = {"softmax": (65536, 4096), "gemm": (4096, 4096, 4096)}
LIBRARY = {"softmax": "torch.softmax", "gemm": "cuBLAS"}
STARTERS = REPO / "labs" / "starters"
DEFAULTS = {"cuda": {"softmax": "my_softmax_v3.cu", "gemm": "my_gemm_v3.cu"},
            "triton": {"softmax": "my_softmax.py", "gemm": "my_gemm.py"}}
ANNOTATION = STARTERS / "my_profile.md"
PROFILE_PAGE = REPO / "docs" / "learners" / "borja" / "profile.md"
PHASE = "Phase 24"

DONE, NOT_YET, NEEDS_GPU = "done", "not yet", "needs a GPU"


def shape_text(op_name: str) -> str:
    return "x".join(map(str, REPRESENTATIVE[op_name]))


def _rel(path: Path) -> str:
    path = Path(path).resolve()
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def _run(argv: list[str], timeout: float) -> tuple[int, str]:
    """A command of the lab run as he would run it: (status, its last meaningful line)."""
    try:
        done = subprocess.run([sys.executable, "-m", "phase24", *argv], cwd=REPO, text=True,
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 1, f"took longer than {timeout:g} s"
    lines = [ln.strip() for ln in (done.stdout + done.stderr).splitlines() if ln.strip()]
    verdict = [ln for ln in lines if re.search(r"\d+ passed, \d+ failed|^PASS|^FAIL", ln)]
    return done.returncode, (verdict or lines or ["no output"])[-1][:200]


def _command(path: Path, argv: list[str], timeout: float) -> tuple[str, str]:
    """Done when the lab's command on the file exits 0 (not yet when the file is missing)."""
    if not path.is_file():
        return NOT_YET, f"{_rel(path)}: no such file"
    rc, line = _run([*argv, "--file", str(path)], timeout)
    return (DONE if rc == 0 else NOT_YET), line


def ratio(op: Op, run: dict) -> float | None:
    """The library's time / the file's at the representative shape and dtype in one run (a line
    of the history, harness/history.py); None if that run did not time it."""
    from phase24.harness import history

    want = (DTYPE, *REPRESENTATIVE[op.name])
    try:
        mine = [r for r in run["records"] if history.key(op, r) == want]
        theirs = [r for r in run["baseline_records"] if history.key(op, r) == want]
        return float(theirs[0]["us"]) / float(mine[0]["us"]) if mine and theirs else None
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None


def ratio_from_history(op: Op, path: Path) -> float | None:
    """The best ratio() over the runs of this very file (same SHA-256) whose outputs were all
    right; None if none timed it."""
    from phase24.harness import history

    if not path.is_file():
        return None
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    found = [ratio(op, run) for run in history.load(history.path_for(op))[0]
             if run.get("sha256") == digest and run.get("ok")]
    return max((r for r in found if r is not None), default=None)


def fast_enough(op: Op, path: Path, gpu: bool) -> tuple[str, str]:
    from phase24.harness import history

    r = ratio_from_history(op, path)
    where = f"{shape_text(op.name)} {DTYPE}"
    if r is not None and r >= BAR:
        return DONE, f"{r:.0%} of {LIBRARY[op.name]} at {where} (your history)"
    if r is not None:
        return NOT_YET, f"best {r:.0%} of {LIBRARY[op.name]} at {where}: the bar is {BAR:.0%}"
    if not gpu:
        return NEEDS_GPU, (f"this file was never timed at {where} (history: "
                           f"{_rel(history.path_for(op))})")
    return NOT_YET, f"this file was never timed at {where}"


def annotated(path: Path) -> tuple[str, str]:
    from phase24.harness.annotation import gaps as annotation_gaps

    gaps = annotation_gaps(path)
    return (NOT_YET, "to fill: " + ", ".join(gaps)) if gaps else (DONE, _rel(path))


def profile_updated(path: Path) -> tuple[str, str]:
    if not path.is_file():
        return NOT_YET, f"{_rel(path)}: no such file"
    m = re.search(r"^\*\*Updated after:\*\*(.*)$", path.read_text(errors="replace"), re.M)
    if m and PHASE in m.group(1):
        return DONE, f"{_rel(path)} is updated after {PHASE}"
    return NOT_YET, f"{_rel(path)}: its 'Updated after:' line does not name {PHASE}"


def run(op: Op, args, gpu: bool) -> int:
    cuda = Path(args.cuda or STARTERS / DEFAULTS["cuda"][op.name])
    triton = Path(args.triton or STARTERS / DEFAULTS["triton"][op.name])
    port = Path(args.port or STARTERS / "my_port.py")
    notes = Path(args.annotation or ANNOTATION)
    page = Path(args.profile_page or PROFILE_PAGE)
    shape = shape_text(op.name)
    items = [
        ("your CUDA C kernel passes", lambda: _command(cuda, ["check", op.name], args.timeout),
         f"check {op.name} --file {_rel(cuda)}"),
        (f"it reaches {BAR:.0%} of {LIBRARY[op.name]}", lambda: fast_enough(op, cuda, gpu),
         f"bench {op.name} --file {_rel(cuda)} --dtype {DTYPE}"),
        ("your Triton kernel passes", lambda: _command(triton, ["check", op.name], args.timeout),
         f"check {op.name} --file {_rel(triton)}"),
        ("your profile is annotated", lambda: annotated(notes),
         f"profile {op.name} --file {_rel(cuda)}, then fill {_rel(notes)}"),
        ("your port equals the NumPy model",
         lambda: _command(port, ["minigpt", "parity"], args.timeout),
         f"minigpt parity --file {_rel(port)}"),
        ("your learner profile is updated", lambda: profile_updated(page), f"edit {_rel(page)}"),
    ]
    say(f"The Definition of Done of Phase 24, {op.name} path ({'a GPU' if gpu else 'no GPU'} "
        "here); each line runs its own command:")
    cols = Columns(["item", "state"], [33, 11])
    cols.header()
    states = []
    for name, probe, command in items:
        state, why = probe()
        states.append(state)
        cols.row([name, state], why)
        if state != DONE:
            out("    next: " + (command if command.startswith("edit") else
                               f"python -m phase24 {command}"))
    done = states.count(DONE)
    gpu_only = states.count(NEEDS_GPU)
    out(f"{done} of {len(items)} done" + (f"; {gpu_only} need(s) a GPU" if gpu_only else ""))
    return 0 if all(s in (DONE, NEEDS_GPU) for s in states) else 1


def add_parser(sub, op_help: str):
    """The `dod` command's arguments, on the CLI's subparsers; the parser, for its function."""
    from phase24.harness import argtypes

    s = sub.add_parser("dod", help="your Definition of Done: what you have done, what is left",
                       description="One line per item of the learner's Definition of Done, each "
                       "done, not yet or needs a GPU, with the command that moves it; your files "
                       "are the starters' (labs/starters/) unless you name others.")
    s.add_argument("op", help=op_help + ": the path you chose")
    s.add_argument("--cuda", metavar="F", help="your CUDA C kernel (default: the v3 starter)")
    s.add_argument("--triton", metavar="F", help="your Triton kernel (default: the starter)")
    s.add_argument("--port", metavar="F", help="your port (default: labs/starters/my_port.py)")
    s.add_argument("--annotation", metavar="F",
                   help="your profile annotation (default: labs/starters/my_profile.md)")
    s.add_argument("--profile-page", metavar="F", help="your learner profile page")
    s.add_argument("--timeout", type=argtypes.seconds, default=900, metavar="S",
                   help="seconds each check may take (default 900)")
    return s

