"""Every implementation x dtype x edge shape against float64, on a GPU."""

import pytest
import torch

from phase24.softmax.cases import big_case, plain, standard_cases, unaligned, with_specials
from phase24.harness.check import check_case
from phase24.softmax.spec import OP
from phase24.softmax import IMPLEMENTATIONS, softmax_reference
from phase24.softmax.args import check_input, run_rows
from phase24.softmax.cuda import launchers as ci
from phase24.softmax.cuda.configs import SLOTS
from softmax_asserts import randn

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
        v = check_case(OP, name, IMPLEMENTATIONS[name], case, dtype, "cuda", seed=100 + j)
        if not v.ok and not refused(name, v):
            bad.append(f"{case.name}: {v.why}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", list(IMPLEMENTATIONS))
def test_more_than_2_31_elements(name, dtype):
    v = check_case(OP, name, IMPLEMENTATIONS[name], big_case(), dtype, "cuda", seed=7)
    torch.cuda.empty_cache()
    assert v.ok, v.why


def _forced(rows, config):
    def fn(x, out=None):
        check_input(x, "forced")
        return run_rows(lambda a, b: rows(a, b, config=config), x, out)
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
        v = check_case(OP, f"{rung}{config}", _forced(ci.KINDS[rung], config), case, dtype, "cuda",
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
@pytest.mark.parametrize("config", ci.configs("v8", torch.float32), ids=str)
def test_every_v8_configuration(config, dtype):
    t, c = config
    full = ci.capacity("v8", config, dtype)
    grid = ci._v8_grid_clusters(ci.kernel_name("v8", config, dtype), t, c)
    # more rows than clusters, so every cluster walks several rows and prefetches
    _check_configuration("v8", 8, config, dtype,
                         (plain(2 * grid + 3, min(full, 4096)), plain(3, full), plain(2, full - 5),
                          unaligned(2, full // 2 + 1), plain(1, 1)))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kind,config", [("v1", ()), ("v2", ()), ("v3", (1,))], ids=str)
def test_blocks_that_walk_several_rows(kind, config, dtype):
    # 2 blocks for more rows: each block walks several rows, which the launchers (a block a row
    # up to 2^31 - 1 rows) never make them do. v2 and v3 alternate block_max and block_sum, whose
    # posts rely on that alternation instead of a barrier at the end.
    def fn(x, out=None):
        check_input(x, "two blocks")
        return run_rows(lambda a, o: ci._run_rung(kind, config, a, o, 2, 256), x, out)

    for j, case in enumerate((plain(7, 300), with_specials(9, 1000), unaligned(5, 1000))):
        v = check_case(OP, f"{kind} on 2 blocks", fn, case, dtype, "cuda", seed=20 + j)
        assert v.ok, f"{case.name}: {v.why}"


# float32 accuracy on long rows: the relative error against float64 (norm of the difference over
# the norm of the reference, 2 rows) at most max(2e-7, torch's), and no larger on long rows than
# on short ones. Rows of 1M to 64M values run v2 under `cuda` (longer than any rung holds on
# chip); v0 and v1 also take rows of any length (v3 .. v10 hand them to v2).
LONG_N = (1 << 20, 1 << 22, 1 << 24, 1 << 26)
ANY_LENGTH = ("cuda", "cuda-naive", "cuda-v1", "cuda-v2")
FLAT_FLOOR = 1e-7  # a few roundings: below it, errors count as equal (see _assert_flat)


def _errors(name, rows) -> dict:
    """{N: (name's relative error, torch's)} for each (N, float32 input) of `rows`."""
    errs = {}
    for n, x in rows:
        ref = softmax_reference(x)
        rel = lambda y: ((y.double() - ref).norm() / ref.norm()).item()  # noqa: E731
        errs[n] = (rel(IMPLEMENTATIONS[name](x)), rel(torch.softmax(x, -1)))
        del x, ref
        torch.cuda.empty_cache()
    return errs


def _assert_flat(name, errs):
    """Each error within max(2e-7, torch's); the largest at most 3x the smallest, errors below
    FLAT_FLOOR counted as FLAT_FLOOR (the correctly rounded float32 result itself varies by 3x
    from one of these lengths to the next, as a few large values carry most of the norm)."""
    shown = {n: f"{e:.2g} (torch {t:.2g})" for n, (e, t) in errs.items()}
    assert all(e <= max(2e-7, t) for e, t in errs.values()), (name, shown)
    floored = [max(e, FLAT_FLOOR) for e, _ in errs.values()]
    assert max(floored) <= 3 * min(floored), (name, shown)


@pytest.mark.parametrize("name", ANY_LENGTH)
def test_float32_error_does_not_grow_with_the_row(name):
    _assert_flat(name, _errors(name, ((n, randn((2, n), torch.float32, n, device="cuda"))
                                      for n in LONG_N)))


@pytest.mark.parametrize("name", ("cuda", "cuda-v2"))
def test_float32_rows_that_keep_rising(name):
    # A linear position bias: every value a new maximum. An online softmax that rescales its sum
    # at every new maximum rounds each time, N / 256 times in a thread of v2.
    _assert_flat(name, _errors(name, ((n, torch.linspace(0, 20, n, device="cuda").repeat(2, 1))
                                      for n in (1 << 20, 1 << 24))))


@pytest.mark.parametrize("name", [f"cuda-{k}" for k in SLOTS] + ["cuda"])
def test_float32_error_at_the_longest_row_each_rung_holds(name):
    kind = name.removeprefix("cuda-")
    n = ci.reach(kind, torch.float32) if kind in SLOTS else ci.reach("v10", torch.float32)
    (e, t), = _errors(name, [(n, randn((2, n), torch.float32, n, device="cuda"))]).values()
    assert e <= max(2e-7, t), (name, n, e, t)


def test_vector_add_through_the_bridge():
    from phase24.hello import hello

    assert "exactly" in hello()


def test_launch_error_is_a_python_exception():
    from phase24.bridge.launch import LaunchError

    k = ci._kernel(ci.source("v4"), ci.kernel_name("v4", (1024, 2), torch.float32))
    x = torch.randn(2, 8, device="cuda")
    with pytest.raises(LaunchError, match="softmax_v4_g1024_k2_f32"):
        k.launch(1, 2048, x, x, ci.np.int64(2), ci.np.int32(8), ci.np.int64(8))


def test_a_benchmark_of_rungs_without_torch_still_times_torch():
    """`bench softmax --impl cuda-naive cuda-v1`: torch is every speed-up's baseline, so it is
    timed even when not asked for, and each record has its speed-up."""
    from phase24.harness.bench import run_bench
    from phase24.softmax.spec import OP

    result = run_bench(OP, {k: IMPLEMENTATIONS[k] for k in ("cuda-naive", "cuda-v1")},
                       ["float32"], [(4, 1024)], peers={})
    assert all(r["gpu_us"] and r["loop_us"] and r["us"] for r in result["records"]), result
    assert [r["impl"] for r in result["records"]] == ["torch", "cuda-naive", "cuda-v1"]
    assert all(r["speedup_vs_torch"] for r in result["records"]) and not result["failures"]
