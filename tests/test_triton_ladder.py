"""The Triton rungs through their registry entries, on small shapes (CI: in Triton's interpreter).

Without a GPU the lab runs Triton in its interpreter (phase24.softmax.triton sets
TRITON_INTERPRET=1 when no GPU is found), so these tests run as they are on a CPU machine; on a
GPU machine the same tests run compiled. Forced configurations reach each path of each rung on
small shapes: several rows per tile, a split row combined over several steps, one-read rows of
one or two chunks. The Gluon rungs (v4, v5) have no interpreter: there the tests check that they
say they fall back, and what they run. tests/test_triton_gpu.py runs every rung at full size.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from phase24.softmax import IMPLEMENTATIONS, SoftmaxArgumentError
from phase24.softmax.args import MAX_ROW, run_rows
from phase24.softmax.triton import (INTERPRETED, RUNGS, best, common, v1_rows, v2_split,
                                    v3_lagged, v4_ring, v5_whole_row, which)
from committed import committed
from softmax_asserts import DTYPES, assert_softmax, randn, specials

ROOT = Path(__file__).resolve().parents[1]
DEVICE = "cpu" if INTERPRETED else "cuda"
pytestmark = pytest.mark.skipif(not INTERPRETED and not torch.cuda.is_available(),
                                reason="Triton compiles for a GPU here and there is none")

# Each path of each rung on small shapes: (rung, forced configuration or None).
PATHS = {
    "naive": ("triton-naive", None),
    "v1": ("triton-v1", None),
    "v1-tall": ("triton-v1", v1_rows.Config(block_m=4, num_warps=4)),  # 4 rows a tile
    "v2": ("triton-v2", None),
    "v2-steps": ("triton-v2", v2_split.Config(seg=16, num_warps=1, pblock=2)),  # combine in steps
    "v3": ("triton-v3", None),
    "v3-two": ("triton-v3", v3_lagged.Config(seg=64, num_warps=1)),  # rows of two chunks
    "v3-three": ("triton-v3", v3_lagged.Config(seg=32, num_warps=1)),  # 3+: v2 in the interpreter
    "v4": ("triton-v4", None),
    "v5": ("triton-v5", None),
    "triton": ("triton", None),
}
SHAPES = [(5, 1), (4, 2), (3, 3), (7, 37), (6, 100), (2, 127)]


def run(path: str, x: torch.Tensor) -> torch.Tensor:
    name, config = PATHS[path]
    if config is None:
        return IMPLEMENTATIONS[name](x)
    return run_rows(lambda a, o: RUNGS[name].softmax_rows(a, o, config), x)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_paths_match_float64(path, dtype):
    for i, shape in enumerate(SHAPES):
        x = randn(shape, dtype, seed=1000 + i, device=DEVICE)
        assert_softmax(run(path, x), x, f"{path} {dtype} {shape} seed {1000 + i}")


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_special_values(path, dtype):
    # Rows of -inf, -inf among values far below zero, NaN, +inf, the dtype's largest values;
    # aligned rows and rows one value off (16-bit rows then go without pairs in v3).
    for n, shift in ((70, 0), (64, 1), (128, 0)):
        x = specials(9, n, dtype, seed=n + shift, device=DEVICE, shift=shift)
        assert_softmax(run(path, x), x, f"{path} {dtype} special values n={n} shift={shift}")


@pytest.mark.parametrize("path", PATHS)
def test_rows_not_16_byte_aligned(path):
    # x[:, 1:] of a (M, N + 1) tensor: row stride N + 1, rows start at odd element offsets.
    for dtype in (torch.float32, torch.bfloat16):
        x = randn((6, 71), dtype, seed=7, device=DEVICE)[:, 1:]
        assert x.stride() == (71, 1)
        assert_softmax(run(path, x), x, f"{path} {dtype} sliced")
        wide = randn((3, 300), dtype, seed=8, device=DEVICE)[:, 3:103]  # row stride 3x N
        assert_softmax(run(path, wide), wide, f"{path} {dtype} strided")


@pytest.mark.parametrize("path", PATHS)
def test_every_output_element_written(path):
    name, config = PATHS[path]
    for dtype in (torch.float32, torch.bfloat16):
        x = randn((9, 45), dtype, seed=21, device=DEVICE)
        out = torch.full_like(x, float("nan"))
        RUNGS[name].softmax_rows(x, out, config)
        assert not out.isnan().any(), f"{path} {dtype}: unwritten elements"
        assert_softmax(out, x, f"{path} {dtype} poisoned output")


@pytest.mark.parametrize("path", PATHS)
def test_float32_accumulation(path):
    # 1024 values near 0: the sum of exp is ~1024, where bfloat16 steps by 8, so a sum kept in
    # bfloat16 is off by several percent (in Triton 3.6's interpreter, which adds bfloat16 as raw
    # bits, by far more).
    x = randn((3, 1024), torch.bfloat16, seed=71, device=DEVICE, scale=0.05)
    assert_softmax(run(path, x), x, f"{path} long bfloat16 rows")


def test_shapes_and_layouts():
    for name in RUNGS:
        f = IMPLEMENTATIONS[name]
        assert f(torch.empty(0, 5, device=DEVICE)).shape == (0, 5)
        assert f(torch.empty(4, 0, device=DEVICE)).shape == (4, 0)
        x3 = randn((2, 3, 33), torch.float32, seed=31, device=DEVICE)
        assert_softmax(f(x3), x3, f"{name} 3-d")
        x1 = randn((19,), torch.bfloat16, seed=32, device=DEVICE)
        assert_softmax(f(x1), x1, f"{name} 1-d")
        xt = randn((40, 6), torch.float32, seed=33, device=DEVICE).t()  # last dim not contiguous
        assert_softmax(f(xt), xt, f"{name} transposed")


def test_split_combines_many_partials_in_steps():
    # 44 partials a row combined 2 at a time; the row's maximum in the last step (exp(100)
    # overflows float32 if the combine takes its maximum from the first steps only).
    x = randn((2, 700), torch.float32, seed=41, device=DEVICE)
    x[1, 690] = 100.0
    assert "PBLOCK=2" in v2_split.decide(x, x, PATHS["v2-steps"][1]).describe()
    assert_softmax(run("v2-steps", x), x, "44 partials, 2 a step")


def test_which_names_what_runs(monkeypatch):
    # For every rung, which() names the kernels its entry launches, with their grids and
    # meta-parameters, in order (recorded at `kernel[grid](...)`; each key's first call goes
    # there, and in the interpreter every call does).
    from triton.runtime import KernelInterface  # (after phase24.softmax.triton chose the mode)

    seen = []
    kernels = [v for rung in RUNGS.values() for v in vars(rung).values()
               if isinstance(v, KernelInterface)]
    for cls in {next(c for c in type(k).__mro__ if "__getitem__" in vars(c)) for k in kernels}:
        real = vars(cls)["__getitem__"]  # (patched where defined: a subclass's is inherited)

        def getitem(kernel, grid, real=real):
            launch = real(kernel, grid)
            return lambda *args, **meta: (
                seen.append(common.Launch("", kernel, grid[0], (), meta).describe().strip()),
                launch(*args, **meta))[1]

        monkeypatch.setattr(cls, "__getitem__", getitem)
    for name in RUNGS:
        for shape in ((8, 100), (3, 5000)):
            x = randn(shape, torch.float32, seed=5, device=DEVICE)
            common.forget()
            seen.clear()
            IMPLEMENTATIONS[name](x)
            assert seen == re.findall(r"\w+_kernel\[\d+\]\([^)]*\)", which(x, name)), name
    x = randn((8, 100), torch.float32, seed=5, device=DEVICE)
    assert which(x, "triton-v1").startswith("triton-v1 rows_kernel")
    assert which(x, "triton-v2").count("triton-v2") == 2  # two launches
    if INTERPRETED:  # the Gluon rungs fall back, and say why
        assert which(x, "triton-v4").startswith("triton-v3 lagged_kernel")
        assert "triton-v4: Gluon has no interpreter" in which(x, "triton-v4")
        assert "triton-v5: Gluon has no interpreter" in which(x, "triton-v5")
        # rows of more than two chunks would wait for a program the interpreter has not run
        long = randn((2, 5000), torch.float32, seed=6, device=DEVICE)
        assert which(long, "triton-v3").startswith("triton-v2 partials_kernel")


def test_heuristic_dispatch(monkeypatch):
    # Without a table entry (always, in the interpreter): rows a program holds go to v1, few
    # long rows to v3, many long rows to v5, each with its fallbacks.
    monkeypatch.setattr(best, "lookup", lambda x2d: None)
    x = torch.empty(8, 32768, device=DEVICE)
    assert best.decide(x, x).launches[0].rung == "triton-v1"
    few = torch.empty(3, 65536, device=DEVICE)
    many = torch.empty(common.num_sms(few.device) + 1, 65536, device=DEVICE)
    assert best.decide(few, few).describe() == v3_lagged.decide(few, few).describe()
    assert best.decide(many, many).describe() == v5_whole_row.decide(many, many).describe()


def test_committed_table_is_well_formed():
    # Every entry of triton_configs.json names a tuned rung and a configuration it accepts.
    tables = json.loads(best.TABLE.read_text())["tables"]
    assert [t["gpu"] for t in tables] == ["NVIDIA H200"]
    data = tables[0]
    assert data["gpu"] and data["source"].startswith(("scripts/tune_triton.py", "scripts/tune.py"))
    seen = set()
    for e in data["best"]:
        rung = best.TUNED[e["rung"]]
        rung.Config(**e["config"])
        assert e["dtype"] in ("f32", "f16", "bf16") and e["rows"] in (0, 1, 2)
        assert e["block_n"] & (e["block_n"] - 1) == 0
        key = (e["dtype"], e["block_n"], e["rows"])
        assert key not in seen, key
        seen.add(key)


def test_candidates_fit_their_rungs():
    # What the tuning script times: valid configurations, whole copies, within shared memory.
    for elem in (4, 2):
        for n in (128, 1000, 4096, 32768, 65536, 131072, 262144):
            for c in v1_rows.candidates(n):
                assert c.block_m == 1 or c.block_m * common.next_pow2(n) <= 4096, c
                assert 4 <= c.num_warps <= 32, c
            for c in v3_lagged.candidates(n, elem):
                assert common.cdiv(n, c.seg) <= v3_lagged.MAX_CHUNKS
            for c in v4_ring.candidates(n, elem):
                assert c.seg % (32 * c.num_warps * 16 // elem) == 0
            for c in v5_whole_row.candidates(n, elem):
                assert c.seg % (32 * c.num_warps * 16 // elem) == 0, c
                assert v5_whole_row._layout(c, n, elem)[1] <= 227 * 1024 - 1024, c
                assert c.split == 1 or n % (c.split * c.seg) == 0, c  # every slice full
    assert [c.split for c in v5_whole_row.candidates(262144, 2)] == [16, 16]
    assert [c.split for c in v5_whole_row.candidates(262144, 4)] == [32, 32]
    assert v5_whole_row.candidates(1 << 20, 2) == []  # more than 32 slices


def test_errors():
    for name in RUNGS:
        f = IMPLEMENTATIONS[name]
        with pytest.raises(SoftmaxArgumentError, match="dtype torch.int32"):
            f(torch.ones(4, 8, dtype=torch.int32, device=DEVICE))
        with pytest.raises(SoftmaxArgumentError, match="0-d"):
            f(torch.tensor(1.0, device=DEVICE))
        with pytest.raises(SoftmaxArgumentError, match="requires a gradient.*Phase 25"):
            f(torch.ones(2, 3, device=DEVICE, requires_grad=True))
        with pytest.raises(SoftmaxArgumentError, match="too long"):
            f(torch.empty(0, MAX_ROW, device=DEVICE))
        with pytest.raises(SoftmaxArgumentError, match="sparse"):
            f(torch.eye(3, device=DEVICE).to_sparse())
    with pytest.raises(SoftmaxArgumentError, match="one block"):
        IMPLEMENTATIONS["triton-naive"](torch.empty(1, 65537, device=DEVICE))
    with pytest.raises(SoftmaxArgumentError, match="longer than a tile"):
        IMPLEMENTATIONS["triton-v1"](torch.empty(1, 32769, device=DEVICE))


def test_exchange_words_one_buffer_per_stream():
    dev = torch.device(DEVICE)
    a = common.exchange_words(dev, 10)
    assert a.numel() >= common.HEAD + 10 and a.dtype == torch.int64 and not a.any()
    if INTERPRETED:  # no streams: every call its own buffer
        assert common.exchange_words(dev, 10) is not a
        return
    assert common.exchange_words(dev, 10) is a       # kept for its stream and size
    assert common.exchange_words(dev, 11) is not a   # another size, another buffer
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        b = common.exchange_words(dev, 10)
    assert b is not a                                # another stream, another buffer
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):                        # a graph: each call a fresh one
        c, d = common.exchange_words(dev, 10), common.exchange_words(dev, 10)
    assert c is not d and not any(c is kept for kept in common._WORDS.values())


# ------------------------------------------------------------ decided once, then replayed ----

def _counting(decide):
    calls = []

    def counted(x2d, out, config=None):
        calls.append(tuple(x2d.shape))
        return decide(x2d, out, config)

    return counted, calls


def test_decided_once_per_key():
    # The decision (rung, configuration, grid, arguments, scratch) is made on a key's first call;
    # a new shape, row stride, dtype or 16-byte alignment of x2d or of out makes a new one.
    decide, calls = _counting(v3_lagged.decide)
    common.forget()
    base = randn((6, 80), torch.float32, seed=3, device=DEVICE)

    def call(x, out=None):
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device) if out is None else out
        common.launch_rows(decide, x, out)
        assert_softmax(out, x, f"{tuple(x.shape)} {x.stride()} {x.dtype}")
        return len(calls)

    assert call(base[:, :64]) == 1
    assert call(base[:, :64]) == 1                    # the same key: decided once
    assert call(base[:, 4:68]) == 1                   # 16 bytes further: the same alignment
    assert call(base[:5, :64]) == 2                   # another shape
    assert call(base[:, :64].contiguous()) == 3       # another row stride
    assert call(base[:, :64].bfloat16()) == 4         # another dtype
    assert call(base[:, 1:65]) == 5                   # x2d 4 bytes off 16
    skew = torch.empty(6 * 64 + 1, device=DEVICE)[1:].view(6, 64)
    assert call(base[:, :64], skew) == 6              # out 4 bytes off 16
    assert call(base[:, :64], skew) == 6
    x = base[:, :64]
    assert common.decided(decide, x, torch.empty_like(x)).plan.describe() == which(x, "triton-v3")


class _Compiled:
    """A stand-in for Triton's CompiledKernel: records each launch."""
    function, packed_metadata = "function", "packed"

    def __init__(self):
        self.launches = []

    def run(self, *args):
        self.launches.append(args)


def test_replay_passes_the_first_calls_arguments(monkeypatch):
    # On a GPU a key's later calls launch the CompiledKernel the first call's kernel[grid](...)
    # returned (common.launch_compiled), with every parameter the first call bound, constexprs
    # included, and this call's pointers; the exchange scratch is fetched on every call. Here
    # with the launch stubbed, as on a GPU.
    compiled, first, words = _Compiled(), [], []

    def launch(p, x2d, out, ws):
        (k,) = p.launches
        first.append((x2d, out, ws, *k.args, *(k.meta[n] for n in k.kernel.arg_names[8:])))
        return [compiled]

    def decide(x2d, out, config=None):
        meta = dict(SEG=64, PAIRS=False, NEG_PAIR=0, PBLOCK=16, GPU=True, num_warps=1,
                    launch_cooperative_grid=True)
        return common.Plan((common.Launch("triton-v3", v3_lagged.lagged_kernel, 3,
                                          (6, 64, 80, 1, common.DEADLINE_NS), meta),),
                           launch, scratch="exchange", words=6)

    def exchange_words(device, n):
        words.append(torch.zeros(common.HEAD + n, dtype=torch.int64))
        return words[-1]

    monkeypatch.setattr(common, "INTERPRETED", False)
    monkeypatch.setattr(common, "REPLAY_KNOWN", True)
    monkeypatch.setattr(common, "current_stream", lambda index: 1234)
    monkeypatch.setattr(common, "exchange_words", exchange_words)
    common.forget()
    base = torch.randn(6, 80)
    x, out = base[:, :64], torch.empty(6, 64)
    common.launch_rows(decide, x, out)
    assert len(first) == 1 and not compiled.launches
    x2, out2 = base[:, 4:68], torch.empty(6, 64)
    common.launch_rows(decide, x2, out2)
    assert len(first) == 1 and len(words) == 2
    (got,) = compiled.launches
    assert got[:9] == (3, 1, 1, 1234, "function", "packed", None, None, None)
    assert got[9:12] == (x2.data_ptr(), out2.data_ptr(), words[1].data_ptr())
    assert got[12:] == first[0][3:]
    assert len(got) - 9 == len(v3_lagged.lagged_kernel.arg_names)
    common.forget()


def test_replay_knows_this_triton():
    # launch_compiled repeats the last lines of JITFunction.run of the Triton versions it knows
    # (common.KNOWN_TRITON); on those this reads them again. Any other version takes Triton's own
    # kernel[grid] on every call instead (REPLAY_KNOWN is False, doctor says so); to give it the
    # direct launch, read jit.py's run and compiler.py's CompiledKernel, then add the version.
    import triton
    from triton.compiler.compiler import CompiledKernel
    from triton.runtime.jit import JITFunction

    if not triton.__version__.startswith(common.KNOWN_TRITON):
        assert not common.REPLAY_KNOWN, triton.__version__
        return
    run = inspect.getsource(JITFunction.run)
    assert ("kernel.run(grid_0, grid_1, grid_2, stream, kernel.function, kernel.packed_metadata, "
            "launch_metadata,\n") in run
    assert "knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook, *bound_args.values())" \
        in run
    assert "stream = driver.active.get_current_stream(device)" in run
    from triton.backends.driver import GPUDriver  # ... which is torch's current raw stream
    assert "self.get_current_stream = _cuda_getCurrentRawStream" in inspect.getsource(GPUDriver)
    assert {"run", "launch_metadata", "_init_handles"} <= set(vars(CompiledKernel))
    assert hasattr(triton.knobs.runtime.launch_enter_hook, "calls")


# ------------------------------------------------------------------- compiled for each GPU ----

COMPILE_CHECK = ROOT / "tests" / "triton_compile_check.py"


def test_kernels_compile_for_ampere_ada_hopper():
    # Without a GPU (Triton's own ptxas, in a process that compiles): every kernel of v3, v4 and
    # v5 in its configurations, for sm_80, sm_89 and sm_90: 16-byte copies and stores, the
    # shared memory within Ada's 99 KB per block, the waits ending in a trap (never a hang).
    env = dict(os.environ, TRITON_INTERPRET="0")
    proc = subprocess.run([sys.executable, str(COMPILE_CHECK)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "compiled" in proc.stdout


def test_benchmark_records_the_kernels_run():
    # The benchmark's `plan` field: which() of the operation, the same words the call launches.
    from phase24.softmax.spec import OP

    x = torch.empty(8, 100, device=DEVICE)
    for name in RUNGS:
        assert OP.which(name, (x,)) == which(x, name)
    assert OP.which("torch", (x,)) == "torch.softmax"


# ------------------------------------------------------------------------ learner's file ----

STARTER = "labs/starters/my_softmax.py"  # graded as committed (tests/committed.py)
LEARNER_OK = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=float("-inf"))
        x = x.to(tl.float32)
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * n + cols, (e / tl.sum(e, axis=0)).to(out_ptr.dtype.element_ty),
                 mask=cols < n)

    def softmax_rows(x2d, out):
        m, n = x2d.shape
        k[(m,)](x2d, out, n, x2d.stride(0), BLOCK=triton.next_power_of_2(n))
''')


def test_learner_file(tmp_path):
    from phase24.softmax.learner_triton import LearnerFileError, load_learner_softmax

    good = tmp_path / "good_softmax.py"
    good.write_text(LEARNER_OK)
    f = load_learner_softmax(good)
    x = randn((5, 3, 40), torch.bfloat16, seed=61, device=DEVICE)[..., 1:]
    assert_softmax(f(x), x, "learner file")
    with pytest.raises(SoftmaxArgumentError, match="dtype"):
        f(torch.ones(2, 2, dtype=torch.int64, device=DEVICE))

    starter = load_learner_softmax(committed(STARTER, tmp_path))  # the TODO copies x: it fails
    x = randn((4, 30), torch.float32, seed=62, device=DEVICE)
    with pytest.raises(AssertionError):
        assert_softmax(starter(x), x, "starter")

    (tmp_path / "no_abi.py").write_text("x = 1\n")
    with pytest.raises(LearnerFileError, match="softmax_rows"):
        load_learner_softmax(tmp_path / "no_abi.py")
    (tmp_path / "broken.py").write_text("def softmax_rows(:\n")
    with pytest.raises(LearnerFileError, match="SyntaxError"):
        load_learner_softmax(tmp_path / "broken.py")
    with pytest.raises(LearnerFileError, match="no such file"):
        load_learner_softmax(tmp_path / "missing.py")
