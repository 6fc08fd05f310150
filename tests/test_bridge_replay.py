"""Replays without a GPU: a launcher's decisions run once per key, and the launches replayed
after (real DriverLaunch objects over a stand-in driver) take the new tensors' addresses
(views at their offsets), never stale ones."""

import ctypes

import numpy as np
import pytest
import torch

from phase24.bridge import driver_launch, launch, replay
from phase24.bridge.replay import Replays


class FakeDriver:
    """libcuda's three calls a replayed launch makes, keeping each launch's grid, block, shared
    bytes and parameters as 64-bit words (an int32 parameter: its low half)."""

    def __init__(self):
        self.launches = []

    def cuCtxGetCurrent(self, ref):
        ref._obj.value = 1

    def cuCtxSetCurrent(self, ctx):
        raise AssertionError("the replay switched contexts although its own was current")

    def cuLaunchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        words = [ctypes.c_uint64.from_address(p).value for p in params]
        self.launches.append((gx, bx, words, shared))
        return 0


class Loaded:
    """A kernel on its device, as Kernel.on returns it: its first launch runs (and is kept), its
    replays are real DriverLaunch objects over FakeDriver."""

    def __init__(self, fake):
        self.fake = fake

    def launch(self, grid, block, args, shared):
        self.fake.launches.append((grid, block, [int(a) for a in args], shared))

    def driver_launch(self, grid, block, spec, shared):
        return driver_launch.DriverLaunch("k", 0, 1, 2, grid, block, spec, shared)


@pytest.fixture
def loaded(monkeypatch):
    fake = FakeDriver()
    device = Loaded(fake)
    device.launches = fake.launches
    monkeypatch.setattr(driver_launch, "_driver", lambda: fake)
    monkeypatch.setattr(replay, "_stream", lambda index: 0)
    monkeypatch.setattr(launch.Kernel, "on", lambda self, index=None: device)
    monkeypatch.setattr(launch, "_tensors_to_pointers",  # CPU tensors stand in for CUDA ones
                        lambda args: (0, [np.uint64(a.data_ptr()) if isinstance(a, torch.Tensor)
                                          else a for a in args]))
    return device


def launcher(decisions: list):
    """Rows in two launches of a kernel (a slice of each tensor in the second), as a launcher
    with a choice to make would: the choice is counted."""
    kernel = launch.Kernel("k.cu", "k")

    def rows(x, out):
        decisions.append(x.shape)
        half = x.shape[0] // 2
        kernel.launch(7, 128, x, out, np.int32(x.shape[1]))
        kernel.launch(3, 64, x[half:], out[half:], np.int32(x.shape[1]), shared_bytes=16)
    return rows


def test_the_choice_runs_once_and_the_launches_take_the_new_addresses(loaded):
    decisions, replays = [], Replays()
    rows = launcher(decisions)
    calls = []
    for _ in range(3):
        x, out = torch.randn(6, 40), torch.empty(6, 40)
        replays(rows, x, out)
        calls.append((x, out))
    assert len(decisions) == 1  # the first call decided; the two after only launched
    assert len(loaded.launches) == 6
    for i, (x, out) in enumerate(calls):
        first, second = loaded.launches[2 * i], loaded.launches[2 * i + 1]
        low = (lambda w: [w[0], w[1], w[2] & 0xFFFFFFFF]) if i else (lambda w: w)
        assert first[:2] + (low(first[2]), first[3]) == \
            (7, 128, [x.data_ptr(), out.data_ptr(), 40], 0)
        assert second[:2] + (low(second[2]), second[3]) == \
            (3, 64, [x[3:].data_ptr(), out[3:].data_ptr(), 40], 16)


def test_another_shape_stride_dtype_or_alignment_decides_again(loaded):
    decisions, replays = [], Replays()
    rows = launcher(decisions)
    base = torch.randn(8, 41)
    inputs = [torch.randn(6, 40), torch.randn(4, 40), base[:, :40], torch.randn(6, 40).double(),
              torch.randn(6 * 40 + 1)[1:].view(6, 40)]  # 4 bytes off a 16-byte boundary
    for x in inputs:
        replays(rows, x, torch.empty_like(x))
    assert len(decisions) == len(inputs)


def test_a_launch_with_another_tensor_is_run_in_full_every_time(loaded):
    decisions, replays = [], Replays()
    kernel = launch.Kernel("k.cu", "k")
    scratch = torch.zeros(4)

    def rows(x, out):
        decisions.append(1)
        kernel.launch(1, 32, x, out, scratch)

    for _ in range(3):
        replays(rows, torch.randn(2, 8), torch.empty(2, 8))
    assert len(decisions) == 3


def test_cache_clear_decides_again(loaded):
    decisions, replays = [], Replays()
    rows = launcher(decisions)
    x = torch.randn(6, 40)
    replays(rows, x, torch.empty_like(x))
    replays.cache_clear()
    replays(rows, x, torch.empty_like(x))
    assert len(decisions) == 2


def test_at_most_max_keys_are_kept(loaded, monkeypatch):
    from phase24.bridge import replay

    monkeypatch.setattr(replay, "MAX_KEYS", 3)
    decisions, replays = [], Replays()
    rows = launcher(decisions)
    for m in (2, 4, 6, 8, 2):
        x = torch.randn(m, 40)
        replays(rows, x, torch.empty_like(x))
    assert len(replays._steps) <= 3 and len(decisions) == 5  # 2 x 40 was forgotten, decided again
