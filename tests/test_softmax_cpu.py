"""The registry, argument checking, the reference and the checker's logic, without a GPU."""

import pytest
import torch

from phase24.harness.check import check_case
from phase24.softmax.spec import OP, TOLERANCES, compare
from phase24.softmax.cases import plain, standard_cases, with_specials
from phase24.softmax import IMPLEMENTATIONS, SoftmaxArgumentError, softmax, softmax_reference
from phase24.softmax.args import entry, run_rows
from phase24.softmax.cuda.configs import configs
from phase24.softmax.cuda.launchers import reach, v4_choose


def test_registry_names():
    for name in ("torch", "cuda-naive", "cuda-v1", "cuda-v2", "cuda-v3", "cuda-v4", "cuda-v5",
                 "cuda-v6", "cuda-v7", "cuda-v8", "cuda-v9", "cuda-v10", "cuda", "triton-naive", "triton"):
        assert name in IMPLEMENTATIONS, name


@pytest.mark.parametrize("name", [n for n in IMPLEMENTATIONS if n.startswith("cuda")])
def test_cuda_impls_reject_bad_input(name):
    with pytest.raises(SoftmaxArgumentError, match="device 'cpu'"):
        softmax(torch.randn(4, 8), name)
    with pytest.raises(SoftmaxArgumentError, match="dtype torch.int32"):
        softmax(torch.ones(4, 8, dtype=torch.int32), name)
    with pytest.raises(SoftmaxArgumentError, match="0-d"):
        softmax(torch.tensor(1.0), name)
    with pytest.raises(SoftmaxArgumentError, match="torch.Tensor"):
        softmax([1.0, 2.0], name)
    with pytest.raises(SoftmaxArgumentError, match="requires a gradient.*Phase 25"):
        softmax(torch.ones(2, 3, requires_grad=True), name)
    with pytest.raises(SoftmaxArgumentError, match="too long"):
        softmax(torch.empty(0, 2**31), name)
    with pytest.raises(SoftmaxArgumentError, match="sparse"):
        softmax(torch.eye(3).to_sparse(), name)


def test_unknown_impl():
    with pytest.raises(SoftmaxArgumentError, match="unknown implementation"):
        softmax(torch.randn(2, 2), "nope")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_reference_matches_torch_semantics(dtype):
    x = torch.randn(6, 50, dtype=dtype) * 5
    x[0] = float("-inf")
    x[1, 3] = float("nan")
    x[2, ::2] = float("-inf")
    x[3] = 1e300 if dtype == torch.float64 else 3e38
    ref, t = softmax_reference(x), torch.softmax(x.double(), -1)
    assert torch.equal(ref.isnan(), t.isnan())
    ok = ~ref.isnan()
    assert torch.allclose(ref[ok], t[ok], rtol=1e-12, atol=0)


def test_run_rows_shapes_and_views():
    seen = []

    def kernel(x2d, out):
        seen.append((tuple(x2d.shape), x2d.stride(), out.is_contiguous()))
        out.copy_(torch.softmax(x2d.float(), -1).to(out.dtype))

    x = torch.randn(4, 5, 9)
    y = run_rows(kernel, x)
    assert y.shape == x.shape and seen[-1] == ((20, 9), (9, 1), True)
    base = torch.randn(6, 11)
    run_rows(kernel, base[:, 1:])  # a row-strided view is passed through, not copied
    assert seen[-1] == ((6, 10), (11, 1), True)
    run_rows(kernel, torch.randn(9, 6).t())  # a transposed input is made contiguous
    assert seen[-1][1] == (9, 1)
    calls = len(seen)
    assert run_rows(kernel, torch.randn(0, 7)).shape == (0, 7)
    assert run_rows(kernel, torch.randn(7, 0)).shape == (7, 0)
    assert len(seen) == calls  # empty tensors never reach the kernel


def test_compare_accepts_a_correct_result():
    x = torch.randn(64, 257)
    ref = softmax_reference(x)
    for dtype in TOLERANCES:
        rel, worst, sums, why = compare(ref.to(dtype), ref, dtype)
        assert why == "" and worst <= 1


@pytest.mark.parametrize("bug", ["no_max", "unwritten", "wrong_sum", "one_off", "zeros", "nan_row"])
def test_compare_catches_planted_bugs(bug):
    x = torch.randn(64, 1024) * 3
    x[0, 5] = float("nan")
    ref = softmax_reference(x)
    good = torch.softmax(x, -1)
    bad = good.clone()
    if bug == "no_max":
        bad = torch.exp(x * 40) / torch.exp(x * 40).sum(-1, keepdim=True)  # overflows
    elif bug == "unwritten":
        bad[10, 1000:] = float("nan")
    elif bug == "wrong_sum":
        bad[3] *= 1.001
    elif bug == "one_off":
        bad[5, -1] = 0
    elif bug == "zeros":
        bad[1:] = 0
    elif bug == "nan_row":
        bad[0] = good[1]  # a row that should be NaN holds numbers
    assert compare(good, ref, torch.float32)[3] == ""
    assert compare(bad, ref, torch.float32)[3] != ""


def test_checker_runs_torch_on_cpu():
    for case in standard_cases(gpu=False):
        for dtype in (torch.float32, torch.bfloat16):
            v = check_case(OP, "torch", IMPLEMENTATIONS["torch"], case, dtype, "cpu", seed=1)
            assert v.ok, v


def test_specials_catch_a_nan_dropped_among_minus_inf():
    # v4 and v5 before c8e92cb: a thread whose values were only -inf and one NaN had a max of
    # -inf and wrote 0 for all of them, so the row came out finite. Emulated here: a NaN whose
    # 8 neighbours on each side are all -inf counts as -inf.
    def drops_lonely_nan(x):
        x = x.clone()
        for r, c in torch.isnan(x).nonzero().tolist():
            around = torch.cat([x[r, max(0, c - 8):c], x[r, c + 1:c + 9]])
            if bool((around == float("-inf")).all()):
                x[r, c] = float("-inf")
        return torch.softmax(x, -1)

    case = with_specials(8, 512)
    assert check_case(OP, "torch", IMPLEMENTATIONS["torch"], case, torch.float32, "cpu", seed=3).ok
    v = check_case(OP, "drops", drops_lonely_nan, case, torch.float32, "cpu", seed=3)
    assert not v.ok, v


def test_checker_fails_a_wrong_implementation():
    def wrong(x, out):
        out.copy_(torch.softmax(x, -1))
        out[..., -1] = 0  # forgets the last column
        return out

    v = check_case(OP, "wrong", wrong, plain(8, 100), torch.float32, "cpu", seed=2)
    assert not v.ok and "error" in v.why


def test_v4_choice_covers_rows():
    for dtype in (torch.float32, torch.bfloat16):
        vw = 4 if dtype == torch.float32 else 8
        for n in [1, 2, 3, 127, 128, 1000, 4096, reach("v4", dtype)]:
            g, k = v4_choose(n, dtype)
            assert (g, k) in configs("v4", dtype) and g * k * vw >= n
        assert v4_choose(reach("v4", dtype) + 1, dtype) is None
    assert reach("v5", torch.float32) == 262144 and reach("v5", torch.bfloat16) == 262144


def test_each_shape_s_configuration_is_chosen_once(monkeypatch):
    """A launcher's scan of its configurations (up to ~200 us on a CPU) runs once per shape, then
    `cuda`'s entries replay its launches (bridge/replay.py): each call of a few-row softmax waited
    on it before. Every tunable rung, untuned (a GPU without a tuned table), on a stand-in GPU."""
    import numpy as np

    from phase24.bridge import launch, replay
    from phase24.softmax.cuda import launchers as ci

    class Loaded:  # a kernel on its device, as Kernel.on returns it
        launches = 0

        def launch(self, *args):
            Loaded.launches += 1

        def driver_launch(self, *args):  # a recorded launch, as Replays replays it
            return lambda addresses, stream: self.launch()

        def max_active_clusters(self, *args):
            return 16

    monkeypatch.setattr(ci, "gpu", lambda device=None: launch.Gpu(0, "another GPU", (9, 0), 132))
    monkeypatch.setattr(ci, "has_clusters", lambda device=None: True)
    monkeypatch.setattr(launch.Kernel, "on", lambda self, index=None: Loaded())
    monkeypatch.setattr(launch.Kernel, "set_attribute", lambda self, name, value: None)
    monkeypatch.setattr(replay, "_stream", lambda index: 0, raising=False)  # no CUDA in torch
    monkeypatch.setattr(launch, "_tensors_to_pointers",  # CPU tensors stand in for CUDA ones
                        lambda args: (0, [np.uint64(a.data_ptr()) if isinstance(a, torch.Tensor)
                                          else a for a in args]))
    calls = []
    for kind, choose in list(ci.CHOOSE.items()):
        monkeypatch.setitem(ci.CHOOSE, kind, lambda *a, _k=kind, _c=choose: calls.append(
            (_k, a[:3])) or _c(*a))
    replays = replay.Replays()
    shapes = ((1, 32768, torch.bfloat16), (64, 262144, torch.float32))
    for _ in range(3):
        for kind in ci.CHOOSE:
            for m, n, dt in shapes:
                x = torch.randn(m, n).to(dt)
                before = Loaded.launches
                replays(ci.KINDS[kind], x, torch.empty_like(x))
                assert Loaded.launches > before, (kind, m, n)  # every call launches
    assert sorted(calls) == sorted({(k, (m, n, dt)) for k in ci.CHOOSE for m, n, dt in shapes})


def test_a_forced_configuration_too_small_for_the_row_is_refused():
    from phase24.softmax.cuda import launchers as ci

    x = torch.empty(2, 100)
    for rows in (ci.rows_v4, ci.rows_v6):
        with pytest.raises(ValueError, match=r"holds rows of at most 4 values, not 100"):
            rows(x, torch.empty_like(x), config=(1, 1))


def test_tuned_configurations_have_one_entry_per_benchmark_shape():
    """Every shape of the recorded tuning run keeps its own winner (no two shapes share a key)."""
    import json
    from pathlib import Path

    from phase24.softmax.cuda import launchers as ci, tuning

    run = json.loads((Path(__file__).resolve().parents[1] / "results/h200/tune.json").read_text())
    keys = [(e["dtype"], e["N"], ci.rows_class(e["M"])) for e in run["shapes"]]
    assert len(keys) == len(set(keys))
    table = next(t for t in json.loads(ci.TUNED_FILE.read_text())["tables"]
                 if t["gpu"] == run["gpu"])
    assert table["best"] == tuning.table(run)  # the table is the run's, as the tuner writes it
    for e in run["shapes"]:
        tag = {"float32": "f32", "bfloat16": "bf16"}[e["dtype"]]
        hit = [b for b in table["best"] if (b["dtype"], b["N"], b["rows"]) ==
               (tag, e["N"], ci.rows_class(e["M"]))]
        assert len(hit) == 1 and (hit[0]["kind"], hit[0]["config"]) == \
            (e["best"]["kind"], e["best"]["config"]), (e["dtype"], e["M"], e["N"])



@pytest.mark.parametrize("args", [["out.json", "--few-only"], ["out.json", "--min-n", "16384"]])
def test_the_tuner_refuses_a_partial_retime_with_nothing_to_copy_the_rest_from(args, tmp_path):
    """--few-only and --min-n copy the shapes they skip from --rest-from: without it the tuner
    stops before timing anything, with an error that names the option."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    done = subprocess.run([sys.executable, str(root / "scripts/tune.py"), "softmax", "cuda",
                           *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--rest-from OLD.json" in done.stderr, done.stderr
    assert not (tmp_path / "out.json").exists()


def test_the_tuner_names_the_ladders_it_knows(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, str(root / "scripts/tune.py"), "softmax", "nosuch",
                           "out.json"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "softmax cuda, softmax triton" in done.stderr, done.stderr

# ---- the grader's defences (harness/check.py) ---------------------------------------------------

def _uniform_after_zeroing(x, out):
    x.zero_()  # writes its input, then returns the softmax of what is there now
    return out.copy_(torch.softmax(x, -1))


def test_checker_fails_an_implementation_that_writes_its_input():
    v = check_case(OP, "zeroes", _uniform_after_zeroing, plain(8, 100), torch.float32, "cpu", seed=2)
    assert not v.ok and v.why.startswith("modified its input"), v


def test_the_implementation_runs_before_any_reference_is_computed():
    """So that it cannot find the reference's freed memory; the inputs are then checked byte for
    byte, so the reference is still that of the inputs as they were made."""

    order = []

    def reference(*inputs, rows=None):
        order.append("reference")
        return OP.reference(*inputs, rows=rows)

    def right(x, out):
        order.append("call")
        return out.copy_(torch.softmax(x, -1))

    op = type("Watched", (type(OP),), {"reference": lambda self, *inputs, rows=None:
                                        reference(*inputs, rows=rows)})()
    assert check_case(op, "right", right, plain(8, 100), torch.float32, "cpu", seed=2).ok
    assert order == ["call"] * 3 + ["reference"] * 2, order


def test_a_result_kept_from_an_earlier_call_fails():
    """Every case makes a third call on fresh inputs of the same shape: a file that hands back
    what it computed the first time it saw a shape is wrong there."""
    kept = {}

    def caches(x, out):
        if x.shape not in kept:
            kept[x.shape] = torch.softmax(x, -1)
        return out.copy_(kept[x.shape])

    v = check_case(OP, "caches", caches, plain(8, 100), torch.float32, "cpu", seed=2)
    assert not v.ok and v.why.startswith("wrong on fresh inputs of the same shape"), v


def test_a_refusal_by_design_is_not_applicable_but_a_learners_fails():
    def refuses(x, out=None):
        raise SoftmaxArgumentError("rung: rows of 300 values do not fit in one block")

    v = check_case(OP, "rung", refuses, plain(8, 300), torch.float32, "cpu", seed=1)
    assert v.ok and v.na and "do not fit in one block" in v.why, v
    v = check_case(OP, "mine.py", refuses, plain(8, 300), torch.float32, "cpu", seed=1,
                   learner=True)  # a learner's file may not refuse
    assert not v.ok and not v.na, v


def _as_learner(rows):
    return entry("learner", rows, allow_cpu=True)  # the checker hands it a guarded output


@pytest.mark.parametrize("where,offset", [("before its start", -3), ("after its end", 0)])
def test_guard_regions_catch_a_write_outside_a_learners_output(where, offset):
    def right(x2d, out):
        out.copy_(torch.softmax(x2d, -1))

    def past(x2d, out):
        right(x2d, out)
        at = out.storage_offset() + (offset if offset < 0 else out.numel())
        torch.as_strided(out, (3,), (1,), at).fill_(0.5)  # three elements past one end

    case = plain(8, 100)
    assert check_case(OP, "right.py", _as_learner(right), case, torch.float32, "cpu", seed=4).ok
    v = check_case(OP, "past.py", _as_learner(past), case, torch.float32, "cpu", seed=4)
    assert not v.ok and v.why == f"wrote outside its output: 3 elements {where}", v


def test_a_gpu_fault_is_named_in_one_line():
    from phase24.harness.check import short_error

    err = RuntimeError("CUDA error: an illegal memory access was encountered\nCUDA kernel errors "
                       "might be asynchronously reported at some other API call")
    assert short_error(err) == "illegal memory access (a read or write outside the tensors)"
    assert short_error(ValueError("first\nsecond")) == "ValueError: first"
