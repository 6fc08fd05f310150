"""Every kernel of the Triton GEMM ladder compiled for sm_90 (H200) and sm_80 (A100) without a GPU,
in the configurations its heuristics choose there, with the PTX and ptxas's report checked.

The test runs this file as a script in a process with TRITON_INTERPRET=0 (the interpreter cannot
compile). Checks: float32 products are never TF32; 16-bit products use the tensor cores (wgmma on
sm_90 for the large tiles, mma elsewhere); the pipelined rungs' loads are asynchronous copies
when the sizes are multiples of 16 (what Triton's specialisation then knows); v2's loads are TMA
copies; the shared memory fits the GPU's limit per program; no registers spilled on sm_90 (on
sm_80 a few bytes in some 4-stage tiles, printed as notes: the A100 is not tuned for); the kernels
also compile for sizes Triton knows nothing about (no multiple of 16 anywhere).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
# (compute capability, shared memory a program may opt into, SMs): an H200 and an A100
GPUS = ((90, 232448, 132), (80, 166912, 108))
SHAPES = ((4096, 4096, 4096), (4096, 11008, 4096), (1000, 1000, 1000), (256, 256, 256),
          (1, 4096, 4096), (16, 4096, 4096), (64, 11008, 4096))
DTYPES = (("fp32", 4), ("bf16", 2), ("fp16", 2))


@pytest.mark.skipif(torch.cuda.is_available(), reason="compiled for real on this GPU's tests")
def test_every_kernel_compiles_for_hopper_and_ampere():
    env = dict(os.environ, TRITON_INTERPRET="0")
    proc = subprocess.run([sys.executable, __file__], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "every check passed" in proc.stdout


# ------------------------------------------------------------------ the script's side ----

def fail(what: str) -> None:
    print(f"FAILED: {what}")
    sys.exit(1)


def spills(ptx: str, arch: str) -> str:
    """ptxas's report of spill stores and loads for ``ptx`` ("" when none)."""
    from triton.backends.nvidia.compiler import get_ptxas

    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "k.ptx"
        src.write_text(ptx)
        done = subprocess.run([get_ptxas(90).path, "-v", f"--gpu-name={arch}", str(src), "-o",
                               str(Path(d) / "k.cubin")], capture_output=True, text=True)
    if done.returncode:
        fail(f"ptxas: {done.stderr[-800:]}")
    found = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", done.stderr)
    return "" if all(s == "0" and l == "0" for s, l in found) else done.stderr


def compile_(what, kernel, sig: dict, consts: dict, cc: int, smem: int, aligned: bool,
             options: dict):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    names = list(sig)
    attrs = {(i,): [["tt.divisibility", 16]] for i, n in enumerate(names)
             if aligned and not sig[n].startswith("tensordesc")}
    sig = {**sig, **dict.fromkeys(consts, "constexpr")}
    try:
        k = triton.compile(ASTSource(kernel, sig, consts, attrs),
                           target=GPUTarget("cuda", cc, 32), options=options)
    except Exception as err:
        fail(f"{what}: does not compile: {str(err)[:1500]}")
    if k.metadata.shared > smem:
        fail(f"{what}: {k.metadata.shared} bytes of shared memory, more than {smem}")
    report = spills(k.asm["ptx"], "sm_90a" if cc == 90 else f"sm_{cc}")
    if report and cc == 90:
        fail(f"{what}: registers spilled: {report[-800:]}")
    if report:  # a few bytes in some 4-stage tiles on sm_80: said, not failed (tuning there)
        print(f"note: {what}: " + " ".join(re.findall(r"\d+ bytes spill \w+", report)))
    return k.asm["ptx"]


def products(what: str, ptx: str, dt: str, cc: int, wgmma: bool) -> None:
    if dt == "fp32":
        if "tf32" in ptx:
            fail(f"{what}: float32 products in TF32")
        return
    if wgmma and cc == 90:
        if "wgmma.mma_async" not in ptx:
            fail(f"{what}: no wgmma for 16-bit products")
    elif "mma.sync" not in ptx and "wgmma.mma_async" not in ptx:
        fail(f"{what}: no tensor-core instruction for 16-bit products")


def main() -> int:
    from phase24.gemm.triton import v0_direct, v1_grouped, v2_persistent, v3_splitk

    n = 0
    for cc, smem, sms in GPUS:
        for dt, elem in DTYPES if cc == 90 else DTYPES[:2]:
            ptrs = {"a_ptr": f"*{dt}", "b_ptr": f"*{dt}", "c_ptr": f"*{dt}"}
            ints = {"M": "i32", "N": "i32", "K": "i32"}
            for aligned in (True, False):
                tag = f"sm_{cc} {dt} {'aligned' if aligned else 'unaligned'}"
                ptx = compile_(f"{tag} v0", v0_direct.direct_kernel, {**ptrs, **ints},
                               dict(BLOCK_M=v0_direct.BLOCK_M, BLOCK_N=v0_direct.BLOCK_N,
                                    BLOCK_K=v0_direct.BLOCK_K), cc, smem, aligned,
                               dict(num_warps=v0_direct.NUM_WARPS, num_stages=1))
                products(f"{tag} v0", ptx, dt, cc, False)
                n += 1
                v1s = dict.fromkeys(v1_grouped.heuristic(m, nn, k, elem, smem, sms)
                                    for m, nn, k in (SHAPES if aligned else SHAPES[2:3]))
                for c in v1s:
                    what = f"{tag} v1 {c}"
                    ptx = compile_(what, v1_grouped.grouped_kernel, {**ptrs, **ints,
                                                                   "b_step": "i32"},
                                   dict(BLOCK_M=c.block_m, BLOCK_N=c.block_n, BLOCK_K=c.block_k,
                                        GROUP_M=c.group_m, EVEN_K=aligned), cc, smem, aligned,
                                   dict(num_warps=c.num_warps, num_stages=c.num_stages))
                    products(what, ptx, dt, cc, c.block_m >= 64)
                    if aligned and c.num_stages > 1 and "cp.async" not in ptx:
                        fail(f"{what}: loads not asynchronous (no software pipelining)")
                    n += 1
                    if cc == 90 and aligned:
                        c2 = v2_persistent.fitted(c, elem, smem)
                        descs = {"a_desc": f"tensordesc<{dt}[{c2.block_m},{c2.block_k}]>",
                                 "b_desc": f"tensordesc<{dt}[{c2.block_k},{c2.block_n}]>",
                                 "c_desc": f"tensordesc<{dt}[{c2.block_m},{c2.block_n}]>"}
                        what = f"{tag} v2 {c2}"
                        ptx = compile_(what, v2_persistent.persistent_kernel, {**descs, **ints},
                                       dict(BLOCK_M=c2.block_m, BLOCK_N=c2.block_n,
                                            BLOCK_K=c2.block_k, GROUP_M=c2.group_m,
                                            PROGRAMS=sms), cc, smem, aligned,
                                       dict(num_warps=c2.num_warps, num_stages=c2.num_stages))
                        products(what, ptx, dt, cc, c2.block_m >= 64)
                        if "cp.async.bulk.tensor" not in ptx:
                            fail(f"{what}: loads are not TMA copies")
                        n += 1
                v3s = dict.fromkeys(v3_splitk.heuristic(m, nn, k, elem, smem, sms)
                                    for m, nn, k in (SHAPES[4:] if aligned else ((3, 5000, 4097),)))
                for c in v3s:
                    what = f"{tag} v3 {c}"
                    ptx = compile_(what, v3_splitk.partial_kernel,
                                   {"a_ptr": f"*{dt}", "b_ptr": f"*{dt}",
                                    "out_ptr": "*fp32" if c.split > 1 else f"*{dt}", **ints,
                                    "chunk": "i32", "b_step": "i32"},
                                   dict(BLOCK_M=c.block_m, BLOCK_N=c.block_n, BLOCK_K=c.block_k,
                                        EVEN_K=aligned), cc, smem, aligned,
                                   dict(num_warps=c.num_warps, num_stages=c.num_stages))
                    products(what, ptx, dt, cc, False)
                    if aligned and c.num_stages > 1 and "cp.async" not in ptx:
                        fail(f"{what}: loads not asynchronous (no software pipelining)")
                    n += 1
                vectors = {(c.block_n, c.block_k, c.num_warps, c.num_stages): c
                           for c in v3_splitk.candidates(1, 4096, 4096, elem, smem, sms)
                           if c.block_m == 1}
                for c in vectors.values():  # one row of A: B's tile in registers, no tl.dot
                    what = f"{tag} v3 vector {c}"
                    ptx = compile_(what, v3_splitk.vector_kernel,
                                   {"a_ptr": f"*{dt}", "b_ptr": f"*{dt}", "out_ptr": "*fp32",
                                    "N": "i32", "K": "i32", "chunk": "i32"},
                                   dict(BLOCK_N=c.block_n, BLOCK_K=c.block_k), cc, smem, aligned,
                                   dict(num_warps=c.num_warps, num_stages=c.num_stages))
                    if "mma" in ptx:
                        fail(f"{what}: tensor-core products in the vector kernel")
                    if aligned and "ld.global.v4" not in ptx:
                        fail(f"{what}: B's rows not read 16 bytes at a time")
                    n += 1
                compile_(f"{tag} v3 sum", v3_splitk.sum_kernel,
                         {"ws_ptr": "*fp32", "c_ptr": f"*{dt}", "MN": "i32", "SPLIT": "i32"},
                         dict(BLOCK=v3_splitk.SUM_BLOCK), cc, smem, aligned, dict(num_warps=4))
                n += 1
    print(f"compiled {n} kernels for sm_90 and sm_80: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
