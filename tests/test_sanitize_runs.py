"""What compute-sanitizer watches (scripts/sanitize.py OP): every implementation of the ladders
is among an operation's runs, and the script says in one line that it needs a GPU."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from phase24.softmax import IMPLEMENTATIONS
from phase24.softmax.cuda.configs import SLOTS
from phase24.softmax.sanitize import runs

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("mode,prefix", [("full", "cuda"), ("small", "cuda"),
                                         ("triton", "triton")])
def test_every_implementation_of_a_ladder_is_watched(mode, prefix):
    names = {r[0].split(" ")[0] for r in runs(mode)}
    assert {n for n in IMPLEMENTATIONS if n.startswith(prefix)} <= names


@pytest.mark.parametrize("mode", ["full", "small"])
def test_every_configured_rung_runs_forced(mode):
    forced = {r[0].split("(")[0] for r in runs(mode) if r[0].startswith("rows_")}
    assert {f"rows_{kind}" for kind in SLOTS} <= forced


@pytest.mark.skipif(torch.cuda.is_available(), reason="the refusal of a machine with no GPU")
def test_without_a_gpu_the_script_says_so_in_one_line():
    done = subprocess.run([sys.executable, "scripts/sanitize.py", "softmax"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout.strip().count("\n") == 0 and "GPU" in done.stdout


@pytest.mark.parametrize("mode,prefix", [("full", "cuda"), ("small", "cuda"),
                                         ("triton", "triton")])
def test_every_gemm_implementation_is_watched(mode, prefix):
    from phase24.gemm import IMPLEMENTATIONS as GEMM
    from phase24.gemm.sanitize import runs as gemm_runs

    names = {r[0] for r in gemm_runs(mode)}
    assert {n for n in GEMM if n.startswith(prefix)} <= names


@pytest.mark.parametrize("mode", ["full", "small"])
def test_every_gemm_configuration_runs_forced(mode):
    from phase24.gemm.cuda.configs import RECORDS, configs
    from phase24.gemm.sanitize import runs as gemm_runs

    names = {r[0] for r in gemm_runs(mode) if r[0].startswith("forced_")}
    walked = {n for n in names if n.endswith("_on_2_sms")}
    tunable = [kind for kind, r in RECORDS.items() if r.params]  # every rung with a table
    assert {f"forced_{kind}{c}" for kind in tunable for c in configs(kind)} == names - walked
    # and each persistent configuration on two blocks that walk several tiles each
    assert {f"forced_{kind}{c}_on_2_sms" for kind, r in RECORDS.items() if r.persistent for c in configs(kind)} \
        == walked


@pytest.mark.parametrize("mode", ["full", "small"])
def test_each_gemm_rung_runs_on_the_dtypes_it_takes_and_only_those(mode):
    from phase24.gemm.cuda.configs import compiled_for
    from phase24.gemm.sanitize import runs as gemm_runs

    for name, _, _, dtypes in gemm_runs(mode):
        kind = name.removeprefix("forced_").removeprefix("cuda-").split("(")[0]
        if kind in ("cuda", "naive"):
            assert len(dtypes) == 3, name
        else:  # cuda-v8 refuses float32: a run asking for it fails the whole script on a GPU
            assert dtypes == [d for d in (torch.float32, torch.bfloat16, torch.float16)
                              if compiled_for(kind, d)], name
