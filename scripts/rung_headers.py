"""Write (or check) the "Measured" lines at the top of each CUDA rung from the committed results.

Usage: python3 scripts/rung_headers.py [--check] [results/h200/softmax.json]
Each rung file states the GB/s its registry entry reached in the benchmark sweep; this script
is the only writer of those lines, and tests/test_readme.py runs it with --check so a header
cannot drift from the committed JSON.
"""

import json
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "src" / "phase24" / "kernels"
RUNGS = {"softmax_v0_naive.cu": "cuda-naive", "softmax_v1_block_smem.cu": "cuda-v1",
         "softmax_v2_online_shuffle.cu": "cuda-v2", "softmax_v3_registers_vec16.cu": "cuda-v3",
         "softmax_v4_shape_specialised.cu": "cuda-v4", "softmax_v5_cluster.cu": "cuda-v5",
         "softmax_v6_lean.cu": "cuda-v6", "softmax_v7_cluster_lean.cu": "cuda-v7",
         "softmax_v8_pipelined.cu": "cuda-v8", "softmax_v9_cluster_smem.cu": "cuda-v9",
         "softmax_v10_cluster_push.cu": "cuda-v10"}
LONG_ROWS = 32768  # the cluster rungs also state their figures on rows this long and longer
MARK = "// Measured (H200"


def header(data: dict, impl: str) -> list[str]:
    bulk = [r for r in data["records"] if r["impl"] == impl and r["M"] * r["N"] == 2**28]
    parts, long_parts = [], []
    for dtype, tag in (("float32", "fp32"), ("bfloat16", "bf16")):
        g = [r["gbps"] for r in bulk if r["dtype"] == dtype]
        parts.append(f"{tag} {min(g):.0f}-{max(g):.0f} GB/s (median {statistics.median(g):.0f})")
        p = [r["pct_copy"] for r in bulk if r["dtype"] == dtype and r["N"] >= LONG_ROWS]
        long_parts.append(f"{tag} {min(p):.0f}-{max(p):.0f}%")
    lines = [f"{MARK}, results/h200/softmax.json, commit {data['commit']}, copy "
             f"{data['copy_gbps']:.0f} GB/s),",
             "// bulk sweep N = 128..262144 (shapes beyond a rung's reach run v2): "
             + "; ".join(parts) + "."]
    if impl in ("cuda-v5", "cuda-v7", "cuda-v8", "cuda-v9", "cuda-v10"):
        lines.append(f"// Rows of {LONG_ROWS} to 262144, % of copy: " + "; ".join(long_parts) + ".")
    return lines


def rewrite(text: str, lines: list[str]) -> str:
    src = text.splitlines()
    if any(s.startswith(MARK) for s in src):
        i = next(k for k, s in enumerate(src) if s.startswith(MARK))
        j = i + 1
        while j < len(src) and src[j].startswith("// ") and not src[j].startswith("// --8<--") \
                and (src[j].startswith("// bulk sweep") or src[j].startswith("// Rows of")):
            j += 1
        src[i:j] = lines
    else:  # new rung: right after the include of the shared header
        i = next(k for k, s in enumerate(src) if s.startswith('#include "softmax_common.cuh"'))
        src[i + 1:i + 1] = lines
    return "\n".join(src) + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [a for a in argv if not a.startswith("--")]
    data = json.loads(Path(paths[0] if paths else ROOT / "results/h200/softmax.json").read_text())
    stale = []
    for name, impl in RUNGS.items():
        path = KERNELS / name
        text = path.read_text()
        new = rewrite(text, header(data, impl))
        if new != text:
            stale.append(name)
            if not check:
                path.write_text(new)
    if check and stale:
        print("rung headers differ from the results: " + ", ".join(stale)
              + " (python3 scripts/rung_headers.py rewrites them)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
