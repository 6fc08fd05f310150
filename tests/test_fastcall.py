"""The C++ call path's Python half, on a CPU: what a recorded launch becomes (its parameters'
bytes), what a Triton launch becomes (the parameters Triton's own launcher passes), and that
nothing is taken from C++ where the extension is not there."""

from __future__ import annotations

import inspect
import struct
import types

import numpy as np
import pytest
import torch

from phase24.bridge import fastcall
from phase24.bridge.driver_launch import DriverLaunch


def test_a_recorded_launch_keeps_its_parameters_bytes():
    spec = ((0, 16), (None, np.int32(-2)), (1, 0), (None, np.float32(1.5)),
            (None, np.uint64(2**63 + 5)), (None, np.int64(-1)))
    launch = DriverLaunch("k", 0, 7, 9, 132, 256, spec, 1024)
    name, function, context, grid, block, shared, coop, params, owner = launch.fast()
    assert (name, function, context, grid, block, shared, coop) == ("k", 9, 7, 132, 256, 1024,
                                                                     False)
    assert owner is launch
    assert params == [(0, 16), (-1, 2**32 - 2), (1, 0),
                      (-1, struct.unpack("<I", struct.pack("<f", 1.5))[0]),
                      (-1, 2**63 + 5), (-1, 2**64 - 1)]


def test_a_launch_waited_for_is_not_made_from_cpp():
    assert DriverLaunch("k", 0, 7, 9, 1, 32, ((0, 0),), 0, sync=True).fast() is None


def test_without_the_extension_every_call_stays_in_python():
    calls = fastcall.FastCalls(2**31)
    x = torch.randn(4, 8)
    calls.learn(x, torch.empty_like(x), lambda *a: pytest.fail("asked for launches of a CPU call"))
    assert calls.call(x, None) is None
    if not torch.cuda.is_available():
        assert "no CUDA GPU" in fastcall.status()


def test_a_process_that_asked_before_the_build_loads_it_after(monkeypatch, tmp_path):
    """The main job runs doctor (which asks for the extension: not built yet), then build, then
    bench, in one process: the bench must get the C++ path the build step has just made."""
    monkeypatch.setattr(fastcall, "_folder", lambda: tmp_path)
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(fastcall, "_native", None)
    monkeypatch.setattr(fastcall, "_why_not", "")
    assert fastcall.native() is None and fastcall.status().endswith("not built (python -m "
                                                                    "phase24 build)")
    import torch.utils.cpp_extension as ext
    monkeypatch.setattr(ext, "load", lambda name, *a, **k: (tmp_path / f"{name}.so").touch())
    assert fastcall.build() == ""
    assert fastcall._why_not == ""  # asked again: loads (here, a fake .so that fails to load)
    assert "cannot be loaded" in fastcall.status()


def _fake_compiled(signature, **meta):
    base = dict(num_ctas=1, launch_pdl=False, global_scratch_size=0, profile_scratch_size=0,
                num_warps=4, shared=2048, launch_cooperative_grid=True)
    base.update(meta)
    return types.SimpleNamespace(name="kern", function=1234,
                                 src=types.SimpleNamespace(signature=signature),
                                 metadata=types.SimpleNamespace(**base))


def test_a_triton_launch_has_the_parameters_of_tritons_own_launcher(monkeypatch):
    from phase24.softmax.triton import common

    monkeypatch.setattr(common, "current_context", lambda: 77)
    x, out = torch.randn(3, 64), torch.empty(3, 64)
    sig = {"x": "*fp32", "out": "*fp32", "ws": "*i64", "M": "i32", "N": "i64", "one": "constexpr",
           "eps": "fp32", "SEG": "constexpr"}
    compiled = _fake_compiled(sig)

    def decide(x2d, out, config=None):
        return None

    plan = types.SimpleNamespace(scratch="exchange", words=6)
    key = common.key(decide, x, out, None)
    monkeypatch.setitem(common._DECIDED, key, common.Decided(
        plan, ((compiled, 5, (3, 64, 1, 0.5, 1024)),)))
    made, scratch, words = common.fast_launches(decide, x, out)
    assert (scratch, words) == ("exchange", common.HEAD + 6)
    (name, function, context, grid, block, shared, coop, params, owner), = made
    assert (name, function, context, grid, block, shared, coop) == ("kern", 1234, 77, 5, 128,
                                                                     2048, True)
    assert owner is compiled
    assert params == [(0, 0), (1, 0), (2, 0), (-1, 3), (-1, 64),
                      (-1, struct.unpack("<I", struct.pack("<f", 0.5))[0]), (-1, 0), (-1, 0)]

    for meta in (dict(num_ctas=2), dict(launch_pdl=True), dict(global_scratch_size=8),
                 dict(profile_scratch_size=8)):  # what only Triton's launcher does
        common._DECIDED[key] = common.Decided(plan, ((_fake_compiled(sig, **meta), 5,
                                                      (3, 64, 1, 0.5, 1024)),))
        assert common.fast_launches(decide, x, out) is None, meta


def test_the_triton_launcher_passes_what_fast_launches_assumes():
    # fast_launches packs the parameters as Triton 3.6's launcher does: the signature's
    # parameters that are not constexprs, then the global and profile scratch pointers. On
    # another Triton version this fails: read its make_launcher, then add the version to
    # common.KNOWN_TRITON.
    import triton
    from triton.backends.nvidia import driver

    from phase24.softmax.triton import common

    assert triton.__version__.startswith(common.KNOWN_TRITON), triton.__version__
    source = inspect.getsource(driver.make_launcher)
    assert 'params = [f"&arg{i}" for i, ty in signature.items() if ty != "constexpr"]' in source
    assert 'params.append("&global_scratch")\n    params.append("&profile_scratch")' in source
    assert "config.blockDimX = 32 * num_warps;" in source
    assert "CU_LAUNCH_ATTRIBUTE_COOPERATIVE" in source
