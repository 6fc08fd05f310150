"""The bridge without a GPU: every kernel compiles for Ampere, Ada and Hopper with no spills."""

import pytest

from phase24.bridge.nvcc import KERNELS_DIR, NvccError, compile_cu, parse_ptxas_report
from phase24.softmax.cuda_impls import (HOPPER_ONLY, V4_CONFIGS, V5_CONFIGS, V5_CONFIGS_F32,
                                        V6_CONFIGS, V6_CONFIGS_F32, V7_CONFIGS, V8_CONFIGS,
                                        V9_CONFIGS)

SOURCES = sorted(p.name for p in KERNELS_DIR.glob("*.cu"))
TARGETS = [(s, a) for s in SOURCES for a in ("sm_80", "sm_89", "sm_90a")]


@pytest.mark.parametrize("source,arch", TARGETS)
def test_compiles_without_spills(source, arch):
    if source in HOPPER_ONLY and arch != "sm_90a":
        with pytest.raises(NvccError, match="sm_90a"):  # says plainly it is Hopper-only
            compile_cu(KERNELS_DIR / source, arch)
        return
    build = compile_cu(KERNELS_DIR / source, arch)
    assert build.kernels, f"ptxas reported no kernels for {source}"
    for k in build.kernels.values():
        assert k.spills == 0 and k.stack_bytes == 0, f"{k.name} spills on {arch}: {k}"
        if arch == "sm_90a":
            assert k.registers * 1 <= 255


# file: [(kernel name, dtype tags)] for every configuration its launcher may choose
LAUNCHER_NAMES = {
    "softmax_v4_shape_specialised.cu": [(f"softmax_v4_g{g}_k{k}", ("f32", "f16", "bf16"))
                                        for g, k in V4_CONFIGS],
    "softmax_v5_cluster.cu": [(f"softmax_v5_t{t}_k{k}_c{c}", ("f32", "f16", "bf16"))
                              for t, k, c in V5_CONFIGS]
                             + [(f"softmax_v5_t{t}_k{k}_c{c}", ("f32",))
                                for t, k, c in V5_CONFIGS_F32],
    "softmax_v6_lean.cu": [(f"softmax_v6_g{g}_k{k}", ("f32", "f16", "bf16")) for g, k in V6_CONFIGS]
                          + [(f"softmax_v6_g{g}_k{k}", ("f32",)) for g, k in V6_CONFIGS_F32],
    "softmax_v7_cluster_lean.cu": [(f"softmax_v7_t{t}_k{k}_c{c}", ("f32", "f16", "bf16"))
                                   for t, k, c in V7_CONFIGS],
    "softmax_v8_pipelined.cu": [(f"softmax_v8_t{t}_c{c}", ("f32", "f16", "bf16"))
                                for t, c in V8_CONFIGS],
    "softmax_v9_cluster_smem.cu": [(f"softmax_v9_t{t}_k{k}_s{s}_c{c}", ("f32", "f16", "bf16"))
                                   for t, k, s, c in V9_CONFIGS],
}


@pytest.mark.parametrize("source", list(LAUNCHER_NAMES))
def test_every_configuration_the_launcher_names_exists(source):
    names = set(compile_cu(KERNELS_DIR / source, "sm_90a").kernels)
    for stem, tags in LAUNCHER_NAMES[source]:
        for tag in tags:
            assert f"{stem}_{tag}" in names


def test_registers_fit_the_block():
    """A kernel launched with B threads must need at most 65536 / B registers per thread."""
    for arch in ("sm_80", "sm_90a"):
        b = compile_cu(KERNELS_DIR / "softmax_v4_shape_specialised.cu", arch)
        for g, k in V4_CONFIGS:
            block = g if g > 32 else 128
            for tag in ("f32", "f16", "bf16"):
                assert b.kernels[f"softmax_v4_g{g}_k{k}_{tag}"].registers * block <= 65536
        b6 = compile_cu(KERNELS_DIR / "softmax_v6_lean.cu", arch)
        for g, k in V6_CONFIGS:
            block = g if g > 32 else 128
            for tag in ("f32", "f16", "bf16"):
                assert b6.kernels[f"softmax_v6_g{g}_k{k}_{tag}"].registers * block <= 65536


def test_cache_hit_and_rebuild(tmp_path, monkeypatch):
    monkeypatch.setenv("PHASE24_CACHE", str(tmp_path))
    src = tmp_path / "k.cu"
    src.write_text('extern "C" __global__ void k(float* x) { x[threadIdx.x] = 1.f; }\n')
    first = compile_cu(src, "sm_80")
    assert compile_cu(src, "sm_80").cubin == first.cubin  # cached
    src.write_text('extern "C" __global__ void k(float* x) { x[threadIdx.x] = 2.f; }\n')
    assert compile_cu(src, "sm_80").cubin != first.cubin  # changed source -> new build


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
