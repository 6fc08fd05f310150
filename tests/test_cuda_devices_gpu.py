"""The CUDA C rungs on every GPU of the machine: each launch under its tensor's device, on that
device's current stream, with every cache kept per device; and the portable PTX that a GPU
newer than the built ones runs."""

import threading

import pytest
import torch

from phase24 import bridge
from phase24.bridge.nvcc import PORTABLE
from phase24.softmax.cases import plain, unaligned
from phase24.harness.check import check_case
from phase24.softmax.spec import OP
from phase24.softmax import IMPLEMENTATIONS, softmax_reference
from phase24.softmax.cuda import launchers as ci
from phase24.softmax.args import run_rows

pytestmark = pytest.mark.gpu
CUDA_RUNGS = [name for name in IMPLEMENTATIONS if name.startswith("cuda")]
# Short rows (v4/v6 groups), rows of one cluster with 96 KB of dynamic shared memory (v9's
# default block, v8's next-row buffer), and rows that start off a 16-byte boundary.
CASES = (plain(37, 3000), plain(64, 65536), unaligned(5, 1000))
# Configurations that need a per-device attribute: > 48 KB of dynamic shared memory (v8, v9),
# a non-portable cluster of 16 blocks (v7).
ATTRIBUTE_CONFIGS = (("v8", (1024, 1)), ("v9", (512, 4, 12, 1)), ("v7", (1024, 4, 16)))


@pytest.fixture(autouse=True)
def back_to_gpu_0():
    yield
    torch.cuda.set_device(0)


def clear_every_cache():
    bridge.clear_caches()
    for value in vars(ci).values():
        if hasattr(value, "cache_clear"):
            value.cache_clear()


def wrong_cases(name, fn, device) -> list[str]:
    bad = []
    for seed, case in enumerate(CASES):
        v = check_case(OP, name, fn, case, torch.bfloat16, str(device), seed=seed)
        if not v.ok:
            bad.append(f"{name} {case.name} on {device}: {v.why}")
    return bad


def forced(kind, config):
    return lambda x, out=None: run_rows(lambda a, b: ci.KINDS[kind](a, b, config=config), x, out)


def test_every_rung_on_two_gpus_whichever_is_current():
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU here: needs two (the same-GPU switching test runs on one)")
    bad = []
    for current in (0, 1):  # GPU 0's state first, then GPU 1 with GPU 0 current, and back
        torch.cuda.set_device(current)
        for device in ("cuda:0", "cuda:1"):
            for name in CUDA_RUNGS:
                bad += wrong_cases(name, IMPLEMENTATIONS[name], device)
            for kind, config in ATTRIBUTE_CONFIGS:
                x = torch.randn(3, ci.capacity(kind, config, torch.bfloat16), device=device,
                                dtype=torch.bfloat16)
                out = forced(kind, config)(x)
                assert out.device == x.device
                torch.testing.assert_close(out.float(), torch.softmax(x.float(), -1),
                                           atol=2e-3, rtol=1e-2, msg=f"{kind}{config} {device}")
    assert not bad, "\n".join(bad)


def test_the_same_gpu_named_another_way_after_clearing_every_cache():
    ways = [(lambda: torch.cuda.set_device(0), "cuda"),
            (lambda: torch.cuda.set_device(torch.device("cuda", 0)), torch.device("cuda")),
            (lambda: torch.cuda.set_device("cuda:0"), torch.device("cuda", 0)),
            (lambda: None, "cuda:0")]
    bad = []
    for make_current, device in ways:
        make_current()
        clear_every_cache()
        for name in CUDA_RUNGS:
            bad += wrong_cases(name, IMPLEMENTATIONS[name], torch.device(device))
    assert not bad, "\n".join(bad)


def test_a_new_thread_launches_without_a_current_context():
    """A thread that never touched CUDA has no context current: the launch makes the tensor's
    device's context current for itself."""
    clear_every_cache()
    x = torch.randn(64, 65536, device="cuda", dtype=torch.bfloat16)
    outs, errors = {}, []

    def work():
        try:
            for name in CUDA_RUNGS:
                outs[name] = IMPLEMENTATIONS[name](x)
            torch.cuda.synchronize(x.device)
        except Exception as err:
            errors.append(err)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert not errors, errors
    ref = torch.softmax(x.float(), -1)
    for name, out in outs.items():
        torch.testing.assert_close(out.float(), ref, atol=2e-3, rtol=1e-2, msg=name)


SPIN = 200_000_000  # GPU clock cycles of torch.cuda._sleep: ~0.1 s on the H200


@pytest.mark.parametrize("name", CUDA_RUNGS)
def test_the_launch_waits_on_the_tensors_current_stream(name):
    """The input is written on a busy side stream of its device and the softmax is called on
    it, with another device current where there is one: a launch on any other stream runs
    before the input is there (it still holds NaN)."""
    for index in range(torch.cuda.device_count()):
        src = torch.randn(64, 4096, device=index)
        x = torch.full_like(src, float("nan"))
        torch.cuda.synchronize(index)
        side = torch.cuda.Stream(device=index)
        with torch.cuda.stream(side):
            torch.cuda._sleep(SPIN)
            x.copy_(src)
            with torch.cuda.device((index + 1) % torch.cuda.device_count()):
                out = IMPLEMENTATIONS[name](x)
        side.synchronize()
        torch.testing.assert_close(out.double(), softmax_reference(src).to(out.device),
                                   atol=1e-6, rtol=1e-4, msg=f"{name} on cuda:{index}")


def test_the_portable_ptx_runs_every_rung(monkeypatch):
    """PHASE24_PORTABLE=1: every GPU runs the compute_80 PTX, compiled by the driver, as a GPU
    newer than the built cubins (Blackwell) does; the cluster rungs give their rows to v2."""
    monkeypatch.setenv("PHASE24_PORTABLE", "1")
    clear_every_cache()
    try:
        assert not ci.has_clusters()
        bad = []
        for name in CUDA_RUNGS:
            bad += wrong_cases(name, IMPLEMENTATIONS[name], "cuda")
        loaded = ci._kernel(ci.source("v2"), "softmax_v2_bf16").on(0)
        assert loaded.build.arch == PORTABLE and loaded.build.image.suffix == ".ptx"
        assert not bad, "\n".join(bad)
    finally:
        monkeypatch.delenv("PHASE24_PORTABLE")
        clear_every_cache()


def test_a_launch_refuses_tensors_of_two_gpus():
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU here: needs two")
    x, y = torch.randn(4, 256, device="cuda:0"), torch.empty(4, 256, device="cuda:1")
    kernel = ci._kernel(ci.source("v2"), "softmax_v2_f32")
    with pytest.raises(bridge.LaunchError, match="one GPU"):
        kernel.launch(4, 256, x, y, ci.np.int64(4), ci.np.int32(256), ci.np.int64(256))
