"""The GEMM implementations in the calling situations a library meets, as the softmax's are in
test_cuda_situations_gpu.py and test_triton_gpu.py: two host threads, several streams at once,
two CUDA graphs replayed at once, a GPU whose every SM is busy, a small GPU and a second device.
Each call writes into an output poisoned with NaN, on fresh random operands, and each result is
checked against the float64 product by the Op's own comparison (spec.compare). M is odd; N and K
are odd, or 8 times an odd number, so that the 16-byte paths run (triton-v2's TMA, cuda-v8's
cp.async) on no multiple of a tile of 16 or more. Streams wait behind a gate (a 50 ms sleep on a
side stream), so that what is queued on them runs at once: a launch on another stream than the
caller's runs before the gate opens, and the poison written after the gate replaces its result;
scratch shared by two streams or graphs is written by both at once. The bugs planted for these
tests are in scripts/planted_bugs.py."""

import threading
import time

import pytest
import torch

from phase24.gemm import IMPLEMENTATIONS, GemmArgumentError, which
from phase24.gemm import cuda as cuda_ladder
from phase24.gemm.cases import plain
from phase24.gemm.cuda import launchers as ci
from phase24.gemm.spec import OP
from phase24.gemm.triton import common as tcommon
from softmax_asserts import busy_gpu

pytestmark = pytest.mark.gpu
NAMES = [n for n in IMPLEMENTATIONS if n.startswith(("cuda", "triton"))]  # all but cuBLAS
# 16-byte rows (v2's TMA, v8's cp.async, Triton's 3 to 4 stages); a decode shape (triton-v3's
# split-K and its scratch, `triton`'s choice); odd sizes (v8 pads them, Triton masks every edge).
SHAPES = ((517, 1000, 776), (33, 1000, 3000), (301, 299, 257))
BF16 = torch.bfloat16
SPIN = 100_000_000  # GPU clock cycles of torch.cuda._sleep: ~50 ms on the H200
SMALL_SMEM = 101376  # shared memory a block may use on an Ada or a Blackwell GeForce (99 KB)


def operands(shape, dtype, seed, device="cuda"):
    return plain(*shape).make(dtype, device, torch.Generator(device).manual_seed(seed))


def call(f, a, b):
    """f(a, b) into an output poisoned with NaN on the current stream."""
    out = torch.full((a.shape[0], b.shape[1]), float("nan"), dtype=a.dtype, device=a.device)
    return f(a, b, out=out)


def warm_up(f, pairs):
    """Two calls on each shape: the first decides, compiles and records, the second replays; a
    rung that refuses the operands by design (a 16-bit-only rung, a Hopper-only one) skips."""
    try:
        for a, b in pairs:
            f(a, b)
            f(a, b)
    except GemmArgumentError as err:
        pytest.skip(f"refused by design: {err}")
    torch.cuda.synchronize()


def gate(streams) -> None:
    """Hold ``streams`` until a 50 ms sleep on a side stream ends."""
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(SPIN)
    for s in streams:
        s.wait_stream(side)


def assert_products(results, what: str) -> None:
    """Each (c, a, b, label): c is a @ b by the Op's comparison with the float64 product."""
    refs, bad = {}, []
    for c, a, b, label in results:
        key = (a.data_ptr(), b.data_ptr())
        if key not in refs:
            refs[key] = OP.reference(a, b)
        why = OP.compare(c, refs[key], a.dtype).why
        if why:
            bad.append(f"{label}: {why}")
    assert not bad, f"{what}: {len(bad)} of {len(results)} wrong\n" + "\n".join(bad[:8])


@pytest.mark.parametrize("own_streams", [False, True], ids=["one-stream", "own-streams"])
@pytest.mark.parametrize("name", NAMES)
def test_two_host_threads(name, own_streams):
    """Two threads call at once, 30 calls each on their own operands of every shape, on the
    default stream or each on its own (gated). Catches: a launch on another thread's stream or on
    the stream of an earlier call (planted: gemm-replay-keeps-its-stream), scratch shared by the
    threads; two threads filling one replayed launch's parameters (DriverLaunch's lock) shows
    only when the race strikes."""
    f = IMPLEMENTATIONS[name]
    xs = {t: [operands(s, BF16, 10 * t + i) for i, s in enumerate(SHAPES)] for t in (0, 1)}
    warm_up(f, xs[0])
    streams = {t: torch.cuda.Stream() if own_streams else torch.cuda.current_stream()
               for t in (0, 1)}
    if own_streams:
        gate(streams.values())
    results, errors = [], []

    def work(t):
        try:
            with torch.cuda.stream(streams[t]):
                for i in range(30):
                    a, b = xs[t][i % len(SHAPES)]
                    results.append((call(f, a, b), a, b, f"thread {t} call {i}"))
            streams[t].synchronize()
        except Exception as err:  # an exception in a thread would otherwise pass unseen
            errors.append(err)

    threads = [threading.Thread(target=work, args=(t,)) for t in (0, 1)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert_products(results, name)


@pytest.mark.parametrize("dtype", [BF16, torch.float32], ids=str)
@pytest.mark.parametrize("name", NAMES)
def test_several_streams(name, dtype):
    """Four gated streams call at once on their own operands of the same shapes (so of the same
    scratch sizes), each shape twice. Catches: a launch on another stream than the current one
    (planted: gemm-replay-keeps-its-stream), scratch kept per shape and shared by the streams
    (planted: gemm-v3-scratch-kept, triton-v3's partial sums)."""
    f = IMPLEMENTATIONS[name]
    streams = [torch.cuda.Stream() for _ in range(4)]
    xs = [[operands(s, dtype, 40 + 10 * k + i) for i, s in enumerate(SHAPES)] for k in range(4)]
    warm_up(f, xs[0])
    gate(streams)
    results = []
    for rep in range(2):
        for shape in range(len(SHAPES)):
            for k, s in enumerate(streams):
                a, b = xs[k][shape]
                with torch.cuda.stream(s):
                    results.append((call(f, a, b), a, b, f"stream {k} {SHAPES[shape]} #{rep}"))
    torch.cuda.synchronize()
    assert_products(results, f"{name} {dtype}")


@pytest.mark.parametrize("name", NAMES)
def test_two_graphs_replayed_concurrently(name):
    """Two graphs of each shape, captured after a warm-up on their own operands and outputs,
    replayed three times on two gated streams at once, each time on fresh values copied into the
    captured operands and the outputs poisoned again. Catches: a launch that the capture misses
    or that goes on another stream (the capture fails, or the poison stays), a graph that keeps
    the captured call's values, scratch shared by the graphs (planted: gemm-v3-scratch-kept)."""
    f = IMPLEMENTATIONS[name]
    for shape in SHAPES:
        static = [operands(shape, BF16, seed) for seed in (1, 2)]
        outs = [torch.empty(shape[:2], dtype=BF16, device="cuda") for _ in static]
        warm_up(f, static)
        graphs = [torch.cuda.CUDAGraph() for _ in static]
        for g, (a, b), c in zip(graphs, static, outs):
            with torch.cuda.graph(g):
                f(a, b, out=c)
        streams = [torch.cuda.Stream() for _ in graphs]
        for rep in range(3):
            fresh = [operands(shape, BF16, 100 * rep + k) for k in (0, 1)]
            for (a, b), (a2, b2), c in zip(static, fresh, outs):
                a.copy_(a2)
                b.copy_(b2)
                c.fill_(float("nan"))
            torch.cuda.synchronize()
            gate(streams)
            for g, s in zip(graphs, streams):
                with torch.cuda.stream(s):
                    g.replay()
            torch.cuda.synchronize()
            assert_products([(c, a, b, f"graph {k}") for k, (c, (a, b)) in
                             enumerate(zip(outs, fresh))], f"{name} {shape} replay {rep}")


@pytest.mark.parametrize("name", NAMES)
def test_a_busy_gpu(name):
    """Every SM busy with another stream's kernel for 50 ms when the calls arrive: they wait for
    room, are right, and end soon after. Catches a kernel whose programs wait for one another (a
    persistent or stream-K rung that counts on all of them being resident) hanging; no rung of
    today waits so, and no bug is planted."""
    f = IMPLEMENTATIONS[name]
    xs = [operands(s, BF16, 50 + i) for i, s in enumerate(SHAPES)]
    warm_up(f, xs)
    t0 = time.perf_counter()
    side = busy_gpu(50, 16 * torch.cuda.get_device_properties(0).multi_processor_count)
    results = [(call(f, a, b), a, b, f"{tuple(a.shape)} @ {tuple(b.shape)}") for a, b in xs]
    torch.cuda.synchronize()
    side.synchronize()
    assert time.perf_counter() - t0 < 5
    assert_products(results, f"{name} on a busy GPU")


def forget() -> None:  # the decisions and recorded launches, kept per shape
    tcommon.forget()
    cuda_ladder.replays.cache_clear()


@pytest.fixture
def restored(monkeypatch):
    """Undone after the test: its patches, what was decided under them, the current device."""
    yield monkeypatch
    monkeypatch.undo()
    forget()
    torch.cuda.set_device(0)


@pytest.mark.parametrize("name", NAMES)
def test_a_small_gpu(name, restored):
    """A GPU of 16 SMs, then one of 2 (a MIG slice, a small part), with 99 KB of shared memory a
    block (a GeForce), emulated, in no tuned table: the Triton rungs size their tiles, stages and
    programs for it (triton-v2's persistent programs walk many tiles each, triton-v3 splits K
    less), the CUDA rungs their tiles. Catches: a persistent program that takes only its first
    tile (planted: gemm-v2-one-tile-a-program), a plan that only suits a large GPU."""
    f = IMPLEMENTATIONS[name]
    restored.setattr(tcommon, "smem_per_program", lambda device: SMALL_SMEM)
    restored.setattr(tcommon, "tuned_pick", lambda a, b: None)
    restored.setattr(ci, "tuned", lambda gpu_name: {})
    xs = [operands(s, BF16, 60 + i) for i, s in enumerate(SHAPES)]
    for sms in (16, 2):
        restored.setattr(tcommon, "num_sms", lambda device, sms=sms: sms)
        restored.setattr(ci, "sm_count", lambda device=None, sms=sms: sms)
        forget()
        warm_up(f, xs)
        results = [(call(f, a, b), a, b, f"{sms} SMs {SHAPES[i]}") for i, (a, b) in enumerate(xs)]
        torch.cuda.synchronize()
        assert_products(results, name)
        if name == "triton-v2" and torch.cuda.get_device_capability()[0] >= 9:
            said = which(*xs[0], name)
            programs = int(said.split("PROGRAMS=")[1].split(",")[0])
            assert said.startswith("triton-v2 persistent_kernel") and programs <= sms, said


def test_a_second_device(restored):
    """Operands on cuda:1 with cuda:0 current, on cuda:0 with cuda:1 current, and on cuda:1 with
    it current, every implementation twice per shape (decided and recorded, then replayed).
    Catches: a launch on the current device instead of the operands', a decision, a compiled
    kernel or a recorded launch of one device used on the other."""
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU here: the second-device test needs two")
    results = []
    for current, device in ((0, 1), (1, 0), (1, 1)):
        torch.cuda.set_device(current)
        for name in NAMES:
            for i, shape in enumerate(SHAPES):
                a, b = operands(shape, BF16, 70 + i, device=f"cuda:{device}")
                try:
                    results += [(call(IMPLEMENTATIONS[name], a, b), a, b, f"{name} on cuda:"
                                 f"{device}, cuda:{current} current, {shape}") for _ in (0, 1)]
                except GemmArgumentError:  # a rung that refuses this GPU by design
                    break
    assert_products(results, "second device")  # (on each device's stream: after its calls)
