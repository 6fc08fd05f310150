#!/usr/bin/env bash
# Set up the Python environment of this repository, idempotently, and print the python to use.
# Every machine gets a virtual environment .venv; after this script, the pages' commands run in
# a shell where it is active:  source .venv/bin/activate  (once per shell).
#
# * On a machine whose python3 already has torch with CUDA and triton (the H200 image, which has
#   no network), nothing is installed: .venv is made over that python3, seeing its packages,
#   with this repository's src/ on its path (a .pth file).
# * Elsewhere .venv gets the CPU wheel of torch 2.13.0, installed FIRST (a bare `torch`
#   requirement would pull a multi-GB CUDA build), then this package in editable mode with its
#   dev and docs extras; then the course site's MathJax and Mermaid are unpacked from their npm
#   packages into docs/assets/vendor/ (scripts/site_assets.sh).
set -euo pipefail
root=$(cd -P "$(dirname "$0")/.." && pwd -P)
cd "$root"

if [ "${PHASE24_SYSTEM_PYTHON:-}" = 1 ] || python3 -c 'import torch, triton, torch.cuda; assert torch.cuda.is_available()' 2>/dev/null; then
    if ! .venv/bin/python -c 'import torch, triton, phase24' 2>/dev/null; then
        rm -rf .venv
        python3 -m venv --system-site-packages --without-pip .venv >&2
        site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
        # python3's own site folders too (it may itself be a venv or conda), then src/
        python3 -c 'import site; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' \
            > "$site/phase24.pth"
        echo "$root/src" >> "$site/phase24.pth"
        .venv/bin/python -c 'import torch, triton, phase24' >&2
    fi
    echo "$root/.venv/bin/python"
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
