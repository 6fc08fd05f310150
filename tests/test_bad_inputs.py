"""Every bad input of every command is one line that names the problem and a non-zero status,
never a traceback, on a CPU machine: check, bench, profile, results and scripts/tune.py.
(tests/test_grader_defences.py has --timeout and --seed out of range, tests/test_bench_file.py
bench --file's refusals, tests/test_bridge_cache.py a full disk under the build cache.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
FILES = ROOT / "tests" / "learner_files"
GOOD_PY = (FILES / "good.py").read_text()
pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU machine's behaviour")
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


def one_line(argv: list[str], said: str, env: dict | None = None, script: str | None = None,
             rc: int | None = None) -> str:
    """Run the command; assert a non-zero status (or ``rc``), no traceback, and ``said`` within
    one line of its output; return the output."""
    command = [sys.executable, script] if script else [sys.executable, "-m", "phase24"]
    done = subprocess.run(command + argv, cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out
    assert done.returncode != 0 if rc is None else done.returncode == rc, out
    assert any(said in line for line in logical_lines(out)), out
    return out


def logical_lines(out: str) -> list[str]:
    """The output's lines, each with the continuation lines that wrapping it to 100 columns made
    (indented by 4) joined back."""
    return re.sub(r"\n {4}(?=\S)", " ", out).splitlines()


def learner(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("name,text,said", [
    ("syntax.py", GOOD_PY + "\ndef broken(:\n", "importing it failed: SyntaxError: invalid syntax "
                                                "(syntax.py, line "),
    ("no_rows.py", GOOD_PY.replace("def softmax_rows(", "def rows("),
     "it must define a function softmax_rows(x2d, out)"),
    ("one_arg.py", GOOD_PY.replace("def softmax_rows(x2d, out):", "def softmax_rows(x2d):"),
     "softmax_rows(x2d) cannot be called as softmax_rows(x2d, out)"),
    ("raises.py", GOOD_PY + "\nraise RuntimeError('my own mistake')\n",
     "importing it failed: RuntimeError: my own mistake"),
])
def test_a_python_file_that_cannot_be_graded(tmp_path, name, text, said):
    one_line(["check", "softmax", "--file", learner(tmp_path, name, text)], said)


@pytest.mark.parametrize("argv,said", [
    (["check", "softmax", "--file", "tests/learner_files/nosuch.py"],
     "no such file: tests/learner_files/nosuch.py"),
    (["check", "softmax", "--file", "README.md"], "README.md: expected a .cu (CUDA C) or a .py"),
    (["check", "softmax", "--file", "tests/learner_files/good.py", "--impl", "torch"],
     "--impl and --file do not go together"),
    (["check", "softmax", "--impl", "cuda-v99"], "unknown implementation(s) cuda-v99 of softmax"),
    (["check", "softmax", "--dtype", "float64"], "invalid choice: 'float64'"),
    (["bench", "softmax", "--shapes", "banana"], "--shapes: bad shape 'banana': write MxN"),
    (["bench", "softmax", "--shapes", "4096x0"], "M and N must be at least 1"),
    (["profile", "softmax", "--shape", "banana"], "--shape: bad shape 'banana': write MxN"),
    (["profile", "softmax", "--shape", "0x5"], "--shape: bad shape '0x5': M and N must be"),
    (["profile", "softmax", "--impl", "cuda-v99"], "unknown implementation(s) cuda-v99"),
    (["profile", "gemm", "--shape", "32768x8192"], "--shape: bad shape '32768x8192': write MxNxK"),
    (["results", "nosuch"], "unknown operation 'nosuch': the lab has gemm, softmax"),
    (["build", "--arch", "sm_75"], "invalid choice: 'sm_75'"),
    (["check", "softmax", "--file", ""], "--file '': name your kernel's file"),
    (["bench", "softmax", "--file", ""], "--file '': name your kernel's file"),
    (["profile", "softmax", "--file", ""], "--file '': name your kernel's file"),
    (["check", "softmax", "--timeout", "1e10"], "1e10: at most 86400 seconds (a day)"),
    (["bench", "softmax", "--load-timeout", "1e10"], "1e10: at most 86400 seconds (a day)"),
    (["dod", "nosuch"], "unknown operation 'nosuch': the lab has gemm, softmax"),
])
def test_a_bad_argument_is_one_line(argv, said):
    one_line(argv, said)


@pytest.mark.parametrize("argv", [["profile", "gemm", "--all"], ["profile", "gemm"],
                                  ["profile", "softmax", "--all"], ["profile", "softmax"]])
def test_each_operation_profiles_at_its_own_shape_by_default(argv):
    """Without --shape, an operation is profiled at its own recorded shape, never another op's."""
    one_line(argv, "No GPU here: Nsight Compute needs one", rc=0)


@needs_nvcc
def test_a_cu_file_that_does_not_compile_shows_the_compilers_message_and_line(tmp_path):
    good = (FILES / "good.cu").read_text()
    shutil.copy(FILES / "row_softmax.cuh", tmp_path)
    path = learner(tmp_path, "mine.cu", "// my kernel\nint oops = ;\n" + good)
    out = one_line(["check", "softmax", "--file", path], f"{path}(2): error: expected an "
                                                         "expression")
    assert "FAIL: nvcc failed on mine.cu for sm_80" in out, out


@needs_nvcc
def test_a_full_disk_while_compiling_is_one_line(tmp_path):
    from nvcc_helpers import CountingNvcc

    nvcc = CountingNvcc(tmp_path)
    one_line(["check", "softmax", "--file", str(FILES / "good.cu")],
             "FAIL: no space left on the disk: the kernel cache",
             env={"NVCC": str(nvcc.path), "PHASE24_CACHE": str(tmp_path / "cache"),
                  "NVCC_TEST_FAIL": "nvcc fatal: Could not write: No space left on device"})


@pytest.mark.parametrize("argv,said", [
    (["softmax", "cuda", "out.json"], "timing needs an NVIDIA GPU, and there is none here"),
    (["softmax", "cuda", "--from", "nosuch.json", "best.json"],
     "--from nosuch.json: No such file or directory"),
    (["softmax", "cuda", "--from", "README.md", "best.json"], "README.md: not JSON"),
    (["softmax", "cuda", "--from", "pyproject.toml", "best.json"], "not JSON"),
])
def test_the_tuner_refuses_in_one_line(argv, said, tmp_path):
    if "--from" in argv and argv[argv.index("--from") + 1] != "nosuch.json":
        argv = [*argv]
        argv[argv.index("--from") + 1] = str(ROOT / argv[argv.index("--from") + 1])
    one_line([*argv[:-1], str(tmp_path / argv[-1])], said, script=str(ROOT / "scripts/tune.py"))
    assert not (tmp_path / "best.json").exists()


def test_a_damaged_results_file_is_skipped_with_a_line(tmp_path, monkeypatch, capsys):
    from phase24.harness import report
    from phase24.harness.ops import get

    for gpu, text in (("h200", '{"records": ['), ("a100", "[1, 2]")):
        (tmp_path / gpu / "softmax").mkdir(parents=True)
        (tmp_path / gpu / "softmax" / "softmax.json").write_text(text)
    monkeypatch.setattr(report, "RESULTS", tmp_path)
    monkeypatch.setattr(report, "REPO", tmp_path)
    assert report.recorded(get("softmax")) == []
    said = logical_lines(capsys.readouterr().out)
    assert len(said) == 2 and all(line.startswith("skipped ") for line in said), said
    assert any("h200/softmax/softmax.json: not a readable benchmark run" in s for s in said)


def test_out_of_gpu_memory_is_one_line(monkeypatch, capsys):
    """A GPU another process has filled: one line that says so, status 1, no traceback."""
    from phase24 import cli

    def full(args):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 "
                                          "has a total capacity of 139.8 GiB of which 1.1 GiB "
                                          "is free.\nProcess 4242 has 120 GiB memory in use.")
    monkeypatch.setattr(cli, "cmd_bench", full)
    assert cli.main(["bench", "gemm"]) == 1
    said = capsys.readouterr()
    assert said.out == "" and said.err.count("\n") == 1, said
    assert said.err.startswith("Out of GPU memory: CUDA out of memory. Tried to allocate 2.00 GiB")
    assert "Process 4242 has 120 GiB" in said.err


def test_a_damaged_tuned_table_falls_back_with_one_line(tmp_path, capsys):
    from phase24.core import tuned

    for text in ("{not json", '{"gpu": "G", "best": [{"no key": 1}]}', "[1, 2]"):
        path = tmp_path / "t.json"
        path.write_text(text)
        tuned.clear()
        assert tuned.load(path, "G", lambda e: (e["shape"],), lambda e: e["config"]) == {}
    err = capsys.readouterr().err
    assert err.count("damaged tuned table") == 3 and "untuned choices" in err, err


def test_an_output_that_overlaps_an_input_is_refused():
    import torch

    from phase24.core.op import OpArgumentError
    from phase24.core.outputs import overlaps
    from phase24.gemm import IMPLEMENTATIONS as GEMMS
    from phase24.softmax import IMPLEMENTATIONS as SOFTMAXES

    x = torch.randn(8, 64)
    assert overlaps(x, x[2:4]) and overlaps(x.t(), x) and not overlaps(x[:4], x[4:])
    for name in ("torch", "triton"):
        with pytest.raises(OpArgumentError, match="out overlaps the input"):
            SOFTMAXES[name](x, out=x)
    a = torch.randn(16, 16)
    with pytest.raises(OpArgumentError, match="out overlaps a"):
        GEMMS["triton"](a, torch.randn(16, 16), out=a)
    b = torch.randn(16, 16)
    with pytest.raises(OpArgumentError, match="out overlaps b"):
        GEMMS["triton"](torch.randn(16, 16), b, out=b)


def test_a_log_that_cannot_be_written_is_one_line_and_the_verdicts_go_on(tmp_path, capsys):
    from phase24.harness.grade import Table
    from phase24.harness.ops import get

    op = get("softmax")
    (tmp_path / "out").write_text("a file where out/ should be a folder")
    with pytest.raises(SystemExit, match="cannot write the check's log .*Not a directory"):
        Table(op, 1, tmp_path / "out" / "check" / "x.log")
    table = Table(op, 1, tmp_path / "x.log")
    table.ready([("torch", "float32", "1x1"), ("torch", "float32", "2x2")])
    if Path("/dev/full").exists():
        table.file = open("/dev/full", "w")  # a full disk from here on
    verdict = dict(impl="torch", dtype="float32", case="1x1", rel_l2=0.0, worst=0.0, extra=0.0,
                   ok=True, why="", na=False)
    table.verdict(0, verdict)
    table.verdict(1, {**verdict, "case": "2x2"})
    assert table.summary() == 0
    out = capsys.readouterr().out
    assert "2 passed, 0 failed" in out
    if Path("/dev/full").exists():
        assert " ".join(out.split()).count("could not be written") == 1, out  # lines wrap


def test_ctrl_c_in_a_command_is_one_line_and_status_130(monkeypatch, capsys):
    from phase24 import cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "cmd_doctor", interrupted)
    assert cli.main(["doctor"]) == 130
    err = capsys.readouterr().err
    assert "stopped by Ctrl-C during `doctor`" in err and "Traceback" not in err
