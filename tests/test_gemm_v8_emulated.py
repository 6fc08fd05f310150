"""v8's kernel on the CPU: tests/gemm_v8_emulate.cpp runs the text of mma_gemm (between the
kernel's --8<-- markers in src/phase24/gemm/cuda/v8_mma.cu), its threads taking turns on one host
thread, with ldmatrix, mma.sync and cp.async's groups emulated after the PTX ISA, and checks C
element for element on every configuration and on shapes that are multiples of no tile (M, N, K
as the launcher passes them: K and N multiples of 8). A cp.async lands only when a wait lets its
group complete, so a pipeline that waits too little reads poison, and a read or a copy that no
barrier separates from another warp's is reported as a race. The GPU tests run the same kernel
on the H200; this one runs wherever g++ does, and catches the mistakes planted below."""

import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from phase24.gemm.cuda import SOURCE_DIR
from phase24.gemm.cuda.configs import configs

HERE = Path(__file__).parent
HARNESS = HERE / "gemm_v8_emulate.cpp"
pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (a host compiler)")

# (M, N, K): one tile or less, a partial tile on each edge, K shorter than a stage, several steps.
SHAPES = [(1, 8, 8), (37, 72, 40), (130, 136, 200), (200, 264, 72), (64, 64, 256)]
CONFIGS = configs("v8")

ASYNC = [  # each cp.async group instruction of the kernel, as the emulation's call
    (r'asm volatile\("cp\.async\.commit_group;\\n"\);', "emu_commit_group();"),
    (r'asm volatile\("cp\.async\.wait_group %0;\\n" ::"n"\((.*?)\)\);', r"emu_wait_group(\1);"),
    (r'asm volatile\("cp\.async\.wait_group (\d+);\\n"\);', r"emu_wait_group(\1);"),
]


def kernel_text(source: str) -> str:
    """mma_gemm and its swizzle, from v8's file, with cp.async's groups as emulation calls."""
    text = re.search(r"// --8<-- \[start:kernel\]\n(.*?)// --8<-- \[end:kernel\]", source, re.S)[1]
    for pattern, call in ASYNC:
        text = re.sub(pattern, call, text)
    assert "asm" not in text, "an instruction in v8's kernel that the emulation does not know"
    return text


def build(folder: Path, kernel: str, tiles=CONFIGS) -> Path:
    """The emulator, with `kernel` (kernel_text's output) as mma_gemm, built for `tiles`."""
    (folder / "kernel.inc").write_text(kernel)
    (folder / "configs.inc").write_text("".join(f"CONFIG{c}\n" for c in tiles))
    exe = folder / "gemm_v8_emulate"
    subprocess.run(["g++", "-std=c++20", "-O1", "-Wno-unknown-pragmas", f"-I{folder}",
                    f"-I{SOURCE_DIR}", str(HARNESS), "-o", str(exe)], check=True,
                   capture_output=True, text=True)
    return exe


def run(exe: Path, config: int, shape) -> str:
    done = subprocess.run([str(exe), str(config), *map(str, shape)], capture_output=True,
                          text=True, timeout=300)
    return done.stdout.strip() + done.stderr.strip()


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    kernel = kernel_text((SOURCE_DIR / "v8_mma.cu").read_text())
    return build(tmp_path_factory.mktemp("v8emu"), kernel)


@pytest.mark.parametrize("config", range(len(CONFIGS)), ids=[str(c) for c in CONFIGS])
def test_every_configuration_on_every_edge(emulator, config):
    with ThreadPoolExecutor(len(SHAPES)) as pool:
        results = list(pool.map(lambda s: run(emulator, config, s), SHAPES))
    assert results == ["ok"] * len(SHAPES), list(zip(SHAPES, results))


PLANTED = {  # a mistake in the kernel's text, which the emulation must catch
    "unswizzled store": ("swizzled<CA>(ra, ca) * 8) * 2;", "ca * 8) * 2;"),
    "a wait that lets one group fewer complete": (
        "emu_wait_group(STAGES - 2);\n                __sync",
        "emu_wait_group(STAGES - 1);\n                __sync"),
    "B's last chunk taken past K": ("(rows_b + RB - 1) / RB", "(rows_b + RB) / RB"),
    "rows past M read": ("unsigned(row0 + ra + i * RA < M)", "unsigned(row0 + ra + i * RA <= M)"),
    "next step's fragments from the stage just left": (
        "read = read == STAGES - 1 ? 0 : read + 1;", ""),
    "no barrier before the last sixteen": (
        "emu_wait_group(STAGES - 2);\n                __syncthreads();",
        "emu_wait_group(STAGES - 2);"),
}


@pytest.mark.parametrize("plant", PLANTED)
def test_the_emulation_catches_a_planted_mistake(tmp_path, plant):
    old, new = PLANTED[plant]
    text = kernel_text((SOURCE_DIR / "v8_mma.cu").read_text())
    assert text.count(old) == 1, f"the planted mistake's text is no longer in v8's kernel: {old!r}"
    exe = build(tmp_path, text.replace(old, new), [(128, 128, 64, 64, 64, 3, 8)])
    results = [run(exe, 0, s) for s in SHAPES[1:4]]
    assert any(r.startswith("FAIL") for r in results), results
