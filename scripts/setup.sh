#!/usr/bin/env bash
# Set up the Python environment for this repository, idempotently, and print the python to use.
#
# * On a machine whose python3 already has torch and triton (the H200 image, which has no
#   network), nothing is installed: the package runs from src/ through PYTHONPATH.
# * Elsewhere a virtual environment .venv is made once, with the CPU wheel of torch 2.13.0
#   installed FIRST (a bare `torch` requirement would pull a multi-GB CUDA build), then this
#   package in editable mode with its dev and docs extras; then the course site's MathJax and
#   Mermaid are unpacked from their npm packages into docs/assets/vendor/ (scripts/site_assets.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ "${PHASE24_SYSTEM_PYTHON:-}" = 1 ] || python3 -c 'import torch, triton, torch.cuda; assert torch.cuda.is_available()' 2>/dev/null; then
    command -v python3  # the caller puts src/ on PYTHONPATH
    exit 0
fi

stamp=.venv/.phase24-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    python3 -m venv .venv >&2
    .venv/bin/python -m pip install -q --upgrade pip >&2
    .venv/bin/python -m pip install -q "torch==2.13.0" >&2
    .venv/bin/python -m pip install -q -e ".[dev,docs]" >&2
    touch "$stamp"
fi
# The course site's MathJax and Mermaid, from their npm packages, so the site renders offline.
bash scripts/site_assets.sh >&2 || echo "setup.sh: the site's assets are not installed (see above): mkdocs cannot build the site; the labs are unaffected" >&2
echo "$root/.venv/bin/python"
