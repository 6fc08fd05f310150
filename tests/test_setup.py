"""scripts/setup.sh asks for the CPU build of torch and a Triton that agrees with it, and the
install resolves without this machine's local wheel folder.

`setup.sh --plan` prints the exact install commands. Each resolution runs pip's --dry-run with
no pip configuration (PIP_CONFIG_FILE=/dev/null, no PIP_* variables): no local wheel folder, no
local index, no constraints; PyPI and the indexes the command names. Where this machine cannot
reach an index, the test says what it cannot check, and skips.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The CPU build's own requirements (its METADATA; the test below compares them with the wheel
# where this machine has it): no triton, no nvidia-* packages.
CPU_TORCH_REQUIRES = ["filelock", "typing-extensions>=4.10.0", "setuptools>=77.0.3",
                      "sympy>=1.13.3", "networkx>=2.5.1", "jinja2", "fsspec>=0.8.5"]


def plan(env: dict[str, str] | None = None) -> dict:
    """setup.sh's route and why (strings) and its install commands (argument lists), as it would
    run them in this environment."""
    proc = subprocess.run(["bash", "scripts/setup.sh", "--plan"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env=env or no_config())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = dict(line.split(": ", 1) for line in proc.stdout.splitlines())
    return {k: v if k in ("route", "why") else shlex.split(v) for k, v in lines.items()}


def no_config() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return {**env, "PIP_CONFIG_FILE": os.devnull}


def reachable(host: str) -> bool:
    try:
        socket.create_connection((host, 443), timeout=10).close()
        return True
    except OSError:
        return False


def resolve(args: list[str], tmp_path: Path) -> list[dict]:
    """pip's dry-run report of `pip install ARGS` with no pip configuration: what it would install."""
    report = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed",
                           "--quiet", "--report", str(report), *args], cwd=ROOT, env=no_config(),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"pip install {' '.join(args)} does not resolve:\n{proc.stderr[-3000:]}"
    return [i["metadata"] for i in json.loads(report.read_text())["install"]]


def pip_args(cmd: list[str]) -> list[str]:
    assert cmd[1:4] == ["-m", "pip", "install"], cmd
    return cmd[cmd.index("install") + 1:]


def test_the_plan_asks_for_the_cpu_build():
    p = plan()  # no pip configuration, so no local wheel folder: PyTorch's CPU index
    assert pip_args(p["torch"]) == ["torch==2.13.0+cpu", "--extra-index-url",
                                    "https://download.pytorch.org/whl/cpu", "--no-compile"], p["torch"]
    assert pip_args(p["lab"]) == ["-e", ".[dev,docs]", "triton==3.6.0", "--no-compile"]
    assert all(a.startswith("nvidia-") for a in pip_args(p["nvcc"]) if not a.startswith("-")
               and not a[0].isdigit())


def test_the_torch_command_resolves_to_the_cpu_build_from_pytorchs_index(tmp_path):
    if not reachable("download.pytorch.org"):
        pytest.skip("cannot check here: download.pytorch.org (PyTorch's CPU wheel index) is not "
                    "reachable from this machine; test_the_lab_resolves_from_pypi_with_the_cpu_"
                    "build checks the rest of the install")
    args = pip_args(plan()["torch"]) + ["-e", ".[dev,docs]"]
    got = {m["name"].lower(): m["version"] for m in resolve(args, tmp_path)}
    assert got["torch"] == "2.13.0+cpu" and got["triton"] == "3.6.0", got
    assert not [n for n in got if n.startswith("nvidia")], got


def test_the_lab_resolves_from_pypi_with_the_cpu_build(tmp_path):
    """The lab's own command, from PyPI alone, with torch 2.13.0+cpu installed before it (a wheel
    that carries the CPU build's requirements stands for it): triton 3.6.0, no CUDA packages."""
    if not reachable("pypi.org"):
        pytest.skip("cannot check here: pypi.org is not reachable from this machine")
    stub = tmp_path / "wheels" / "torch-2.13.0+cpu-py3-none-any.whl"
    stub.parent.mkdir()
    info = "torch-2.13.0+cpu.dist-info"
    with zipfile.ZipFile(stub, "w") as z:
        z.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 2.13.0+cpu\n"
                   + "".join(f"Requires-Dist: {r}\n" for r in CPU_TORCH_REQUIRES))
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                   "Tag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    torch_pin = pip_args(plan()["torch"])[0]
    args = ["--find-links", str(stub.parent), torch_pin] + pip_args(plan()["lab"])
    got = {m["name"].lower(): m["version"] for m in resolve(args, tmp_path)}
    assert got["torch"] == "2.13.0+cpu" and got["triton"] == "3.6.0", got
    assert not [n for n in got if n.startswith("nvidia")], got


def test_the_stand_in_has_the_cpu_builds_requirements():
    wheels = sorted(Path(d) for d in os.environ.get("PIP_FIND_LINKS", "").split() if Path(d).is_dir())
    found = [w for d in wheels for w in d.glob("torch-2.13.0+cpu-*.whl")]
    if not found:
        pytest.skip("cannot check here: no torch-2.13.0+cpu wheel on this machine's disk")
    with zipfile.ZipFile(found[0]) as z:
        meta = z.read("torch-2.13.0+cpu.dist-info/METADATA").decode()
    reqs = [line.split(": ", 1)[1] for line in meta.splitlines() if line.startswith("Requires-Dist")
            and "extra ==" not in line]
    assert reqs == CPU_TORCH_REQUIRES


def test_nvidias_nvcc_wheels_resolve_from_pypi(tmp_path):
    if not reachable("pypi.org"):
        pytest.skip("cannot check here: pypi.org is not reachable from this machine")
    args = [a for a in pip_args(plan()["nvcc"]) if a.startswith("nvidia-")]
    got = {m["name"].lower(): m["version"] for m in resolve(args, tmp_path)}
    assert got["nvidia-cuda-nvcc"].startswith("13.0.") and "nvidia-nvvm" in got, got


def test_a_local_cpu_wheel_is_used_where_pip_finds_one():
    p = plan(dict(os.environ))  # this machine's pip configuration
    local = any(Path(d, "").is_dir() and list(Path(d).glob("torch-2.13.0+cpu-*.whl"))
                for d in os.environ.get("PIP_FIND_LINKS", "").split())
    if not local:
        pytest.skip("cannot check here: pip's find-links has no torch-2.13.0+cpu wheel")
    assert pip_args(p["torch"]) == ["torch==2.13.0+cpu", "--no-compile"], p["torch"]


def _no_nvcc(monkeypatch):
    from phase24.bridge import nvcc

    def missing():
        raise nvcc.NvccError("nvcc was not found: install the CUDA toolkit or set NVCC=/path/to/nvcc")

    monkeypatch.setattr(nvcc, "nvcc_path", missing)


def test_without_nvcc_build_says_one_line(monkeypatch, capsys):
    from phase24.cli import main

    _no_nvcc(monkeypatch)
    assert main(["build"]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == ["FAIL: nvcc was not found: install the CUDA toolkit or set NVCC=/path/to/nvcc"]


def test_without_nvcc_the_main_job_skips_the_build_and_says_so(monkeypatch, capsys):
    from phase24.cli import build_parser
    from phase24.harness import mainjob

    _no_nvcc(monkeypatch)
    assert [a for _, a in mainjob.steps(False) if a[0] == "build"] == []
    monkeypatch.setattr(mainjob, "steps", lambda gpu: [("doctor", ["doctor", "--no-ncu"])])
    assert mainjob.run(build_parser(), False) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert "No nvcc here: skipped the kernels' builds and ptxas reports" in flat, flat
    assert "1 of 1 steps passed; no GPU here" in flat and flat.rstrip().endswith(
        "(scripts/setup.sh installs NVIDIA's nvcc wheels where pip can reach them)"), flat


SMI = """#!/bin/sh
case "$*" in
  *--query-gpu*) {query} ;;
  *) echo "| NVIDIA-SMI 580.95.05    Driver Version: 580.95.05    CUDA Version: {cuda}     |" ;;
esac
"""


def stand_ins(tmp_path: Path, smi: str | None = None, cuda: str = "13.0",
              image: bool = False) -> dict[str, str]:
    """An environment whose PATH has a stand-in nvidia-smi (``smi``: what its GPU query prints,
    or None for none) and, with ``image``, a python3 whose torch "has CUDA" (the GPU image)."""
    bin_ = tmp_path / "bin"
    bin_.mkdir(exist_ok=True)
    if smi is not None:
        query = f'echo "{smi}"' if smi else 'echo "No devices were found"; exit 6'
        (bin_ / "nvidia-smi").write_text(SMI.format(query=query, cuda=cuda))
    if image:
        (bin_ / "python3").write_text(f'#!/bin/sh\ncase "$*" in *torch.cuda*) exit 0 ;; esac\n'
                                      f'exec {sys.executable} "$@"\n')
    for f in bin_.iterdir():
        f.chmod(0o755)
    env = no_config()
    return {**env, "PATH": f"{bin_}:{env['PATH']}"}


def plan_text(env: dict[str, str]) -> tuple[int, str]:
    proc = subprocess.run(["bash", "scripts/setup.sh", "--plan"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env=env)
    return proc.returncode, proc.stdout + proc.stderr


def test_a_gpu_that_nvidia_smi_reports_gets_torchs_cuda_build(tmp_path):
    """A rented machine: a driver, a GPU, a plain Python. The GPU image's torch in its CUDA build
    from PyPI (it requires the lab's triton 3.6.0) and cuda-core, which loads the CUDA C kernels."""
    p = plan(stand_ins(tmp_path, "NVIDIA H100 80GB HBM3, 580.95.05"))
    assert p["route"] == "gpu", p
    assert p["why"] == ("nvidia-smi reports NVIDIA H100 80GB HBM3, 580.95.05 (name, "
                                  "driver), CUDA 13.0: torch 2.11.0's CUDA 13.0 build"), p
    assert pip_args(p["torch"]) == ["torch==2.11.0", "cuda-core==1.2.0", "--no-compile"], p


@pytest.mark.parametrize("smi", [None, ""], ids=["no nvidia-smi", "nvidia-smi, no GPU"])
def test_without_a_gpu_the_plan_is_the_cpu_build(tmp_path, smi):
    p = plan(stand_ins(tmp_path, smi))
    assert p["route"] == "cpu" and pip_args(p["torch"])[0] == "torch==2.13.0+cpu", p


def test_a_driver_too_old_for_cuda_13_is_one_message_and_nothing_installed(tmp_path):
    rc, out = plan_text(stand_ins(tmp_path, "NVIDIA H100 80GB HBM3, 550.54.15", cuda="12.4"))
    flat = " ".join(out.split())
    assert rc == 1 and "need a driver for CUDA 13.0 or newer (580 or later)" in flat, out
    assert "Traceback" not in out and "torch:" not in out, out


def test_a_gpu_image_with_torch_installs_nothing(tmp_path):
    p = plan(stand_ins(tmp_path, "NVIDIA H100 80GB HBM3, 580.95.05", image=True))
    assert p == {"route": "image",
                 "why": "python3 has torch with CUDA and triton: nothing to install"}, p


def test_the_gpu_builds_command_resolves_from_pypi_with_triton_360(tmp_path):
    """The GPU route's torch command and the lab's, from PyPI alone: torch 2.11.0 with the
    lab's triton 3.6.0, the tested pair (torch 2.13.0's CUDA build would bring 3.7.1)."""
    if not reachable("pypi.org"):
        pytest.skip("cannot check here: pypi.org is not reachable from this machine")
    p = plan(stand_ins(tmp_path, "NVIDIA H100 80GB HBM3, 580.95.05"))
    args = [a for a in pip_args(p["torch"]) if a != "--no-compile"] + ["-e", ".[dev,docs]"]
    got = {m["name"].lower(): m["version"] for m in resolve(args, tmp_path)}
    assert got["torch"] == "2.11.0" and got["triton"] == "3.6.0", got
    assert got["cuda-core"] == "1.2.0" and "nvidia-cuda-runtime" in got, got
