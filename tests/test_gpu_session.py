"""scripts/gpu-session.sh's `tests` step runs every GPU test file: its four parts (tests-gemm,
tests-cuda and tests-triton on the same files, grader) between them name each tests/test_*_gpu.py,
so a new file cannot fall outside every device call."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu-session.sh"


def file_lists() -> dict[str, set[str]]:
    """The script's three lists of test files, as bash makes them in the repository."""
    assigns = [line for line in SCRIPT.read_text().splitlines()
               if re.match(r"(gemm_gpu|grader_gpu|other_gpu)=", line)]
    shown = "; ".join(f"echo {name}: ${name}" for name in ("gemm_gpu", "grader_gpu", "other_gpu"))
    out = subprocess.run(["bash", "-c", "\n".join(assigns) + "\n" + shown], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return {name: set(files.split()) for name, files in
            (line.split(": ", 1) for line in out.strip().splitlines())}


def test_the_parts_of_tests_cover_every_gpu_file_once():
    lists = file_lists()
    every = {f"tests/{p.name}" for p in (ROOT / "tests").glob("test_*_gpu.py")}
    assert lists["gemm_gpu"] | lists["grader_gpu"] | lists["other_gpu"] == every
    assert not lists["other_gpu"] & (lists["gemm_gpu"] | lists["grader_gpu"])
    script = SCRIPT.read_text()
    assert "for t in tests-gemm tests-cuda tests-triton grader; do run_step $t; done" in script
    for step, files in (("tests-gemm", "$gemm_gpu"), ("tests-cuda", "$other_gpu"),
                        ("tests-triton", "$other_gpu"), ("grader", "$grader_gpu")):
        body = re.search(rf"^    {step}\)(.*?);;", script, re.S | re.M)[1]
        assert files in body, step
