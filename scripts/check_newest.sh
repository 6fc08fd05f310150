#!/usr/bin/env bash
# The CPU suite's version-facing tests (both Triton ladders in the interpreter, the grader and its
# defences, the starters, doctor) with the newest releases the lab supports (pyproject.toml's
# ranges), each pair in a venv of its own; CI runs the whole suite with the tested pair that
# scripts/setup.sh installs.
#
#   bash scripts/check_newest.sh [triton|torch|both]     (default: both)
#
#   triton: torch's CPU build that setup.sh installs, with Triton $NEWEST_TRITON
#           (/tmp/phase24-newest-triton, about 1 GB).
#   torch:  torch $NEWEST_TORCH with the Triton it requires (its CUDA build, the only one this
#           machine holds: /tmp/phase24-newest-torch, about 5.6 GB; pip takes it from the local
#           wheel store where there is one).
# Exit status: 0 when every pair's tests pass. About 5 minutes a pair on two cores, after the
# downloads.
set -euo pipefail
root=$(cd -P "$(dirname "$0")/.." && pwd -P)
NEWEST_TRITON=3.9.0
NEWEST_TORCH=2.14.1
torch=$(grep -o '^TORCH=[0-9.]*' "$root/scripts/setup.sh" | cut -d= -f2)
tools=(numpy rich matplotlib pytest "pytest-xdist==3.8.0" pytest-timeout)

check() {  # VENV PIP-ARGS...: make the venv, install, run the tests
    local venv=$1
    shift
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q "$@" "${tools[@]}"
    echo "$root/src" > "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/phase24.pth"
    "$venv/bin/python" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
    (cd "$root" && "$venv/bin/python" -m pytest -q -n 2 -p no:cacheprovider \
        tests/test_triton_ladder.py tests/test_gemm_triton.py tests/test_grader.py \
        tests/test_starters.py tests/test_cpu_catches.py tests/test_doctor.py \
        tests/test_grader_defences.py tests/test_parent_decides.py tests/test_bench_file.py \
        tests/test_bad_inputs.py tests/test_grader_ends.py)
}

which=${1:-both}
case $which in
    triton|both) check /tmp/phase24-newest-triton "torch==$torch+cpu" \
                     --extra-index-url https://download.pytorch.org/whl/cpu "triton==$NEWEST_TRITON" ;;&
    torch|both)  check /tmp/phase24-newest-torch "torch==$NEWEST_TORCH" ;;
    triton) ;;
    *) echo "usage: bash scripts/check_newest.sh [triton|torch|both]" >&2; exit 2 ;;
esac
