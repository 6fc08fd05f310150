#!/usr/bin/env bash
# Set up the Python environment of this repository, idempotently, and print the python to use
# (the only line on stdout; everything else goes to stderr). Every machine gets a virtual
# environment .venv; after this script, the pages' commands run in a shell where it is active:
#   source .venv/bin/activate   (once per shell)
#
# * On a machine whose python3 already has torch with CUDA and triton (the GPU image this lab is
#   tested on, which has no network), nothing is installed: .venv is made over that python3,
#   seeing its packages, with this repository's src/ on its path (a .pth file).
# * On Linux elsewhere, .venv gets, in this order:
#   1. torch. Where nvidia-smi reports a GPU (a rented machine with a plain Python), the GPU
#      image's torch, 2.11.0, in its CUDA 13.0 build from PyPI with the Triton it requires
#      (3.6.0, the lab's pin) and NVIDIA's libraries: gigabytes. That build needs a driver for
#      CUDA 13.0 or newer (nvidia-smi's "CUDA Version"; drivers 580 and later), as do the kernels
#      nvcc 13.0 builds; an older driver gets one line saying so and nothing installed.
#      Elsewhere the CPU build, asked for by its local version (torch==2.13.0+cpu), from a wheel
#      on this machine's disk where pip's find-links has one, else from PyTorch's own CPU wheel
#      index. A bare torch requirement would get PyPI's CUDA build (gigabytes, and a Triton of its
#      own that conflicts with the lab's pin); the CPU build requires no Triton.
#   2. this package in editable mode with its dev and docs extras: triton==3.6.0 (the GPU
#      image's; its interpreter runs the Triton kernels on a CPU), numpy, rich, matplotlib,
#      pytest and pytest-xdist (test.sh runs the tests a worker per core), mkdocs.
#   3. where no nvcc is found, NVIDIA's nvcc from its Python wheels (nvidia-cuda-nvcc and the
#      headers, libraries and cicc it needs), behind a .venv/bin/nvcc wrapper: the kernels then
#      compile, with ptxas's reports, on any Linux machine. Where that cannot be installed, the
#      lab runs without it and says what it skips.
#   It says what it installs and how big before it starts, and a line at least every 15 s.
# * On macOS and Windows it says what runs there and stops (Triton has no wheels for either).
#
# --plan: print the route chosen and why, and the install commands (nvcc's where none is
# found), then stop (tests/test_setup.py).
set -euo pipefail
root=$(cd -P "$(dirname "$0")/.." && pwd -P)
cd "$root"

TORCH=2.13.0       # the CPU build's
TORCH_GPU=2.11.0   # the GPU image's: its CUDA 13.0 build on PyPI requires triton==3.6.0
CUDA_GPU=13.0      # the CUDA that build and nvcc's wheels need the driver to support
CUDA_CORE=1.2.0    # the GPU image's cuda.core
TRITON=3.6.0       # the GPU image's, which its torch requires; its interpreter runs on a CPU
CPU_INDEX=https://download.pytorch.org/whl/cpu
NVCC_WHEELS=("nvidia-cuda-nvcc==13.0.*" "nvidia-cuda-crt==13.0.*" "nvidia-nvvm==13.0.*"
             "nvidia-cuda-runtime==13.0.*" "nvidia-cuda-cccl==13.0.*")
say() { echo "setup.sh: $*" >&2; }

case "$(uname -s)" in
    Darwin)
        say "this is macOS: Triton publishes no macOS wheels and NVIDIA no nvcc for it, so the lab's"
        say "set-up does not run here. What runs on this Mac: the MiniGPT labs (NumPy and PyTorch, CPU):"
        say "  python3 -m venv .venv && .venv/bin/pip install torch==$TORCH numpy rich matplotlib pytest"
        say "  PYTHONPATH=src .venv/bin/python -m phase24 minigpt parity --file labs/starters/my_port.py"
        say "For the rest (the Triton and CUDA labs, bash run.sh, bash test.sh) use a Linux machine, or"
        say "a Linux container here: the CPU route page of the chapter shows how."
        exit 1 ;;
    MINGW* | MSYS* | CYGWIN* | Windows_NT)
        say "this is Windows: Triton publishes no Windows wheels, so the lab's set-up does not run"
        say "here. Run it in WSL2 (wsl --install, then in the Ubuntu shell: clone the repository and"
        say "run bash run.sh there); the CPU route page of the chapter shows the steps."
        exit 1 ;;
esac

# The route: "image" (python3 has torch with CUDA: install nothing), "gpu" (nvidia-smi reports a
# GPU: torch's CUDA build), "cpu"; $why says what decided it.
route=cpu why="nvidia-smi reports no GPU here: torch's CPU build"
if [ "${PHASE24_SYSTEM_PYTHON:-}" = 1 ] ||
        python3 -c 'import torch, triton, torch.cuda; assert torch.cuda.is_available()' 2>/dev/null; then
    route=image why="python3 has torch with CUDA and triton: nothing to install"
elif gpus=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null) &&
        [ -n "$gpus" ]; then
    cuda=$(nvidia-smi 2>/dev/null | grep -o 'CUDA Version: *[0-9][0-9.]*' | grep -o '[0-9][0-9.]*$' | head -n 1)
    gpu="${gpus%%$'\n'*} (name, driver), CUDA ${cuda:-unknown}"
    if [ -z "$cuda" ] || ! printf '%s\n%s\n' "$CUDA_GPU" "$cuda" | sort -C -V; then
        say "nvidia-smi reports $gpu: torch $TORCH_GPU's CUDA build and nvcc $CUDA_GPU's kernels"
        say "need a driver for CUDA $CUDA_GPU or newer (580 or later). Update the NVIDIA driver, or use"
        say "an image whose python3 has torch with CUDA (this script then installs nothing)."
        exit 1
    fi
    route=gpu why="nvidia-smi reports $gpu: torch $TORCH_GPU's CUDA $CUDA_GPU build"
fi

if [ "${1:-}" != --plan ] && [ "$route" = image ]; then
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

# step WHAT COMMAND...: runs it with its output in a log, a line every 15 s with the log's last
# line (pip is otherwise silent for minutes), its time at the end; the log's tail if it fails.
step() {
    local what=$1 log t0=$SECONDS n=0 rc=0 pid
    shift
    log=$(mktemp "${TMPDIR:-/tmp}/phase24-setup.XXXXXX")
    say "$what"
    "$@" >"$log" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        sleep 1
        n=$((n + 1))
        if [ $((n % 15)) = 0 ]; then
            say "    ... $n s: $(tail -n 1 "$log" | tr -d '\r' | cut -c1-100)"
        fi
    done
    wait "$pid" || rc=$?
    if [ "$rc" != 0 ]; then
        tail -n 25 "$log" >&2
        say "    FAILED (exit $rc): $what"
    else
        say "    done in $((SECONDS - t0)) s"
    fi
    rm -f "$log"
    return "$rc"
}

# Where the lab looks for nvcc (bridge/nvcc.py): an executable on the PATH, or the CUDA toolkit's.
system_nvcc() {
    python3 -c 'import shutil, sys; sys.exit(shutil.which("nvcc") is None)' ||
        [ -x /usr/local/cuda/bin/nvcc ]
}

pip=(.venv/bin/python -m pip)
# compile_bytecode FOLDER [-j N]: what pip's compile step would have written (modules that do not
# compile, which pip skips too, are left to the interpreter: rc 0).
compile_bytecode() { .venv/bin/python -m compileall -q "$@" || true; }
stamp=.venv/.phase24-installed
nvcc_stamp=.venv/.phase24-nvcc  # "installed" or why it is not; delete it to try again
install=0
installed_route=$(cat "$stamp" 2>/dev/null || true)  # the route the stamp's install took
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ "${1:-}" = --plan ] ||
        [ "${installed_route:-cpu}" != "$route" ]; then
    install=1
fi
want_nvcc=0
if ! system_nvcc && [ ! -x .venv/bin/nvcc ] && { [ ! -f "$nvcc_stamp" ] || [ "${1:-}" = --plan ]; }; then
    want_nvcc=1
fi

if [ "$install" = 1 ] || [ "$want_nvcc" = 1 ]; then
    if ! python3 -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; then
        say "python3 is $(python3 --version 2>&1 || echo missing): the lab needs Python 3.11 or newer"
        exit 1
    fi
    if [ ! -x .venv/bin/python ]; then
        python3 -m venv .venv >&2 || { say "python3 cannot make a virtual environment: install" \
            "its venv module (Debian, Ubuntu: sudo apt install python3-venv)"; exit 1; }
    fi
fi

if [ "$install" = 1 ] && [ "$route" = gpu ]; then
    # cuda-core: the lab loads its CUDA C kernels through it (bridge/launch.py)
    torch_cmd=("${pip[@]}" install "torch==$TORCH_GPU" "cuda-core==$CUDA_CORE" --no-compile)
    torch_from="PyPI (with triton $TRITON, cuda-core and NVIDIA's libraries)"
elif [ "$install" = 1 ]; then
    # The CPU build from this machine's disk when pip's find-links has it, else PyTorch's index.
    if "${pip[@]}" install --dry-run --ignore-installed --no-index --no-deps -q "torch==$TORCH+cpu" >/dev/null 2>&1; then
        torch_cmd=("${pip[@]}" install "torch==$TORCH+cpu" --no-compile)
        torch_from="a wheel on this machine's disk"
    else
        torch_cmd=("${pip[@]}" install "torch==$TORCH+cpu" --extra-index-url "$CPU_INDEX" --no-compile)
        torch_from="PyTorch's CPU wheel index ($CPU_INDEX)"
    fi
    # --no-compile: pip compiles every module it installs to bytecode one at a time, half of each
    # install's time; compile_bytecode does it on every core, torch's while pip installs the lab.
    lab_cmd=("${pip[@]}" install -e ".[dev,docs]" "triton==$TRITON" --no-compile)
fi
nvcc_cmd=("${pip[@]}" install --retries 1 --timeout 30 "${NVCC_WHEELS[@]}")

if [ "${1:-}" = --plan ]; then
    echo "route: $route"
    echo "why: $why"
    if [ "$route" = image ]; then
        exit 0
    fi
    echo "torch: ${torch_cmd[*]}"
    echo "lab: ${lab_cmd[*]}"
    echo "nvcc: ${nvcc_cmd[*]}"
    echo "nvcc needed here: $([ "$want_nvcc" = 1 ] && echo yes || echo no)"
    exit 0
fi

if [ "$install" = 1 ]; then
    say "installing into .venv (Python $(.venv/bin/python -c 'import platform; print(platform.python_version())')):"
    if [ "$route" = gpu ]; then
        say "  torch $TORCH_GPU, its CUDA $CUDA_GPU build, from $torch_from: about 3 GB to download,"
        say "  6 GB on disk ($why)"
    else
        say "  torch $TORCH, its CPU build, from $torch_from: about 190 MB to download, 750 MB on disk"
    fi
    say "  triton $TRITON, numpy, rich, matplotlib, pytest (+ xdist), mkdocs: about 260 MB, 1 GB on disk"
    if [ "$want_nvcc" = 1 ]; then
        say "  nvcc 13.0 from NVIDIA's Python wheels (no nvcc on this machine): about 105 MB, 270 MB on disk"
    fi
    say "a few minutes on a fast connection; a line at least every 15 s"
    step "[1/4] pip itself" "${pip[@]}" install --upgrade pip ||
        say "    (pip was not upgraded; going on with $("${pip[@]}" --version | cut -d' ' -f1-2))"
    step "[2/4] torch ($route build)" "${torch_cmd[@]}"
    site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    compile_bytecode "$site/torch" > /dev/null 2>&1 &  # on the core that pip leaves idle
    compiling=$!
    step "[3/4] the lab: triton $TRITON, numpy, rich, matplotlib, pytest (+ xdist), mkdocs" "${lab_cmd[@]}"
    wait "$compiling" || true
    step "[4/4] the installed modules' bytecode, on every core" compile_bytecode "$site" -j 0
    echo "$route" > "$stamp"
fi

if [ "$want_nvcc" = 1 ]; then
    if step "nvcc 13.0 from NVIDIA's wheels (no nvcc on this machine): about 105 MB to download, 270 MB on disk" \
            "${nvcc_cmd[@]}"; then
        cuda=$(.venv/bin/python -c 'import nvidia, pathlib; print(next(pathlib.Path(p, "cu13") for p in nvidia.__path__ if pathlib.Path(p, "cu13", "bin", "nvcc").exists()))')
        ln -sfn lib "$cuda/lib64"  # where nvcc.profile looks for libcudart_static when it links
        # A wrapper, not a link: nvcc finds its headers and tools from the folder it runs from.
        printf '#!/bin/sh\nexec "%s" "$@"\n' "$cuda/bin/nvcc" > .venv/bin/nvcc
        chmod +x .venv/bin/nvcc
        echo installed > "$nvcc_stamp"
        say "nvcc: $(.venv/bin/nvcc --version | tail -n 1) at .venv/bin/nvcc"
    else
        echo "pip could not install ${NVCC_WHEELS[*]}" > "$nvcc_stamp"
        say "nvcc is not installed: the kernels' builds and ptxas reports are skipped (bash run.sh"
        say "and bash test.sh say so); everything else runs. To try again: rm $nvcc_stamp"
    fi
fi
# The course site's MathJax and Mermaid, from their npm packages, so the site renders offline.
bash scripts/site_assets.sh >&2 || say "the site's assets are not installed (see above): mkdocs cannot build the site; the labs are unaffected"
echo "$root/.venv/bin/python"
