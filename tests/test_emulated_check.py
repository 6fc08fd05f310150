"""`check OP --file F.cu` on a CPU, emulated: the issue's cases end to end, through the command a
learner types. A correct block-reduction and a correct warp-shuffle softmax pass; the block one
without its tree barriers fails naming a race, and writing one element past its row fails naming
the out-of-bounds write; a shared-tile GEMM passes and, without its second barrier, fails naming
the race; labs/counts/ shows 32 sectors a request for a naive GEMM's loads of a against 4 for the
coalesced one's loads of b, and 32 wavefronts against 1 for a tile stored by columns without and
with padding."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
FILES = ROOT / "tests" / "learner_files" / "emulated"
BLOCK_SOFTMAX = ROOT / "labs" / "solutions" / "my_softmax.cu"  # lab 01's block reduction
TILED_GEMM = ROOT / "labs" / "solutions" / "my_gemm_v2.cu"     # shared tiles
pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++"),
              pytest.mark.skipif(torch.cuda.is_available(), reason="CPU behaviour")]


def check(op: str, path: Path) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "phase24", "check", op, "--file", str(path),
                           "--seed", "5"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out
    return done.returncode, re.sub(r"\n {4}(?=\S)", " ", out)


def planted(tmp_path: Path, source: Path, old: str, new: str) -> Path:
    text = source.read_text()
    assert text.count(old) == 1, old
    path = tmp_path / f"planted_{source.name}"
    path.write_text(text.replace(old, new))
    return path


def test_a_correct_warp_softmax_passes_emulated():
    """(the block-reduction softmax and the tiled GEMM, labs/solutions/, pass in
    tests/test_starters.py)"""
    rc, out = check("softmax", FILES / "warp_softmax.cu")
    assert rc == 0 and "17 passed, 0 failed" in out, out
    assert "emulated on the CPU: correctness and counts, no timing" in out
    assert "counts, not times" in out, out


def test_the_block_softmax_without_its_tree_barriers_fails_naming_a_race(tmp_path):
    path = planted(tmp_path, BLOCK_SOFTMAX, "        __syncthreads();\n", "")  # the tree's
    rc, out = check("softmax", path)
    assert rc == 1 and re.search(r"FAIL planted_my_softmax\.cu f32 \S+: softmax_f32, block "
                                 r"\(0,0,0\) thread \(\d+,0,0\) (writes|reads) buf\[\d+\] \(shared\)"
                                 r" that .* with no barrier between: a race \(planted_my_softmax"
                                 r"\.cu:\d+\)", out), out


def test_a_write_one_past_the_row_fails_naming_the_out_of_bounds_write(tmp_path):
    path = planted(tmp_path, BLOCK_SOFTMAX, "yr[j] = expf(xr[j] - m) / s;",
                   "yr[j] = expf(xr[j] - m) / s;\n    if (threadIdx.x == 0) yr[N] = 0.f;")
    rc, out = check("softmax", path)
    assert rc == 1 and "FAIL planted_my_softmax.cu f32 1x1: softmax_f32, block (0,0,0) thread " \
        "(0,0,0) writes y[1], past the end of y (1 element): out of bounds" in out, out


def test_the_tiled_gemm_without_its_second_barrier_fails_naming_the_race(tmp_path):
    path = planted(tmp_path, TILED_GEMM, "        __syncthreads();  // both tiles read before "
                   "the next step overwrites them\n", "")
    rc, out = check("gemm", path)
    assert rc == 1 and re.search(r"gemm_f32, block \(0,0,0\) thread \(\d+,0,0\) (reads|writes) "
                                 r"[ab]s\[\d+\]\[\d+\] \(shared\) that .* with no barrier between: "
                                 r"a race", out), out


def _per_request(out: str, row: str) -> float:
    m = re.search(rf"^  {re.escape(row)} +\d+ +([\d.]+) ", out, re.M)
    assert m, out
    return float(m[1])


def test_the_counts_show_sectors_and_wavefronts_a_learner_can_predict():
    rc, naive = check("gemm", ROOT / "labs" / "counts" / "naive_rows.cu")
    assert rc == 0 and _per_request(naive, "loads of a") == 32.0, naive
    rc, coalesced = check("gemm", ROOT / "labs" / "counts" / "coalesced.cu")
    assert rc == 0 and _per_request(coalesced, "loads of b") == 4.0, coalesced
    assert _per_request(coalesced, "loads of a") == 1.0, coalesced  # a broadcast
    rc, columns = check("gemm", ROOT / "labs" / "counts" / "tile_columns.cu")
    assert rc == 0 and _per_request(columns, "shared stores to As") == 32.0, columns


def test_padding_the_tile_takes_its_column_stores_to_one_wavefront(tmp_path):
    path = tmp_path / "tile_columns.cu"
    path.write_text((ROOT / "labs" / "counts" / "tile_columns.cu").read_text()
                    .replace("#define PAD 0", "#define PAD 1"))
    rc, out = check("gemm", path)
    assert rc == 0 and _per_request(out, "shared stores to As") == 1.0, out
