"""Compile the waiting rungs' kernels for sm_80, sm_89 and sm_90 without a GPU, and check the PTX.

Run by tests/test_triton_ladder.py in a process with TRITON_INTERPRET=0 (the interpreter
cannot compile). Exits non-zero, naming the kernel and the check, on the first failure.
"""

import sys

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.experimental.gluon._runtime import GluonASTSource

from phase24.softmax.triton import v3_lagged, v4_ring, v5_whole_row

INTS = {"M": "i32", "N": "i32", "stride_x": "i32", "S": "i32", "DEADLINE": "i64"}
ALIGNED = {(i,): [["tt.divisibility", 16]] for i in range(3)}  # the three pointers
DTYPES = (("fp32", 4, torch.float32), ("bf16", 2, torch.bfloat16), ("fp16", 2, torch.float16))


def signature(dt: str, constexprs: list[str], ints=INTS) -> dict:
    return {"x_ptr": f"*{dt}", "out_ptr": f"*{dt}", "ws_ptr": "*i64", **ints,
            **dict.fromkeys(constexprs, "constexpr")}


def check(what: str, ok: bool) -> None:
    if not ok:
        print(f"FAILED: {what}")
        sys.exit(1)


def compile_(source, cc: int, options: dict):
    return triton.compile(source, target=GPUTarget("cuda", cc, 32),
                          options={"launch_cooperative_grid": True, **options})


def copies_and_stores(what: str, ptx: str) -> None:
    copies = [ln for ln in ptx.splitlines() if "cp.async.cg.shared.global" in ln]
    check(f"{what}: every copy one 16-byte cp.async", bool(copies)
          and all(", 0x10," in ln for ln in copies))
    stores = [ln for ln in ptx.splitlines() if "st.global" in ln and ".b64" not in ln]
    check(f"{what}: the row's stores 16 bytes wide", bool(stores)
          and all("st.global.v4" in ln for ln in stores))


def main() -> int:
    n = 0
    for cc in (80, 89, 90):
        for dt, elem, dtype in DTYPES if cc == 90 else DTYPES[:2]:  # fp16 as bf16 elsewhere
            vec = 16 // elem
            for c in v3_lagged.CONFIGS[elem]:
                for pairs in ((False, True) if elem == 2 else (False,)):
                    consts = dict(SEG=c.seg, PAIRS=pairs, PBLOCK=128, GPU=True,
                                  NEG_PAIR=v3_lagged.NEG_INF_PAIR[dtype] if pairs else 0)
                    k = compile_(ASTSource(v3_lagged.lagged_kernel, signature(dt, list(consts)),
                                           consts, ALIGNED), cc,
                                 {"num_warps": c.num_warps, **({"maxnreg": c.maxnreg}
                                                               if c.maxnreg else {})})
                    ptx, what = k.asm["ptx"], f"sm_{cc} {dt} lagged {c} pairs={pairs}"
                    check(f"{what}: waits end in a trap", "trap;" in ptx)
                    check(f"{what}: words read relaxed", "ld.relaxed.gpu.global.b64" in ptx)
                    n += 1
            for c in v4_ring.CONFIGS[elem]:
                consts = dict(SEG=c.seg, VEC=vec, LAG=c.lag, AHEAD=c.ahead, PBLOCK=64, EVEN=False)
                k = compile_(GluonASTSource(v4_ring.ring_kernel, signature(dt, list(consts)),
                                            consts, ALIGNED), cc, {"num_warps": c.num_warps})
                ptx, what = k.asm["ptx"], f"sm_{cc} {dt} ring {c}"
                copies_and_stores(what, ptx)
                check(f"{what}: fits 99 KB", k.metadata.shared <= 99 * 1024)
                check(f"{what}: waits end in a trap, one barrier a poll",
                      "trap;" in ptx and "bar.red.and.pred" in ptx)
                n += 1
            for c in (v5_whole_row.Config(8192, 8), v5_whole_row.Config(4096, 8),
                      v5_whole_row.Config(8192, 16), v5_whole_row.Config(2048, 4, 4),
                      v5_whole_row.Config(4096, 4, 8)):
                held = 1 if c.split == 1 else 2
                nch = max(1, 96 * 1024 // (c.seg * elem) // held)  # every target holds 96 KB
                consts = dict(VEC=vec, R=c.seg // (32 * c.num_warps * vec), NCH=nch,
                              SPLIT=c.split, EVEN=False)
                ints = {k: v for k, v in INTS.items() if k != "S"}
                k = compile_(GluonASTSource(v5_whole_row.whole_row_kernel,
                                            signature(dt, list(consts), ints), consts, ALIGNED),
                             cc, {"num_warps": c.num_warps})
                ptx, what = k.asm["ptx"], f"sm_{cc} {dt} whole row {c} nch={nch}"
                copies_and_stores(what, ptx)
                check(f"{what}: fits 99 KB", k.metadata.shared <= 99 * 1024)
                check(f"{what}: a group's waits end in a trap", ("trap;" in ptx) == (c.split > 1))
                n += 1
    print(f"compiled {n} kernels for sm_80, sm_89 and sm_90: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
