#!/usr/bin/env bash
# v8's main loops at each named commit and in the working tree, for sm_90a (no GPU):
#   bash explorations/2026-12-04-v8-sass-schedule/compare.sh 9588b50
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cuobjdump=$(ls "$root"/.venv/lib/python3*/site-packages/triton/backends/nvidia/bin/cuobjdump)
tmp=$(mktemp -d)
for rev in "$@" tree; do
    src=$root/src/phase24/gemm/cuda
    if [ "$rev" != tree ]; then
        mkdir -p "$tmp/$rev"
        git -C "$root" archive "$rev" src/phase24/gemm/cuda src/phase24/core/cuda | tar -x -C "$tmp/$rev"
        src=$tmp/$rev/src/phase24/gemm/cuda
    fi
    echo "== $rev"
    nvcc -arch=sm_90a -cubin -O3 -I "$src" -o "$tmp/$rev.cubin" "$src/v8_mma.cu"
    python3 "$(dirname "$0")/loop_sass.py" "$tmp/$rev.cubin" "$cuobjdump"
done
