#!/usr/bin/env bash
# The tests: sets everything up on a fresh machine, then runs pytest. Without a GPU the tests
# marked `gpu` are skipped (and listed as skipped); scripts/gpu-session.sh runs them on one.
# They run in parallel, a pytest-xdist worker per core (at most 8), where xdist is installed
# (scripts/setup.sh installs it); arguments come after, so `bash test.sh -n 0` runs them in one
# process.
set -euo pipefail
cd "$(dirname "$0")"
py=$(bash scripts/setup.sh)
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$(dirname "$py"):$PATH"  # .venv/bin: its nvcc, where set-up installed NVIDIA's wheels
if ! command -v nvcc > /dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="$PATH:/usr/local/cuda/bin"  # where the lab finds it too (bridge/nvcc.py): the
fi                                           # tests that need nvcc then run instead of skipping
workers=()
if "$py" -c 'import xdist' 2>/dev/null; then
    n=$(nproc 2>/dev/null || echo 1)
    workers=(-n "$(( n < 8 ? n : 8 ))" --dist worksteal)
fi
exec "$py" -m pytest "${workers[@]}" "$@"
