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


# Every configuration a launcher may choose, forced, with the same cases per kind of rung:
# rungs whose group of threads holds a row (v4, v6) and rungs whose cluster does (v5, v7, v9,
# v10; v8 below). rung: seed. float32's configuration list holds every configuration.
GROUP_RUNGS = {"v4": 3, "v6": 5}
CLUSTER_RUNGS = {"v5": 4, "v7": 6, "v9": 9, "v10": 10}


def _check_configuration(rung, seed, config, dtype, cases):
    """Force `config` on each case (if it is compiled for dtype); every output must pass."""
    if config not in ci.configs(rung, dtype):
        pytest.skip(f"configuration not compiled for {dtype}")
    for case in cases:
        v = check_case(f"{rung}{config}", _forced(ci.KINDS[rung], config), case, dtype, "cuda",
                       seed=seed)
        assert v.ok, f"{case.name}: {v.why}"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("rung,config", [(r, c) for r in GROUP_RUNGS
                                         for c in ci.configs(r, torch.float32)], ids=str)
def test_every_group_configuration(rung, config, dtype):
    full = ci.capacity(rung, config, dtype)
    _check_configuration(rung, GROUP_RUNGS[rung], config, dtype,
                         (plain(37, full), plain(37, max(1, full - 3)), unaligned(5, full)))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("rung,config", [(r, c) for r in CLUSTER_RUNGS
                                         for c in ci.configs(r, torch.float32)], ids=str)
def test_every_cluster_configuration(rung, config, dtype):
    full = ci.capacity(rung, config, dtype)
    _check_configuration(rung, CLUSTER_RUNGS[rung], config, dtype,
                         (plain(3, full), plain(2, full - 5), unaligned(2, full // 2 + 1),
                          plain(1, 1)))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("config", ci.V8_CONFIGS, ids=str)
def test_every_v8_configuration(config, dtype):
    t, c = config
    full = ci.capacity("v8", config, dtype)
    grid = ci._v8_grid_clusters(f"softmax_v8_t{t}_c{c}_{ci.DTYPE_TAG[dtype]}", t, c)
    # more rows than clusters, so every cluster walks several rows and prefetches
    _check_configuration("v8", 8, config, dtype,
                         (plain(2 * grid + 3, min(full, 4096)), plain(3, full), plain(2, full - 5),
                          unaligned(2, full // 2 + 1), plain(1, 1)))


def test_vector_add_through_the_bridge():
    from phase24.hello import hello

    assert "exactly" in hello()


def test_launch_error_is_a_python_exception():
    from phase24.bridge.launch import LaunchError

    k = ci._kernel("softmax_v4_shape_specialised.cu", "softmax_v4_g1024_k2_f32")
    x = torch.randn(2, 8, device="cuda")
    with pytest.raises(LaunchError, match="softmax_v4_g1024_k2_f32"):
        k.launch(1, 2048, ci.ptr(x), ci.ptr(x), ci.np.int64(2), ci.np.int32(8), ci.np.int64(8))
