"""`check gemm --file F` and `bench gemm --file F` on a CPU: a learner's Triton file runs in
Triton's interpreter (float32 and float16: it has no bfloat16 tl.dot, and the check says so), a
learner's .cu is compiled, its cubin's kernels checked against the GEMM ABI, and run in the CUDA C
emulator (every dtype: bfloat16 too, emulated in float32 arithmetic as a GPU does). The solved files
of tests/learner_files/gemm/ pass, the starters (as committed) fail, each cheat is refused with
its reason, and every bad input is one line and a non-zero status, never a traceback.
tests/test_gemm_learner_gpu.py runs the same files on a GPU."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from committed import committed

ROOT = Path(__file__).resolve().parents[1]
FILES = ROOT / "tests" / "learner_files" / "gemm"
GOOD_PY = (FILES / "good.py").read_text()
GOOD_CU = (FILES / "good.cu").read_text()
pytestmark = pytest.mark.skipif(torch.cuda.is_available(),
                                reason="CPU behaviour; tests/test_gemm_learner_gpu.py runs on a GPU")
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
interpreter = pytest.mark.interpreter


def phase24(*argv: str, timeout: int = 300) -> tuple[int, str]:
    """The command's status and its output (stdout and stderr, each line's wrapped continuation
    joined back); never a traceback."""
    done = subprocess.run([sys.executable, "-m", "phase24", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out
    return done.returncode, re.sub(r"\n {4}(?=\S)", " ", out)


def grade(path: Path | str, *extra: str) -> tuple[int, str]:
    return phase24("check", "gemm", "--file", str(path), "--seed", "11", *extra)


def counts(out: str) -> tuple[int, int]:
    m = re.search(r"(\d+) passed, (\d+) failed \(seed", out)
    assert m, out
    return int(m[1]), int(m[2])


def mine(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


# ---- Triton files, in the interpreter -----------------------------------------------------------

@interpreter
def test_a_solved_triton_file_passes_and_bfloat16_is_said_not_checked():
    rc, out = grade(FILES / "good.py")
    assert rc == 0 and counts(out) == (30, 0), out  # 15 cases x float32, float16
    assert "bfloat16: not checked here: Triton's interpreter has no bfloat16 tl.dot" in out, out
    assert "its code runs in a worker process, with your rights" in out


@interpreter
def test_the_triton_starter_fails_with_a_clear_line(tmp_path):
    starter = committed("labs/starters/my_gemm.py", tmp_path)  # not the learner's own copy
    rc, out = grade(starter, "--dtype", "float32")
    assert rc == 1, out
    assert re.search(r"^FAIL my_gemm\.py f32 17x33x65: elementwise error [\d.e+]+x the bound",
                     out, re.M), out
    assert counts(out) == (3, 12), out  # only the empty products and K = 0 pass


@interpreter
@pytest.mark.parametrize("name,verdict,passed_failed", [
    # a no-op kernel launched, then torch.matmul(a, b, out=c): every product refused by name
    ("noop_then_torch.py", r"FAIL noop_then_torch\.py f32 64x64x64: aten\.mm\.out computed "
                           r"outside your kernels: in matmul_tiles, torch may only allocate",
     (3, 12)),
    # its kernel is right for K <= 32 (those cases pass), torch beyond: refused there
    ("falls_back_to_torch.py", r"FAIL falls_back_to_torch\.py f32 17x33x65: no Triton kernel of "
                               r"falls_back_to_torch\.py ran, and aten\.mm\.default computed "
                               r"outside your kernels", (7, 8)),
])
def test_a_cheating_triton_file_is_refused_with_its_reason(name, verdict, passed_failed):
    rc, out = grade(FILES / name, "--dtype", "float32")
    assert rc == 1 and re.search(verdict, out), out
    assert counts(out) == passed_failed, out


@interpreter
def test_a_file_that_patches_the_operations_checker_fails(tmp_path):
    path = mine(tmp_path, "patches.py", GOOD_PY + "\nimport phase24.gemm.spec as _s\n"
                "_s.Gemm.reference = lambda *a, **k: None\n")
    rc, out = grade(path, "--dtype", "float32", "--case", "64x64")
    assert rc == 1, out
    assert "FAIL: the file changed the grader's code (phase24.gemm.spec.Gemm.reference)" in out, out
    assert " passed, " not in out, out


# ---- CUDA C files, compiled and emulated --------------------------------------------------------

@needs_nvcc
@pytest.mark.nvcc
def test_a_solved_cu_file_passes_emulated_with_every_dtypes_kernel():
    rc, out = grade(FILES / "good.cu")
    assert rc == 0 and counts(out) == (45, 0), out  # 15 cases x 3 dtypes
    assert "emulated on the CPU: correctness and counts, no timing" in out, out
    assert "ABI: gemm_f32, gemm_f16, gemm_bf16: found, with the ABI's parameters" in out, out
    assert re.search(r"counts, not times: gemm_f32 on 64 x 64 x 64 float32.*\n.*\n +loads of a "
                     r"+\d+ +[\d.]+ sectors", out), out


@needs_nvcc
@pytest.mark.nvcc
def test_the_cu_starter_fails_emulated_and_names_what_it_defines(tmp_path):
    """As committed its kernel writes zeros: emulated, only the empty products and K = 0 pass
    (on a GPU the same, see tests/test_gemm_learner_gpu.py); its comments name gemm_f16 and
    gemm_bf16, which it lacks."""
    rc, out = grade(committed("labs/starters/my_gemm.cu", tmp_path))
    assert rc == 1 and counts(out) == (3, 12), out
    assert "gemm_f32: found, with the ABI's parameters" in out, out
    assert "not defined: gemm_f16, gemm_bf16 (those dtypes are not graded)" in out, out


ABI_ARGS = "(const float* a, const float* b, float* c, int M, int N, int K)"


@needs_nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("text,said", [
    (f'extern "C" __global__ void matmul_f32{ABI_ARGS} {{}}\n',
     "mine.cu: no kernel can be graded: it defines no kernel named gemm_f32, gemm_f16 or gemm_bf16 "
     "(its kernels: matmul_f32) (see the ABI in labs/starters/my_gemm.cu)"),
    (f"__global__ void gemm_f32{ABI_ARGS} {{}}\n",
     'gemm_f32 is not extern "C" (its symbol is _Z8gemm_f32PKfS0_Pfiii)'),
    ('extern "C" __global__ void gemm_f32(const float* a, const float* b, float* c, long long M, '
     "int N, int K) {}\n",
     "gemm_f32 takes parameters of 8, 8, 8, 8, 4, 4 bytes; the ABI's are 8, 8, 8, 4, 4, 4 "
     "(const T* a, const T* b, T* c, int M, int N, int K)"),
])
def test_a_cu_file_off_the_abi_is_refused_by_name(tmp_path, text, said):
    rc, out = grade(mine(tmp_path, "mine.cu", text))
    assert rc == 1 and said in out, out


@needs_nvcc
@pytest.mark.nvcc
def test_a_cu_file_in_latin_1_gets_its_verdict(tmp_path):
    """A Spanish comment saved by a Windows editor: nvcc compiles it, and so does the grader;
    with a mistake in it, the compiler's own message and line."""
    comment = "// año: una línea en Latin-1\n".encode("latin-1")
    rc, out = grade(mine(tmp_path, "mine.cu", comment + GOOD_CU.encode()))
    assert rc == 0 and counts(out) == (45, 0), out
    path = mine(tmp_path, "broken.cu", comment + b"int oops = ;\n" + GOOD_CU.encode())
    rc, out = grade(path)
    assert rc == 1 and f"{path}(2): error: expected an expression" in out, out
    assert "FAIL: nvcc failed on broken.cu for sm_80" in out, out


# ---- bad inputs: one line, a non-zero status ----------------------------------------------------

@pytest.mark.parametrize("name,text,said", [
    ("syntax.py", GOOD_PY + "\ndef broken(:\n",
     "importing it failed: SyntaxError: invalid syntax (syntax.py, line "),
    ("no_fn.py", GOOD_PY.replace("def matmul_tiles(", "def tiles("),
     "it must define a function matmul_tiles(a, b, c) that launches your kernel(s) (see "
     "labs/starters/my_gemm.py)"),
    ("two_args.py", GOOD_PY.replace("def matmul_tiles(a, b, c):", "def matmul_tiles(a, b):"),
     "matmul_tiles(a, b) cannot be called as matmul_tiles(a, b, c)"),
    ("no_kernel.py", "def matmul_tiles(a, b, c):\n    pass\n",
     "it defines no @triton.jit kernel (matmul_tiles must launch one of its own)"),
])
def test_a_python_file_that_cannot_be_graded_is_one_line(tmp_path, name, text, said):
    rc, out = grade(mine(tmp_path, name, text))
    assert rc == 1 and any(line.startswith("FAIL: ") and said in line
                           for line in out.splitlines()), out


@pytest.mark.parametrize("command", ["check", "bench"])
@pytest.mark.parametrize("argv,said", [
    (["--file", "tests/learner_files/gemm/nosuch.py"],
     "no such file: tests/learner_files/gemm/nosuch.py"),
    (["--file", "README.md"], "README.md: expected a .cu (CUDA C) or a .py (Triton) file"),
    (["--file", "tests/learner_files/gemm/good.py", "--impl", "cublas"],
     "--impl and --file do not go together"),
])
def test_a_bad_argument_is_one_line(command, argv, said):
    rc, out = phase24(command, "gemm", *argv)
    lines = [line for line in out.splitlines() if line.strip()]
    assert rc != 0 and len(lines) == 1 and said in lines[0], out


@pytest.mark.parametrize("name", ["good.py", "good.cu"])
def test_bench_file_without_a_gpu_says_so_and_counts_a_cu_file(name):
    rc, out = phase24("bench", "gemm", "--file", str(FILES / name))
    lines = [line for line in out.splitlines() if line.strip()]
    assert rc == 1 and lines[0] == (f"No GPU here: timing {name} needs an NVIDIA GPU (`check gemm "
                                    "--file` checks it here)"), out
    if name.endswith(".py"):
        assert len(lines) == 1, out
    else:  # the emulator's counts in place of times
        assert lines[1].startswith("counts, not times: gemm_f32 on 64 x 64 x 64"), out


def test_bench_file_loads_the_file_in_a_worker_and_says_why_it_cannot_time_it():
    """The timing side of bench gemm --file (harness/timefile.py): the file is loaded in a
    worker process; with no GPU the timing fails, in one line."""
    from phase24.harness.isolate import LoadError
    from phase24.harness.timefile import _time_in_worker

    spec = {"op": "gemm", "file": str(FILES / "good.py"), "dtypes": ["float32"], "device": "cpu",
            "shapes": [[4, 8, 16]], "seed": 0}
    with pytest.raises(LoadError) as err:
        _time_in_worker(spec, timeout=60, load_timeout=120)
    said = str(err.value)
    assert said.startswith("timing failed: ") and "\n" not in said.strip(), said


def test_the_cu_launch_shape_is_read_from_the_defines():
    from phase24.gemm.args import GemmArgumentError
    from phase24.gemm.learner_cuda import launch_shape

    assert launch_shape("// #define TILE_M 64 in a comment is not a define\n", "f.cu") == \
        ((16, 16), 256)
    assert launch_shape("#define TILE_M 8\n  #define TILE_N 32\n#define THREADS 128\n",
                        "f.cu") == ((8, 32), 128)
    with pytest.raises(GemmArgumentError, match="f.cu: #define TILE_N 0: a block needs"):
        launch_shape("#define TILE_N 0\n", "f.cu")


def test_a_cu_files_kernel_is_launched_with_its_tile_and_threads(tmp_path, monkeypatch):
    """What a GPU would be asked (the kernel replaced by one that records its launches): one
    block of THREADS threads per TILE_M x TILE_N tile of C, partial tiles included."""
    from phase24.gemm import learner_cuda
    from phase24.gemm.args import GemmArgumentError
    from phase24.core import learner_cu

    seen = []

    class Recorder:
        def launch(self, grid, block, a, b, c, m, n, k, shared_bytes=0):
            seen.append((grid, block, a.shape[0], c.shape[0], int(m), int(n), int(k)))

    monkeypatch.setattr(learner_cu, "load", lambda path, abi, flags: ("abi",
                                                                      {torch.float32: Recorder()}))
    monkeypatch.setattr(learner_cuda, "entry", lambda name, tiles, allow_cpu: (lambda *t: tiles(*t)))
    path = mine(tmp_path, "mine.cu", "#define TILE_M 4\n#define TILE_N 32\n#define THREADS 128\n")
    matmul, covered = learner_cuda.load_learner_gemm(path)
    assert covered == [torch.float32] and matmul.abi == "abi"
    matmul(torch.zeros(10, 3), torch.zeros(3, 70), torch.zeros(10, 70))
    assert seen == [(3 * 3, 128, 10, 10, 10, 70, 3)]  # ceil(10 / 4) x ceil(70 / 32) tiles
    with pytest.raises(GemmArgumentError, match="mine.cu has no kernel for torch.float16"):
        matmul(*(torch.zeros(2, 2, dtype=torch.float16) for _ in range(3)))
