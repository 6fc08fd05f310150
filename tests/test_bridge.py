"""The bridge without a GPU: every kernel compiles for Ampere, Ada and Hopper with no spills,
and to the portable PTX that newer GPUs compile at load time."""

import re
import shutil
import sys

import pytest
from nvcc_helpers import needs_nvcc

from phase24.bridge.nvcc import PORTABLE, NvccError, compile_cu, parse_ptxas_report
from phase24.bridge.prebuild import prebuild
from phase24.core.dtypes import TAG
from phase24.softmax.cuda import HOPPER_ONLY, SOURCE_DIR, build_jobs
from phase24.softmax.cuda.configs import configs, kernel_name, source
from phase24.softmax.cuda.launchers import group_block

SOURCES = sorted(p.name for p in SOURCE_DIR.glob("*.cu"))
ARCHS = ("sm_80", "sm_89", "sm_90a")
TARGETS = [(s, a) for s in SOURCES for a in (*ARCHS, PORTABLE)]


@pytest.fixture(scope="module", autouse=True)
def built_in_parallel(request):
    """A cold cache builds the files of the selected tests at once (one nvcc per core), not one
    test at a time."""
    params = [item.callspec.params for item in request.session.items
              if item.module is request.module and hasattr(item, "callspec")]
    jobs = {(SOURCE_DIR / p["source"], p["arch"]) for p in params if "arch" in p}
    if shutil.which("nvcc") and jobs:
        prebuild(sorted(set(build_jobs((*ARCHS, PORTABLE))) & jobs), out=sys.stderr)


@needs_nvcc
@pytest.mark.parametrize("source,arch", TARGETS)
def test_compiles_without_spills(source, arch):
    if source in HOPPER_ONLY and arch != "sm_90a":
        with pytest.raises(NvccError, match="sm_90a"):  # says plainly it is Hopper-only
            compile_cu(SOURCE_DIR / source, arch)
        return
    build = compile_cu(SOURCE_DIR / source, arch)
    if arch == PORTABLE:  # PTX: the kernels of the cubins, for the portable target
        ptx = build.image.read_text()
        assert re.search(r"^\.target sm_80\b", ptx, re.MULTILINE), "not compute_80 PTX"
        entries = set(re.findall(r"^\.visible \.entry (\w+)\(", ptx, re.MULTILINE))
        assert entries == set(compile_cu(SOURCE_DIR / source, "sm_80").kernels)
        return
    assert build.kernels, f"ptxas reported no kernels for {source}"
    for k in build.kernels.values():
        assert k.spills == 0 and k.stack_bytes == 0, f"{k.name} spills on {arch}: {k}"
        if arch == "sm_90a":
            assert k.registers * 1 <= 255


@needs_nvcc
def test_registers_fit_the_block():
    """A kernel launched with B threads must need at most 65536 / B registers per thread."""
    for arch in ("sm_80", "sm_90a"):
        for rung in ("v4", "v6"):
            kernels = compile_cu(SOURCE_DIR / source(rung), arch).kernels
            for dtype in TAG:
                for config in configs(rung, dtype):
                    registers = kernels[kernel_name(rung, config, dtype)].registers
                    assert registers * group_block(config[0]) <= 65536, (rung, config, dtype)


@needs_nvcc
def test_cache_hit_and_rebuild(tmp_path, monkeypatch):
    monkeypatch.setenv("PHASE24_CACHE", str(tmp_path))
    src = tmp_path / "k.cu"
    src.write_text('extern "C" __global__ void k(float* x) { x[threadIdx.x] = 1.f; }\n')
    first = compile_cu(src, "sm_80")
    assert compile_cu(src, "sm_80").image == first.image  # cached
    src.write_text('extern "C" __global__ void k(float* x) { x[threadIdx.x] = 2.f; }\n')
    assert compile_cu(src, "sm_80").image != first.image  # changed source -> new build


@needs_nvcc
def test_nvcc_error_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("PHASE24_CACHE", str(tmp_path))
    src = tmp_path / "broken.cu"
    src.write_text("this is not CUDA\n")
    with pytest.raises(NvccError, match="broken.cu"):
        compile_cu(src, "sm_80")


def test_parse_ptxas_report():
    log = """ptxas info    : Compiling entry function 'a' for 'sm_90a'
ptxas info    : Function properties for a
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 136 bytes smem, 400 bytes cmem[0]
ptxas info    : Compiling entry function 'b' for 'sm_90a'
ptxas info    : Function properties for b
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 0 barriers
"""
    r = parse_ptxas_report(log)
    assert (r["a"].registers, r["a"].shared_bytes, r["a"].spills, r["a"].stack_bytes) == (40, 136, 8, 8)
    assert (r["b"].registers, r["b"].shared_bytes, r["b"].spills) == (12, 0, 0)
