#!/usr/bin/env bash
# The main job: sets everything up on a fresh machine, then runs all that this machine can.
# On a GPU: lab 00, every check and the benchmark (table + plot under results/<gpu>/).
# Without one: the toolchain report, every kernel compiled with its ptxas report, the Triton
# checks in the interpreter, the MiniGPT parity report and the last recorded H200 results.
# It ends with a table of every step, its verdict and its time (the log of a CPU run is
# results/cpu/run.log).
set -euo pipefail
cd "$(dirname "$0")"
py=$(bash scripts/setup.sh)
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$(dirname "$py"):$PATH"  # .venv/bin: its nvcc, where set-up installed NVIDIA's wheels
exec "$py" -m phase24 run "$@"
