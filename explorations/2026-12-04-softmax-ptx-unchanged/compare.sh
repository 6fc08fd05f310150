#!/usr/bin/env bash
# PTX of every softmax CUDA kernel at the current tree against the tree of each commit given
# (before the two-operations layout the rungs were src/phase24/kernels/softmax_v*.cu), as
# nvcc makes it for compute_90a with the lab's flags; debug lines dropped, each kernel's own name
# replaced, so two bodies are equal when the instructions are. Needs nvcc, no GPU.
#   bash explorations/2026-12-04-softmax-ptx-unchanged/compare.sh a17ddaf b1d2840 1ced889
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
flags=(-O3 -std=c++17 --expt-relaxed-constexpr -arch=compute_90a -ptx)
mkdir -p "$work/new"
for f in "$root"/src/phase24/softmax/cuda/v*.cu; do
    nvcc "${flags[@]}" -I "$root/src/phase24/softmax/cuda" -I "$root/src/phase24/core/cuda" \
        -o "$work/new/$(basename "$f" .cu).ptx" "$f"
done
for c in "$@"; do
    mkdir -p "$work/$c"
    (cd "$root" && git archive "$c" src/phase24) | tar -x -C "$work/$c"
    if [ -d "$work/$c/src/phase24/softmax/cuda" ]; then  # the two-operations layout
        dirs=(-I "$work/$c/src/phase24/softmax/cuda" -I "$work/$c/src/phase24/core/cuda")
        files=("$work/$c"/src/phase24/softmax/cuda/v*.cu)
    else
        dirs=(-I "$work/$c/src/phase24/kernels")
        files=("$work/$c"/src/phase24/kernels/softmax_v*.cu)
    fi
    for f in "${files[@]}"; do
        nvcc "${flags[@]}" "${dirs[@]}" -diag-suppress 177 \
            -o "$work/$c/$(basename "$f" .cu | sed 's/^softmax_//').ptx" "$f"
    done
    echo "== $(cd "$root" && git rev-parse --short HEAD) against $c"
    python3 "$here/compare.py" "$work/new" "$work/$c"
done
rm -rf "$work"
