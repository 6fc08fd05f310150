"""The command line on a machine without a GPU: what runs, what is skipped and why, and output
that fits 100 columns."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from phase24.core.layout import num, sci

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU machine's behaviour")


def phase24(*argv: str, rc: int = 0) -> str:
    proc = subprocess.run([sys.executable, "-m", "phase24", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == rc, out
    assert "Traceback" not in out and "RuntimeWarning" not in out, out
    wide = [line for line in proc.stdout.splitlines() if len(line) > 100]
    assert not wide, "\n".join(wide)
    return out


def test_cuda_alone_says_it_needs_a_gpu_and_what_runs_here():
    out = phase24("check", "softmax", "--impl", "cuda-naive", rc=1)  # nothing checked: no pass
    assert "cuda-naive: needs a GPU: skipped" in out
    assert "Nothing to check on this machine: nothing was checked" in out and "python -m phase24 build" in out
    assert "rel L2" not in out  # no empty table


def test_the_default_check_runs_torch_and_triton_in_the_interpreter():
    out = phase24("check", "softmax", "--case", "33x127", "--seed", "3")
    flat = " ".join(out.split())
    cuda = ", ".join(n for n in ("cuda-naive", *(f"cuda-v{i}" for i in range(1, 11)), "cuda"))
    assert f"{cuda}: needs a GPU: skipped" in flat
    assert "triton-v4, triton-v5: Gluon has no interpreter" in flat
    assert "Triton's interpreter runs the Triton kernels on this CPU" in flat
    table = out[out.index("implementation  passed"):].splitlines()[2:8]
    assert {line.split()[0] for line in table} == {"torch", "triton-naive", "triton-v1",
                                                   "triton-v2", "triton-v3", "triton"}
    assert all(line.split()[1:] == ["3", "0", "0"] for line in table), out
    assert "18 passed, 0 failed (seed 3; every case: " in out
    log = Path(out.split("every case: ")[1].split(")")[0])
    assert sum(line.rstrip().endswith("  ok") for line in log.read_text().splitlines()) == 18


def test_results_fit_100_columns_and_show_every_rung():
    out = phase24("results", "softmax", "--all")
    assert "cuda-v10" in out and "triton-v5" in out  # from the runs that recorded them
    assert "results/h200/softmax/softmax.json" in out
    assert "a caller's time per call" in out  # loop_us beside the copy on the few-row shapes


def test_an_unknown_operation_names_the_ones_there_are():
    out = phase24("check", "nosuch", rc=1)
    assert "unknown operation 'nosuch': the lab has gemm, softmax" in out


def test_bench_without_a_gpu_shows_the_recorded_figures_asked_for():
    out = phase24("bench", "softmax", "--impl", "torch", "cuda-v1", "--shapes",
                  "1024x262144,4096x4096", "--dtype", "float32")
    assert "No GPU here: nothing is timed" in out
    tables = [line for line in out.splitlines() if line.startswith("float32")]
    assert tables and all(line.split()[1] == "1024x262144" for line in tables), out
    assert "cuda-v1" in out and "triton" not in out.replace("Triton", "")
    assert "not recorded: 4096x4096" in out


def test_bench_refuses_what_is_not_an_implementation():
    out = phase24("bench", "softmax", "--impl", "cuda-v99", rc=1)
    assert "unknown implementation(s) cuda-v99 of softmax" in out


def test_numbers_are_short():
    assert num(9978594670988226.0) == "1.0e+16"
    assert num(0.25) == "0.25" and num(float("inf")) == "inf"
    assert sci(4.1e-8) == "4.1e-08"


def test_the_main_jobs_steps_are_commands_of_the_parser():
    from phase24.cli import build_parser
    from phase24.harness.mainjob import steps

    for gpu in (False, True):
        for _, argv in steps(gpu):
            build_parser().parse_args(argv)


def test_the_default_implementation_says_what_works_on_a_cpu():
    from phase24.softmax import SoftmaxArgumentError, softmax

    with pytest.raises(SoftmaxArgumentError, match="no CUDA GPU: here use softmax\\(x, impl='torch'\\)"):
        softmax(torch.randn(2, 3))
    with pytest.raises(SoftmaxArgumentError, match="dtype torch.int32") as err:
        softmax(torch.ones(2, 3, dtype=torch.int32))
    assert "impl='torch'" not in str(err.value)  # another problem keeps its own message
