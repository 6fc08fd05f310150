"""v9's shared-memory layout and wgmma descriptors (src/phase24/gemm/cuda/sw128.cuh), on the CPU:
tests/gemm_sw128_check.cu, built here as host code, checks for every v9 configuration that each
value of each wgmma operand lies where the copies wrote it (the PTX ISA's canonical 128-byte-
swizzled layouts and its swizzle formula, read from the descriptor's bits), and that three known
mistakes fail that check; this file checks the descriptor's bit fields against the PTX ISA's
"Matrix Descriptor Format" table, written out here independently."""

import subprocess
from pathlib import Path

import pytest
from nvcc_helpers import needs_nvcc

from phase24.bridge.nvcc import nvcc_path
from phase24.gemm.cuda import SOURCE_DIR
from phase24.gemm.cuda.configs import configs, named, shared_bytes

CHECK = Path(__file__).with_name("gemm_sw128_check.cu")
pytestmark = [needs_nvcc, pytest.mark.nvcc]


@pytest.fixture(scope="module")
def check(tmp_path_factory):
    exe = tmp_path_factory.mktemp("sw128") / "gemm_sw128_check"
    subprocess.run([nvcc_path(), "-std=c++17", f"-I{SOURCE_DIR}", str(CHECK), "-o", str(exe)],
                   check=True, capture_output=True, text=True)

    def run(*args, rc=0):
        done = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True)
        assert done.returncode == rc, done.stdout + done.stderr
        return done.stdout
    return run


@pytest.mark.parametrize("config", configs("v9"), ids=str)
def test_every_operand_value_is_where_the_copies_wrote_it(check, config):
    p = named("v9", config)
    out = check("layout", p["BM"], p["BN"], p["BK"], p["S"])
    used = int(out.split()[-1])
    assert used == p["S"] * (p["BM"] + p["BN"]) * p["BK"] * 2
    assert shared_bytes("v9", config) >= used + 1023  # room to round the start up to 1 KB


@pytest.mark.parametrize("plant", ["unswizzled", "swapped", "unaligned"])
def test_the_check_fails_on_a_known_mistake(check, plant):
    """Copies written unswizzled, LBO and SBO swapped, tiles not 1024-byte aligned."""
    for config in (configs("v9")[0], (128, 64, 64, 4, 8)):
        p = named("v9", config)
        assert "FAIL" in check("layout", p["BM"], p["BN"], p["BK"], p["S"], plant, rc=1)


def fields(value: int) -> dict:
    """The PTX ISA's descriptor fields (bytes, where the field keeps a byte count >> 4)."""
    return {"start": (value & 0x3FFF) << 4, "lbo": ((value >> 16) & 0x3FFF) << 4,
            "sbo": ((value >> 32) & 0x3FFF) << 4, "base_offset": (value >> 49) & 7,
            "swizzle": value >> 62, "reserved": value & ~(0x3FFF | 0x3FFF << 16 | 0x3FFF << 32 |
                                                          7 << 49 | 3 << 62)}


@pytest.mark.parametrize("start,lbo,sbo", [(0x400, 16, 1024), (0x3FFF0, 8192, 1024),
                                           (0x12340, 0x3FFF0, 16), (0x40400, 16, 1024)])
def test_the_descriptor_encodes_the_documented_fields(check, start, lbo, sbo):
    got = fields(int(check("desc", start, lbo, sbo), 16))
    # the start field keeps address bits 4-17: shared addresses below 256 KB
    assert got == {"start": start & 0x3FFF0, "lbo": lbo, "sbo": sbo, "base_offset": 0,
                   "swizzle": 1, "reserved": 0}  # swizzle mode 1: 128 bytes


@pytest.mark.parametrize("tile", [0x400, 0x8400, 0x30400])
def test_a_and_b_descriptors_as_v9_builds_them(check, tile):
    """A (K-major): SBO one 8-row group of 128-byte rows, 1024 bytes; LBO unused (16, "1");
    each 16 values of K move the start 32 bytes, inside the first row of the pattern (base offset
    0). B (MN-major): LBO the next panel of 64 columns (BK rows of 128 bytes), SBO the next 8
    rows of K; each 16 rows of K move the start 2 KB."""
    for m0 in (0, 64):
        for k0 in (0, 16, 32, 48):
            a = fields(int(check("adesc", tile, m0, k0), 16))
            assert a == {"start": tile + m0 * 128 + k0 * 2, "lbo": 16, "sbo": 1024,
                         "base_offset": 0, "swizzle": 1, "reserved": 0}
            assert (a["start"] >> 7) & 7 == 0  # where the base offset would be needed
    for k0 in (0, 16, 32, 48):
        b = fields(int(check("bdesc", tile, k0, 64), 16))
        assert b == {"start": tile + k0 * 128, "lbo": 64 * 128, "sbo": 1024, "base_offset": 0,
                     "swizzle": 1, "reserved": 0}


@pytest.mark.parametrize("n", sorted({named("v9", c)["BN"] for c in configs("v9")}))
def test_the_accumulator_map_covers_the_tile_once(check, n):
    assert check("acc", n).strip() == "ok"
