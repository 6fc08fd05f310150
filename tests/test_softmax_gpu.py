"""Every implementation x dtype x edge shape against float64, on a GPU."""

import pytest
import torch

from phase24.harness.cases import big_case, plain, standard_cases, unaligned
from phase24.harness.check import check_case
from phase24.softmax import IMPLEMENTATIONS
from phase24.softmax.args import check_input, run_rows
from phase24.softmax import cuda_impls as ci

pytestmark = pytest.mark.gpu
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
CASES = standard_cases(gpu=True)


# Documented limits: an implementation may refuse a shape with a clear error, never a wrong result.
REFUSALS = {"triton-naive": "do not fit in one block"}


def refused(name, v):
    return name in REFUSALS and v.why.startswith("SoftmaxArgumentError") and REFUSALS[name] in v.why


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", list(IMPLEMENTATIONS))
def test_every_case(name, dtype):
    bad = []
    for j, case in enumerate(CASES):
        v = check_case(name, IMPLEMENTATIONS[name], case, dtype, "cuda", seed=100 + j)
        if not v.ok and not refused(name, v):
            bad.append(f"{case.name}: {v.why}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", list(IMPLEMENTATIONS))
def test_more_than_2_31_elements(name, dtype):
    v = check_case(name, IMPLEMENTATIONS[name], big_case(), dtype, "cuda", seed=7)
    torch.cuda.empty_cache()
    assert v.ok, v.why


def _forced(rows, config):
    def fn(x):
        check_input(x, "forced")
        return run_rows(lambda a, b: rows(a, b, config=config), x)
    return fn


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("config", ci.V4_CONFIGS, ids=str)
def test_every_v4_configuration(config, dtype):
    g, k = config
    full = g * k * ci.vec_width(dtype)
    for case in (plain(37, full), plain(37, max(1, full - 3)), unaligned(5, full)):
        v = check_case(f"v4{config}", _forced(ci.rows_v4, config), case, dtype, "cuda", seed=3)
        assert v.ok, f"{case.name}: {v.why}"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("config", ci.V5_CONFIGS + ci.V5_CONFIGS_F32, ids=str)
def test_every_v5_configuration(config, dtype):
    if config in ci.V5_CONFIGS_F32 and dtype != torch.float32:
        pytest.skip("fp32-only configuration")
    t, k, c = config
    full = t * k * c * ci.vec_width(dtype)
    for case in (plain(3, full), plain(2, full - 5), unaligned(2, full // 2 + 1), plain(1, 1)):
        v = check_case(f"v5{config}", _forced(ci.rows_v5, config), case, dtype, "cuda", seed=4)
        assert v.ok, f"{case.name}: {v.why}"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("config", ci.V6_CONFIGS, ids=str)
def test_every_v6_configuration(config, dtype):
    g, k = config
    full = g * k * ci.vec_width(dtype)
    for case in (plain(37, full), plain(37, max(1, full - 3)), unaligned(5, full)):
        v = check_case(f"v6{config}", _forced(ci.rows_v6, config), case, dtype, "cuda", seed=5)
        assert v.ok, f"{case.name}: {v.why}"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("config", ci.V7_CONFIGS, ids=str)
def test_every_v7_configuration(config, dtype):
    t, k, c = config
    full = t * k * c * ci.vec_width(dtype)
    for case in (plain(3, full), plain(2, full - 5), unaligned(2, full // 2 + 1), plain(1, 1)):
        v = check_case(f"v7{config}", _forced(ci.rows_v7, config), case, dtype, "cuda", seed=6)
        assert v.ok, f"{case.name}: {v.why}"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("config", ci.V8_CONFIGS, ids=str)
def test_every_v8_configuration(config, dtype):
    t, c = config
    full = t * c * 4 * ci.vec_width(dtype)
    grid = ci._v8_grid_clusters(f"softmax_v8_t{t}_c{c}_{ci.DTYPE_TAG[dtype]}", t, c)
    # more rows than clusters, so every cluster walks several rows and prefetches
    for case in (plain(2 * grid + 3, min(full, 4096)), plain(3, full), plain(2, full - 5),
                 unaligned(2, full // 2 + 1), plain(1, 1)):
        v = check_case(f"v8{config}", _forced(ci.rows_v8, config), case, dtype, "cuda", seed=8)
        assert v.ok, f"{case.name}: {v.why}"


def test_vector_add_through_the_bridge():
    from phase24.hello import hello

    assert "exactly" in hello()


def test_launch_error_is_a_python_exception():
    from phase24.bridge.launch import LaunchError

    k = ci._kernel("softmax_v4_shape_specialised.cu", "softmax_v4_g1024_k2_f32")
    x = torch.randn(2, 8, device="cuda")
    with pytest.raises(LaunchError, match="softmax_v4_g1024_k2_f32"):
        k.launch(1, 2048, ci.ptr(x), ci.ptr(x), ci.np.int64(2), ci.np.int32(8), ci.np.int64(8))
