"""core.guard's ComputeGuard on a CPU: what torch may do inside it (allocate, view, fill scratch;
copy in a launcher) and what raises, naming the operator."""

from __future__ import annotations

import _thread
import threading
import time

import pytest
import torch

from phase24.core.guard import ComputedOutsideKernels, ComputeGuard, launching


def refused(fn, *args) -> str:
    """The message of the violation ``fn(*args)`` raises under a guard (and again at its exit)."""
    with pytest.raises(ComputedOutsideKernels) as caught:
        with ComputeGuard("the code"):
            fn(*args)
    return str(caught.value)


@pytest.mark.parametrize("name,fn,op", [
    ("softmax", lambda x, out: torch.softmax(x, -1), "aten._softmax.default"),
    ("arithmetic", lambda x, out: x * 2, "aten.mul.Tensor"),
    ("reduction", lambda x, out: x.sum(-1), "aten.sum"),
    ("copy into the output", lambda x, out: out.copy_(x), "aten.copy_.default"),
    ("clone", lambda x, out: x.clone(), "aten.clone.default"),
    ("cast", lambda x, out: x.double(), "aten._to_copy.default"),
    ("a value read on the host", lambda x, out: x[0, 0].item(), "aten._local_scalar_dense"),
    ("a fill of the output", lambda x, out: out.fill_(0.5), "aten.fill_.Scalar"),
    ("a zero of the input", lambda x, out: x.zero_(), "aten.zero_.default"),
    ("set_ of the output", lambda x, out: out.set_(torch.empty(3).untyped_storage()),
     "aten.set_.source_Storage"),
    ("a factory's out= form", lambda x, out: torch.zeros(out.shape, out=out), "aten.zeros.out"),
])
def test_a_torch_computation_raises_naming_its_operator(name, fn, op):
    x, out = torch.randn(4, 8), torch.empty(4, 8)
    said = refused(fn, x, out)
    assert said.startswith(op), said
    assert "the code" in said, said


@pytest.mark.parametrize("how", ["numpy", "tolist", "__array__"])
def test_values_taken_out_of_torch_raise(how):
    said = refused(lambda x: getattr(x, how)(), torch.randn(3))
    assert f"Tensor.{how}()" in said, said


def test_allocation_views_and_fills_of_scratch_pass():
    x, out = torch.randn(4, 8), torch.empty(4, 8)
    with ComputeGuard("the code"):
        s = torch.empty(4, 8)
        z = torch.zeros(3, dtype=torch.int32)
        f = torch.full((2,), 1.5)
        e = torch.empty_like(x)
        n = x.new_empty((5,))
        st = torch.empty_strided((2, 2), (1, 2))
        views = [x.view(-1), x.reshape(32), x[1:, 2:], x[0], x.t(), x.transpose(0, 1),
                 x.unsqueeze(0), x[:1].expand(3, 8), x.detach(), x.as_strided((2,), (1,)),
                 out.view(4, 8)]
        s.zero_()
        s[1:].fill_(2.0)  # a view of scratch is scratch
        e.fill_(0.0)
        idx = torch.arange(4)
        _ = (x.shape, x.stride(), x.data_ptr(), x.is_contiguous(), x.dtype, x.device)
    assert views[0].shape == (32,) and z.dtype == torch.int32 and f.shape == (2,)
    assert n.shape == (5,) and st.stride() == (1, 2) and idx.shape == (4,)
    assert (s[0] == 0).all() and (s[1:] == 2).all() and (e == 0).all()


def test_fresh_memory_is_poisoned():
    """Nothing freed before the call can be read back through an allocation during it."""
    torch.full((1000,), 0.25, dtype=torch.float64)  # freed at once: its memory may come back
    with ComputeGuard("the code"):
        a = torch.empty(1000, dtype=torch.float64)
        b = torch.empty(10, dtype=torch.int32)
    assert torch.isnan(a).all()
    assert (b == -1).all()


def test_a_launcher_may_copy_but_not_compute():
    x, out = torch.randn(4, 8), torch.empty(4, 8)
    with ComputeGuard("the code"):
        with launching():
            out.copy_(x)
            out.clone()
            out.zero_()
            x.numpy()
    with pytest.raises(ComputedOutsideKernels, match=r"aten\.exp\.default computed outside your "
                                                     r"kernels \(in a kernel launcher\)"):
        with ComputeGuard("the code"):
            with launching():
                torch.exp(x)


def test_a_caught_violation_is_raised_again_at_exit():
    x = torch.randn(3)
    with pytest.raises(ComputedOutsideKernels, match="aten.exp.default"):
        with ComputeGuard("the code"):
            try:
                torch.exp(x)
            except ComputedOutsideKernels:
                pass


def test_starting_a_thread_raises():
    for start in (lambda: threading.Thread(target=lambda: None).start(),
                  lambda: _thread.start_new_thread(lambda: None, ())):
        said = refused(start)
        assert "the code started a thread" in said, said


def test_a_thread_left_running_raises():
    """One started where threads are allowed (a launcher) and still running at the exit."""
    stop = threading.Event()
    try:
        with pytest.raises(ComputedOutsideKernels, match=r"returned with 1 more thread\(s\) "
                                                         "running"):
            with ComputeGuard("the code"):
                with launching():
                    threading.Thread(target=stop.wait, daemon=True).start()
    finally:
        stop.set()
    time.sleep(0.05)


def test_everything_is_restored_after_the_guard():
    x = torch.randn(3)
    with pytest.raises(ComputedOutsideKernels):
        with ComputeGuard("the code"):
            x.numpy()
    assert torch.softmax(x, -1).shape == (3,) and x.numpy().shape == (3,) and x.tolist()
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    assert "numpy" not in torch.Tensor.__dict__ and "tolist" not in torch.Tensor.__dict__
