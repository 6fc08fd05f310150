#!/usr/bin/env bash
# The tests: sets everything up on a fresh machine, then runs pytest. Without a GPU the tests
# marked `gpu` are skipped (and listed as skipped); scripts/gpu-session.sh runs them on one.
set -euo pipefail
cd "$(dirname "$0")"
py=$(bash scripts/setup.sh)
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$(dirname "$py"):$PATH"  # .venv/bin: its nvcc, where set-up installed NVIDIA's wheels
exec "$py" -m pytest "$@"
