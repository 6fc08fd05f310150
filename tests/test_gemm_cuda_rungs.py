"""The CUDA C GEMM ladder without a GPU: every rung compiles for Ampere, Ada and Hopper (and to
the portable PTX) with no spills, but the Hopper-only ones (v9, v10), which compile for sm_90a alone
(no wgmma serialised) and are refused elsewhere in one line; the kernels each file compiles are
exactly those its configuration table in phase24/gemm/cuda/configs.py names; every file keeps the
ladder's header discipline; the launchers' choices and the tuned table's format, v9's refusal
off Hopper and its launch, on a CPU."""

import re
import shutil
import sys

import pytest
import torch
from nvcc_helpers import needs_nvcc

from phase24.bridge.nvcc import PORTABLE, NvccError, compile_cu
from phase24.bridge.prebuild import prebuild
from phase24.core.dtypes import TAG
from phase24.gemm.cuda import HOPPER_ONLY, IMPLEMENTATIONS, SOURCE_DIR, build_jobs, launchers
from phase24.gemm.cuda import tuning
from phase24.gemm.cuda.configs import (FILES, HOPPER_KINDS, RECORDS, blocks, compiled_for, configs,
                                       kernel_name, threads, tile)
from phase24.gemm.cuda.rung import Rung

ARCHS = ("sm_80", "sm_89", "sm_90a")
RUNG_FILES = sorted(FILES.values())


@pytest.fixture(scope="module")
def built():
    """Every rung for every target, built at once (one nvcc per core) on a cold cache."""
    if shutil.which("nvcc"):
        prebuild(build_jobs((*ARCHS, PORTABLE)), out=sys.stderr)


def test_every_rung_file_is_built_and_named():
    assert sorted(p.name for p in SOURCE_DIR.glob("v*.cu")) == RUNG_FILES
    assert {(p.name, t) for p, t in build_jobs(ARCHS)} == {
        (f, t) for f in RUNG_FILES for t in ARCHS if t == "sm_90a" or f not in HOPPER_ONLY}
    assert HOPPER_ONLY == {FILES[k] for k in HOPPER_KINDS} == {
        "v9_wgmma.cu", "v10_tma_producer.cu", "v11_persistent.cu"}
    names = {f"cuda-v{k[1:]}" if k != "v0" else "cuda-naive" for k in FILES} | {"cuda"}
    assert set(IMPLEMENTATIONS) == names


@pytest.mark.parametrize("kind", list(FILES))
def test_each_rung_file_has_its_header_and_includes_no_rung(kind):
    """The first line names the rung and its registry name; the header says what changed, the
    prediction and the limit; headers are included, never another rung's file."""
    text = (SOURCE_DIR / FILES[kind]).read_text()
    name = "cuda-naive" if kind == "v0" else f"cuda-{kind}"
    assert text.startswith(f"// {kind} ({name}): ")
    header = text[:text.index("#include")]
    for word in ("Prediction:", "Limit:") + (("Changed from",) if kind != "v0" else ()):
        assert word in header, f"{FILES[kind]}'s header has no {word!r}"
    includes = re.findall(r'#include "([^"]+)"', text)
    assert includes and all(i.endswith(".cuh") for i in includes), includes
    assert len(text.splitlines()) < 400


@pytest.mark.parametrize("kind", list(FILES))
def test_each_record_sits_beside_its_kernel_and_reads_its_configurations(kind):
    """A rung's record (vN_name.py) is beside its .cu, and reads from it configurations of its
    parameters' length, distinct, the untuned choice first."""
    rung = RECORDS[kind]
    assert (SOURCE_DIR / rung.file).with_suffix(".py").is_file() and rung.kind == kind
    assert rung.configs and len(set(rung.configs)) == len(rung.configs)
    assert all(len(c) == len(rung.params) for c in rung.configs), rung.configs


def test_a_record_reads_its_parameters_and_configurations_from_the_cu(tmp_path):
    """rung.py: the #define line's parameters, the instance lines between the configs markers
    (not those in comments, nor another rung's), and the kernels' names they make."""
    cu = tmp_path / "v99_test.cu"
    cu.write_text("#define V99_KERNEL(tag, T, BM, BN, BK, S) ...\n"
                  "#define V99(BM, BN, BK, S) GEMM_EVERY_DTYPE(V99_KERNEL, BM, BN, BK, S)\n"
                  "V99(1, 1, 1, 1)\n// --8<-- [start:configs]\n// V99(2, 2, 2, 2): a comment\n"
                  "V99(128, 64, 32, 3) V99(64, 64, 32, 4)\nV9(7, 7, 7, 7)\n"
                  "// --8<-- [end:configs]\n")
    rung = Rung("v99", "cuda-v99", str(cu), lambda p: p["BM"] * 2, hopper=True)
    assert rung.params == ("BM", "BN", "BK", "S")
    assert rung.configs == ((128, 64, 32, 3), (64, 64, 32, 4))
    assert rung.kernel_name((128, 64, 32, 3), torch.bfloat16) == "gemm_v99_bm128_bn64_bk32_s3_bf16"
    assert rung.block_threads((64, 64, 32, 4)) == 128 and rung.tile((128, 64, 32, 3)) == (128, 64)
    assert rung.shared_bytes((64, 64, 32, 4)) == 4 * 128 * 32 * 2 + 1024  # stages, aligned


def test_configurations_are_consistent():
    """Every configuration splits into whole warps and tiles; v5's and v6's read float4s."""
    for kind in FILES:
        for config in configs(kind):
            assert threads(kind, config) % 32 == 0 and threads(kind, config) <= 1024, (kind, config)
    for config in configs("v6"):
        bm, bn, bk, wm, wn, tm, tn = config
        assert bm % wm == 0 and bn % wn == 0 and wm % (4 * tm) == 0 and wn % (8 * tn) == 0
        assert tm % 4 == 0 and tn % 4 == 0 and bk % 8 == 0 and bn % 8 == 0, config
    for bm, bn, bk, tm, tn in configs("v5"):
        assert tm % 4 == 0 and tn % 4 == 0 and bk % 8 == 0 and bn % 8 == 0


@needs_nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("kind", list(FILES))
def test_the_table_names_every_kernel_of_its_rung(kind, built):
    """The kernels ptxas reports for a rung's file are exactly the names the table gives: each
    configuration a launcher may choose, for each dtype; none missing, none unnamed."""
    arch = "sm_90a" if kind in HOPPER_KINDS else "sm_80"
    compiled = set(compile_cu(SOURCE_DIR / FILES[kind], arch).kernels)
    named = {kernel_name(kind, config, dtype) for dtype in TAG for config in configs(kind)
             if compiled_for(kind, dtype)}
    assert compiled == named, (f"only compiled: {sorted(compiled - named)}; "
                               f"only in the table: {sorted(named - compiled)}")


@needs_nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("source,arch", [(s, a) for s in RUNG_FILES for a in (*ARCHS, PORTABLE)])
def test_compiles_without_spills(source, arch, built):
    """No kernel spills or keeps a stack frame, and registers x threads fit one SM's 65536; a
    Hopper-only file is refused for any other target, saying so, and ptxas keeps its wgmmas
    asynchronous (no C7515 "wgmma.mma_async instructions are serialized")."""
    if source in HOPPER_ONLY and arch != "sm_90a":
        with pytest.raises(NvccError, match="build it for sm_90a"):
            compile_cu(SOURCE_DIR / source, arch)
        return
    build = compile_cu(SOURCE_DIR / source, arch)
    assert "C7515" not in build.log and "serialized" not in build.log, build.log
    if arch == PORTABLE:  # PTX: the same kernels as the cubins
        entries = set(re.findall(r"^\.visible \.entry (\w+)\(", build.image.read_text(), re.M))
        assert entries == set(compile_cu(SOURCE_DIR / source, "sm_80").kernels)
        return
    kind = next(k for k, f in FILES.items() if f == source)
    by_name = {kernel_name(kind, c, dt): c for c in configs(kind) for dt in TAG}
    assert build.kernels, f"ptxas reported no kernels for {source}"
    for k in build.kernels.values():
        assert k.spills == 0 and k.stack_bytes == 0, f"{k.name} spills on {arch}: {k}"
        assert k.registers * threads(kind, by_name[k.name]) <= 65536, (k.name, arch, k.registers)


# ---- the launchers' choices and the tuned table, without a GPU ----------------------------------

def test_choose_takes_the_largest_tile_that_fills_the_gpu(monkeypatch):
    monkeypatch.setattr(launchers, "sm_count", lambda device=None: 132)
    assert launchers.choose("v6", 4096, 4096) == configs("v6")[0]
    small = launchers.choose("v6", 16, 4096)  # no tile gives 132 blocks: the smallest
    assert small == configs("v6")[-1] and tile("v6", small) == (32, 64)
    mid = launchers.choose("v6", 512, 1024)  # 128 x 128 gives 32 blocks, 64 x 64 gives 128 ...
    assert blocks("v6", mid, 512, 1024) >= 132
    assert all(blocks("v6", c, 512, 1024) < 132 for c in configs("v6")[:configs("v6").index(mid)])


def test_a_grid_past_2_31_blocks_is_split_into_bands(monkeypatch):
    """run() launches bands of rows of C, each within the grid's limit, that cover every row."""
    seen = []

    class Fake:
        def launch(self, grid, block, a, b, c, m, n, k, shared_bytes=0):
            seen.append((grid, block, a.shape[0], c.shape[0], int(m), int(n), int(k)))

    monkeypatch.setattr(launchers, "_kernel", lambda source, name: Fake())
    monkeypatch.setattr(launchers, "MAX_GRID", 200)
    a, b, c = torch.zeros(1000, 3), torch.zeros(3, 100), torch.zeros(1000, 100)
    launchers.run("v0", (), a, b, c)  # tiles of 32 x 8: 13 across; bands of 15 x 32 rows
    assert [(grid, block, rows) for grid, block, rows, *_ in seen] == [
        (195, 256, 480), (195, 256, 480), (26, 256, 40)]
    assert [s[2] for s in seen] == [s[4] for s in seen] == [s[3] for s in seen]


def test_the_tuned_table_is_read_for_its_gpu_only(tmp_path, monkeypatch):
    run = {"gpu": "NVIDIA H200", "shapes": [
        {"dtype": "float32", "M": 4096, "N": 4096, "K": 4096,
         "best": {"kind": "v6", "config": [128, 128, 16, 64, 64, 8, 4], "us": 1.0},
         "all": [{"kind": "v3", "config": [64, 64, 8, 8], "us": 9.0},
                 {"kind": "v3", "config": [32, 64, 8, 4], "us": 7.0},
                 {"kind": "v6", "config": [128, 128, 16, 64, 64, 8, 4], "us": 1.0},
                 {"kind": "v6", "config": [64, 64, 16, 32, 32, 4, 4], "us": 2.0},
                 {"kind": "v4", "config": [128, 128, 8, 8, 8], "skipped": "wrong"}]},
        {"dtype": "bfloat16", "M": 16, "N": 4096, "K": 4096, "best": None}]}
    path = tmp_path / "tuned.json"
    tuning.write_table(run, path, "test")
    monkeypatch.setattr(launchers, "TUNED_FILE", path)
    from phase24.core import tuned as tuned_tables
    tuned_tables.clear()
    try:
        assert launchers.tuned("NVIDIA H200") == {
            ("f32", 4096, 4096, 4096): ("v6", (128, 128, 16, 64, 64, 8, 4),
                                        {"v3": (32, 64, 8, 4),
                                         "v6": (128, 128, 16, 64, 64, 8, 4)})}
        assert launchers.tuned("NVIDIA A100-SXM4-80GB") == {}
        # each rung runs its own fastest configuration on a tuned shape, its choice elsewhere
        monkeypatch.setattr(launchers, "gpu", lambda device=None: type(
            "G", (), {"name": "NVIDIA H200", "sm_count": 132})())
        a, b = torch.zeros(4096, 4096), torch.zeros(4096, 4096)
        assert launchers._config("v3", a, b, None) == (32, 64, 8, 4)
        assert launchers._config("v4", a, b, None) == launchers.choose("v4", 4096, 4096)
        assert launchers._config("v3", a[:8], b, None) == launchers.choose("v3", 8, 4096)
    finally:
        tuned_tables.clear()


def test_the_committed_table_names_compiled_configurations_of_benchmark_shapes():
    """Every entry of the H200's table is a configuration its rung compiles for its dtype, on a
    shape the benchmark times; other GPUs get no table (the heuristic)."""
    from phase24.gemm.shapes import shapes

    table = launchers.tuned("NVIDIA H200")
    assert table and launchers.tuned("another GPU") == {}
    dtypes = {TAG[d]: d for d in TAG}
    for (tag, m, n, k), (kind, config, rungs) in table.items():
        assert (m, n, k) in shapes() and config in configs(kind), (tag, m, n, k, kind, config)
        assert compiled_for(kind, dtypes[tag]), (tag, kind)
        assert rungs[kind] == config, (tag, m, n, k, kind, rungs)
        for rung, own in rungs.items():
            assert own in configs(rung) and compiled_for(rung, dtypes[tag]), (tag, rung, own)


@pytest.mark.parametrize("dtype", list(TAG), ids=str)
def test_candidates_cover_every_tunable_configuration_of_the_dtype(dtype):
    a, b = torch.zeros(8, 8, dtype=dtype), torch.zeros(8, 8, dtype=dtype)
    found = [(f["kind"], tuple(f["config"])) for f, _ in tuning.candidates(a, b)]
    assert found == [(k, c) for k in tuning.TUNED_KINDS for c in configs(k)
                     if compiled_for(k, dtype)]
    assert ("v8" in {k for k, _ in found}) == (dtype != torch.float32)
    assert {f["kind"] for f, _ in tuning.candidates(a, b, only=["v6"])} == {"v6"}


def test_v8_asks_for_its_stages_and_is_refused_where_they_do_not_fit(monkeypatch):
    """v8's dynamic shared memory is its stages of A's and B's tiles; a GPU that cannot give a
    block that much (Ada: 99 KB) gets one line, never a failed launch."""
    from phase24.bridge import launch
    from phase24.gemm.args import GemmArgumentError
    from phase24.gemm.cuda.configs import shared_bytes

    assert shared_bytes("v8", (128, 128, 32, 64, 64, 3, 8)) == 3 * 256 * 32 * 2
    assert max(shared_bytes("v8", c) for c in configs("v8")) == 3 * 384 * 64 * 2  # 144 KB
    assert all(shared_bytes(k, c) == 0 for k in FILES if k not in ("v8", "v9", "v10", "v11")
               for c in configs(k))
    monkeypatch.setattr(launchers, "gpu", lambda device=None: launch.Gpu(
        0, "an Ada GPU", (8, 9), 128, 99 * 1024))
    monkeypatch.setattr(launchers, "_kernel", lambda source, name: pytest.fail("launched"))
    a = torch.zeros(256, 64, dtype=torch.bfloat16)
    b, c = torch.zeros(64, 256, dtype=torch.bfloat16), torch.zeros(256, 256, dtype=torch.bfloat16)
    with pytest.raises(GemmArgumentError, match="at most 101376"):
        launchers.run("v8", (128, 256, 64, 64, 64, 3, 8), a, b, c)


# ---- v9 (wgmma): Hopper only ---------------------------------------------------------------------

HOPPER = ("NVIDIA H200", (9, 0), 132, 227 * 1024)


class FakeKernel:
    """Records launches instead of making them (no GPU here)."""

    def __init__(self, name, seen):
        self.name, self.seen = name, seen

    def set_attribute(self, name, value):
        self.seen.append(("attribute", name, value))

    def launch(self, grid, block, a, b, c, m, n, k, shared_bytes=0):
        self.seen.append((self.name, grid, block, shared_bytes, tuple(a.shape), tuple(b.shape)))


def _gpu(monkeypatch, name, capability, sms, smem):
    from phase24.bridge import launch

    monkeypatch.setattr(launchers, "gpu", lambda device=None: launch.Gpu(0, name, capability, sms,
                                                                         smem))


def _bf16(m, n, k):
    return (torch.zeros(m, k, dtype=torch.bfloat16), torch.zeros(k, n, dtype=torch.bfloat16),
            torch.zeros(m, n, dtype=torch.bfloat16))


def test_v9_asks_for_its_stages_and_a_1024_byte_boundary():
    from phase24.gemm.cuda.configs import shared_bytes

    assert shared_bytes("v9", (128, 256, 64, 4, 8)) == 4 * 384 * 64 * 2 + 1024
    assert max(shared_bytes("v9", c) for c in configs("v9")) <= 227 * 1024  # Hopper's most
    assert all(threads("v9", c) == c[0] // 64 * 128 for c in configs("v9"))
    assert configs("v9")[0][:2] == (128, 128)  # the untuned choice on large shapes


@pytest.mark.parametrize("kind", ["v9", "v10"])
@pytest.mark.parametrize("capability,portable", [((8, 0), "0"), ((8, 9), "0"), ((9, 0), "1")])
def test_hopper_rungs_are_refused_off_hopper_in_one_line(monkeypatch, capability, portable, kind):
    """An Ampere or Ada GPU, or a Hopper one running the portable PTX: one line saying where v9
    and v10 run and what runs here, no launch; and `cuda` ignores a tuned table's v9 or v10
    there."""
    from phase24.gemm.args import GemmArgumentError

    monkeypatch.setenv("PHASE24_PORTABLE", portable)
    _gpu(monkeypatch, "a GPU", capability, 108, 163 * 1024)
    monkeypatch.setattr(launchers, "_kernel", lambda source, name: pytest.fail("launched"))
    a, b, c = _bf16(256, 256, 64)
    with pytest.raises(GemmArgumentError, match=r"Hopper only .* use cuda-v8") as err:
        launchers.KINDS[kind](a, b, c)
    assert "\n" not in str(err.value)
    monkeypatch.setattr(launchers, "tuned", lambda name: {
        ("bf16", 256, 256, 64): (kind, configs(kind)[0], {kind: configs(kind)[0]})})
    assert launchers.tuned_hit(a, b) is None


def test_v9_on_hopper_launches_a_warpgroup_per_64_rows_and_pads_unaligned_rows(monkeypatch):
    monkeypatch.delenv("PHASE24_PORTABLE", raising=False)
    _gpu(monkeypatch, *HOPPER)
    seen = []
    monkeypatch.setattr(launchers, "_kernel", lambda source, name: FakeKernel(name, seen))
    config = (128, 256, 64, 4, 8)
    a, b, c = _bf16(300, 520, 128)
    launchers.KINDS["v9"](a, b, c, config=config)
    name = kernel_name("v9", config, torch.bfloat16)
    shared = 4 * 384 * 128 + 1024
    assert seen == [("attribute", "MAX_DYNAMIC_SHARED_SIZE_BYTES", shared),
                    (name, 3 * 3, 256, shared, (300, 128), (128, 520))]
    seen.clear()
    a, b, c = _bf16(5, 7, 33)  # rows of 66 and 14 bytes: copies padded to K = 40, N = 8
    launchers.KINDS["v9"](a, b, c, config=config)
    assert seen[-1][1:] == (1, 256, shared, (5, 40), (40, 8))


def test_cuda_keeps_v8_untuned_on_hopper(monkeypatch):
    """Untuned, `cuda` runs v8 for 16-bit types on every GPU: v9 only where the table says."""
    _gpu(monkeypatch, *HOPPER)
    seen = []
    monkeypatch.setattr(launchers, "_kernel", lambda source, name: FakeKernel(name, seen))
    monkeypatch.setattr(launchers, "tuned", lambda name: {})
    a, b, c = _bf16(256, 256, 64)
    launchers.gemm_best(a, b, c)
    assert seen[-1][0].startswith("gemm_v8_")
    config = configs("v9")[2]
    monkeypatch.setattr(launchers, "tuned", lambda name: {
        ("bf16", 256, 256, 64): ("v9", config, {"v9": config})})
    launchers.gemm_best(a, b, c)
    assert seen[-1][0] == kernel_name("v9", config, torch.bfloat16)


# ---- v10 (TMA, a producer warpgroup): Hopper only ------------------------------------------------

def test_v10_asks_for_its_stages_and_a_producer_warpgroup():
    from phase24.gemm.cuda.configs import shared_bytes

    assert shared_bytes("v10", (128, 256, 64, 4, 8)) == 4 * 384 * 64 * 2 + 1024
    assert max(shared_bytes("v10", c) for c in configs("v10")) <= 227 * 1024
    assert all(threads("v10", c) == (c[0] // 64 + 1) * 128 for c in configs("v10"))


def test_v10_launches_with_tensor_maps_of_its_boxes_and_pads_unaligned_rows(monkeypatch):
    """v10's kernel takes a map of A in boxes of a tile's rows x 64 values of K and a map of B
    in boxes of 64 x 64, in place of their addresses; rows off 16 bytes are padded first."""
    monkeypatch.delenv("PHASE24_PORTABLE", raising=False)
    _gpu(monkeypatch, *HOPPER)
    seen, maps = [], []
    monkeypatch.setattr(launchers, "_kernel", lambda source, name: FakeKernel(name, seen))
    monkeypatch.setattr(launchers, "tiled_128b", lambda t, cols, rows: maps.append(
        (tuple(t.shape), cols, rows)) or t)
    config = (128, 256, 64, 4, 8)
    a, b, c = _bf16(300, 520, 128)
    launchers.KINDS["v10"](a, b, c, config=config)
    shared = 4 * 384 * 128 + 1024
    assert seen == [("attribute", "MAX_DYNAMIC_SHARED_SIZE_BYTES", shared),
                    (kernel_name("v10", config, torch.bfloat16), 3 * 3, 384, shared, (300, 128),
                     (128, 520))]
    assert maps == [((300, 128), 64, 128), ((128, 520), 64, 64)]
    maps.clear()
    a, b, c = _bf16(5, 7, 33)  # rows of 66 and 14 bytes: copies padded to K = 40, N = 8
    launchers.KINDS["v10"](a, b, c, config=(64, 128, 64, 8, 8))
    assert maps == [((5, 40), 64, 64), ((40, 8), 64, 64)] and seen[-1][2] == 256


def test_a_replayed_launch_remakes_its_tensor_maps_from_the_new_addresses():
    """A tensor map holds its tensor's address: a replay with new tensors remakes each map from
    the new address (a replay of the old map would read the old tensors); a map of a tensor that
    is not one of the call's is not replayed at all."""
    from phase24.bridge.driver_launch import DriverLaunch
    from phase24.bridge.replay import _steps
    from phase24.bridge.tensormap import TensorMap

    class Loaded:
        def driver_launch(self, grid, block, spec, shared):
            return DriverLaunch("k", 0, 0, 0, grid, block, spec, shared)

    t, other = torch.zeros(4, 4), torch.zeros(4, 4)
    made = []

    def remake(address):
        made.append(address)
        m = TensorMap()
        m.opaque[0] = address
        return m

    for tensor, replayed in ((t, True), (other, False)):
        m = TensorMap()
        m.address, m.remake = tensor.data_ptr(), remake
        steps = _steps([(Loaded(), 1, 128, (m, t), 0)], [t])
        assert (steps is not None) == replayed
    (step,) = _steps([(Loaded(), 1, 128, (m, other), 0)], [other])
    assert step.remade and step.fast() is None  # the C++ path never replays a stale map
    value, which, fn = step.remade[0]
    assert which == 0 and fn is remake
