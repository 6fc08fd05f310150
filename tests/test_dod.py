"""`dod OP`: on a CPU, the starters as committed leave every item but the learner profile not
yet (the speed needs a GPU) and the command fails; the solutions in their places make every
CPU-checkable item done and the command pass; a bench history of the very file (the H100 runs in
results/h100/learner/) decides the 30% item, a changed file or a slower rung does not pass it. The
annotation and the profile page are read field by field."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from committed import committed
from phase24.harness import annotation, dod
from phase24.harness.ops import get

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "labs" / "solutions"
LEARNER_H100 = ROOT / "results" / "h100" / "learner"
cpu_only = pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU's Definition of Done")
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (the emulator)")


def run_dod(op: str, files: dict[str, Path], env: dict | None = None) -> tuple[int, str]:
    argv = [sys.executable, "-m", "phase24", "dod", op]
    for flag, path in files.items():
        argv += [f"--{flag}", str(path)]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900,
                          env=env)
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out
    return done.returncode, out


def state(out: str, item: str) -> str:
    line = next(ln for ln in out.splitlines() if ln.startswith(item))
    return line[len(item):].strip()


@cpu_only
@needs_gxx
def test_the_starters_as_committed_are_not_done(tmp_path):
    files = {"cuda": "my_softmax_v3.cu", "triton": "my_softmax.py", "port": "my_port.py",
             "annotation": "my_profile.md"}
    rc, out = run_dod("softmax", {k: committed(f"labs/starters/{v}", tmp_path)
                                  for k, v in files.items()})
    assert rc == 1, out
    for item in ("your CUDA C kernel passes", "your Triton kernel passes",
                 "your profile is annotated", "your port equals the NumPy model"):
        assert state(out, item) == "not yet", out
    assert state(out, "it reaches 30% of torch.softmax") == "needs a GPU", out
    assert state(out, "your learner profile is updated") == "done", out
    assert "python -m phase24 check softmax --file" in out and "1 of 6 done" in out, out


@cpu_only
@needs_gxx
def test_the_solutions_make_it_done_and_a_history_decides_the_speed(tmp_path):
    history = tmp_path / "history"
    history.mkdir()
    shutil.copy(LEARNER_H100 / "gemm.jsonl", history / "gemm.jsonl")
    files = {"cuda": SOLUTIONS / "my_gemm_v3.cu", "triton": SOLUTIONS / "my_gemm.py",
             "port": SOLUTIONS / "my_port.py", "annotation": SOLUTIONS / "my_profile.md"}
    rc, out = run_dod("gemm", files)
    assert rc == 0 and "5 of 6 done; 1 need(s) a GPU" in out, out
    import os

    rc, out = run_dod("gemm", files, env={**os.environ, "PHASE24_HISTORY": str(history)})
    assert rc == 0 and "6 of 6 done" in out and "34% of cuBLAS" in out, out


def test_only_the_very_file_timed_counts_and_the_bar_is_30_percent(tmp_path, monkeypatch):
    monkeypatch.setenv("PHASE24_HISTORY", str(LEARNER_H100))
    gemm, softmax = get("gemm"), get("softmax")
    assert dod.fast_enough(gemm, SOLUTIONS / "my_gemm_v3.cu", False)[0] == dod.DONE
    slow = dod.fast_enough(gemm, SOLUTIONS / "my_gemm_v2.cu", True)
    assert slow[0] == dod.NOT_YET and "best 17%" in slow[1], slow
    assert dod.fast_enough(softmax, SOLUTIONS / "my_softmax_v3.cu", True)[0] == dod.DONE
    changed = tmp_path / "my_gemm_v3.cu"
    changed.write_text((SOLUTIONS / "my_gemm_v3.cu").read_text() + "\n// edited\n")
    assert dod.fast_enough(gemm, changed, False)[0] == dod.NEEDS_GPU
    assert dod.fast_enough(gemm, changed, True)[0] == dod.NOT_YET


def test_an_annotation_is_read_field_by_field(tmp_path):
    assert annotation.gaps(SOLUTIONS / "my_profile.md") == []
    starter = ROOT / "labs" / "starters" / "my_profile.md"
    assert annotation.gaps(committed("labs/starters/my_profile.md", tmp_path)) == list(
        annotation.FIELDS)
    text = (SOLUTIONS / "my_profile.md").read_text()
    vague = tmp_path / "vague.md"
    bound = text[text.index("- bound:"):text.index("- evidence:")]
    vague.write_text(text.replace(bound, "- bound: it is slow\n").replace(
        "- evidence: memory and compute speed of light 40.8% and 40.2%, DRAM 2.4% of its peak; "
        "top stalls long_scoreboard 5.72 and barrier 4.38 cycles per issued instruction, at 50% "
        "occupancy (two blocks of 512 threads per SM, limited by 64 registers a thread)",
        "- evidence: the stalls"))
    assert annotation.gaps(vague) == ["bound (name memory, compute or latency)",
                                      "evidence (the metric's value)"]
    half = tmp_path / "half.md"
    half.write_text(text.replace(text[text.index("- what happened:"):], "- what happened: TODO\n"))
    assert annotation.gaps(half) == ["what happened"]
    assert starter.is_file()


def test_profile_file_starts_an_untouched_annotation_and_leaves_his_writing(tmp_path):
    notes = committed("labs/starters/my_profile.md", tmp_path)
    assert annotation.start(notes, "my_gemm_v3.cu, float32, 4096x4096x4096", "out/profiles/x.md")
    v = annotation.values(notes.read_text())
    assert v["kernel"].startswith("my_gemm_v3.cu") and v["profile"] == "out/profiles/x.md"
    assert v["bound"].startswith("TODO")
    notes.write_text(notes.read_text().replace("- bound: TODO", "- bound: memory"))
    before = notes.read_text()
    assert not annotation.start(notes, "other.cu", "out/profiles/y.md")
    assert notes.read_text() == before


def test_the_profile_page_must_name_this_phase(tmp_path):
    assert dod.profile_updated(dod.PROFILE_PAGE)[0] == dod.DONE
    old = tmp_path / "profile.md"
    old.write_text(dod.PROFILE_PAGE.read_text().replace("**Updated after:** Phase 24",
                                                        "**Updated after:** Phase 23"))
    assert dod.profile_updated(old)[0] == dod.NOT_YET


@cpu_only
def test_profile_file_without_a_gpu_points_to_the_recorded_profiles():
    done = subprocess.run([sys.executable, "-m", "phase24", "profile", "gemm", "--file",
                           str(SOLUTIONS / "my_gemm_v3.cu")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in out, out
    recorded = "results/h200/gemm/profiles/cuda-v3_float32_4096x4096x4096.md"
    assert recorded in out and "labs/starters/my_profile.md" in out and (ROOT / recorded).is_file()
