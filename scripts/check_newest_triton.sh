#!/usr/bin/env bash
# The CPU suite's Triton-facing tests with the newest Triton the lab supports (pyproject.toml's
# range), beside the CPU build of torch that setup.sh installs; CI runs them with the tested one.
#
#   bash scripts/check_newest_triton.sh [VENV]     (default VENV: /tmp/phase24-newest-triton)
#
# It makes VENV (about 1 GB), installs torch's CPU build, triton $NEWEST and the test tools into
# it, and runs the interpreter's tests of both Triton ladders, the grader and the starters. Exit
# status: pytest's. About 5 minutes on two cores, after the downloads.
set -euo pipefail
root=$(cd -P "$(dirname "$0")/.." && pwd -P)
venv=${1:-/tmp/phase24-newest-triton}
NEWEST=3.9.0
torch=$(grep -o '^TORCH=[0-9.]*' "$root/scripts/setup.sh" | cut -d= -f2)
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q "torch==$torch+cpu" --extra-index-url https://download.pytorch.org/whl/cpu \
    "triton==$NEWEST" numpy rich matplotlib pytest "pytest-xdist==3.8.0"
echo "$root/src" > "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/phase24.pth"
"$venv/bin/python" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
cd "$root"
exec "$venv/bin/python" -m pytest -q -n 2 -p no:cacheprovider tests/test_triton_ladder.py \
    tests/test_gemm_triton.py tests/test_grader.py tests/test_starters.py tests/test_cpu_catches.py \
    tests/test_doctor.py
