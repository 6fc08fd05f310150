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


def test_each_rung_tuning_builds_on_the_newest_run(tmp_path):
    """tune-gemm-vN keeps every other entry of the newest CUDA tuner run: the committed one, or
    the run an earlier tune-gemm-vN of the same call wrote, so no step drops another's entries."""
    log = tmp_path / "calls.log"
    fake = tmp_path / "python"  # records its calls; a tuner run writes its OUT.json
    fake.write_text(f'#!/bin/bash\necho "$*" >> {log}\n'
                    'if [ "$1" = scripts/tune.py ] && [ "$4" != --from ]; then echo {{}} > "$4"; fi\n')
    fake.chmod(0o755)
    out = tmp_path / "out"
    subprocess.run(["bash", str(SCRIPT), str(out), "tune-gemm-v8", "tune-gemm-v11"], cwd=ROOT,
                   env={"PATH": "/usr/bin:/bin", "PYTHON": str(fake)}, capture_output=True)
    runs = [line.split() for line in log.read_text().splitlines() if "--only" in line]
    committed = re.search(r"^cuda_run=(\S+)", SCRIPT.read_text(), re.M)[1]
    assert (ROOT / committed).is_file()
    assert [(r[r.index("--only") + 1], r[r.index("--rest-from") + 1]) for r in runs] == [
        ("v8", committed), ("v11", str(out / "logs" / "tune-gemm-cuda-v8.json"))]
    tables = [line for line in log.read_text().splitlines() if "--from" in line]
    assert [t.split()[-1] for t in tables] == ["src/phase24/gemm/cuda/tuned_configs.json"] * 2


def sanitizer_calls(tmp_path, only: str | None) -> list[str]:
    """The compute-sanitizer command lines of `sanitize-gemm`, with SANITIZE_ONLY set to `only`."""
    log = tmp_path / "calls.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("compute-sanitizer", "python"):  # both record their calls and succeed
        (bin_dir / name).write_text(f'#!/bin/bash\necho "{name} $*" >> {log}\n')
        (bin_dir / name).chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "PYTHON": str(bin_dir / "python")}
    if only is not None:
        env["SANITIZE_ONLY"] = only
    subprocess.run(["bash", str(SCRIPT), str(tmp_path / "out"), "sanitize-gemm"], cwd=ROOT,
                   env=env, capture_output=True)
    return [line for line in log.read_text().splitlines() if line.startswith("compute-sanitizer")]


def test_sanitize_gemm_takes_the_runs_sanitize_only_names(tmp_path):
    calls = sanitizer_calls(tmp_path, "cuda-v8 forced_v8")
    assert [c.split("--tool ")[1].split()[0] for c in calls] == ["memcheck", "synccheck", "racecheck"]
    assert all(c.endswith("--only cuda-v8 forced_v8") for c in calls), calls


def test_sanitize_gemm_takes_every_run_by_default(tmp_path):
    calls = sanitizer_calls(tmp_path, None)
    assert len(calls) == 3 and not any("--only" in c for c in calls), calls
