"""A .cu file made a shared library that runs its kernels on the CPU.

1. The host compiler's preprocessor reads the file with the emulator's headers first on the
   include path (its cuda_fp16.h, cuda_bf16.h, ... stand in for CUDA's), ``emu.h`` included
   before the file, and ``__CUDACC__`` and ``__CUDA_ARCH__`` (800: the SIMT code paths) defined.
2. source.py rewrites what the compiler cannot take (``__global__``, ``__shared__``, known
   inline PTX) and refuses, in one line, what the emulator does not run.
3. The result is compiled at -O0 with the thread-sanitizer instrumentation calling out before
   every load and store (runtime/hooks.cpp receives the calls; -O0 keeps one call per access
   as written: a float4 load stays one 16-byte access), with debug lines that name the .cu
   file, and linked with the runtime into one library (no sanitizer library: the runtime is
   the sanitizer).

Builds are kept in the kernel cache's ``emulated`` folder, keyed by the preprocessed text, the
flags, the compiler and the runtime's sources: a second check of an unchanged file loads it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from phase24.emulator import source
from phase24.emulator.kernel import Library

HERE = Path(__file__).resolve().parent
INCLUDE = HERE / "include"
RUNTIME = sorted((HERE / "runtime").glob("*.cpp"))
INSTALL = ("a C++ compiler: install g++ (Debian/Ubuntu: sudo apt install g++; Fedora: sudo dnf "
           "install gcc-c++; macOS is not supported: use Linux or WSL)")
SANITIZE = ("-fsanitize=thread",)  # a call before every load and store (runtime/hooks.cpp)
# -fno-gnu-unique: a static of an inline function (a __shared__ array in a header's template) is
# otherwise one object across every library loaded, and a second library would find it
# registered with the first one's runtime.
COMMON = ("-std=c++17", "-fPIC", "-g", "-w", "-fno-strict-aliasing", "-fno-omit-frame-pointer",
          "-fno-gnu-unique", "-fno-semantic-interposition")
SECONDS = 120  # one compiler step; past it the file is not a kernel the emulator can run


class CompileError(ValueError):
    """The file cannot be made an emulated library (the message says why, with the compiler's
    own lines when it is the compiler that refused)."""


def compiler() -> str | None:
    """The host compiler the emulator uses: g++ (clang's instrumentation differs in detail)."""
    return os.environ.get("CXX_EMULATOR") or shutil.which("g++")


def _run(argv: list[str], what: str) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=SECONDS)
    except subprocess.TimeoutExpired:
        raise CompileError(f"{what}: the compiler took longer than {SECONDS} s") from None
    except FileNotFoundError:
        raise CompileError(f"no host C++ compiler: the emulator needs {INSTALL}") from None
    if proc.returncode != 0:
        raise CompileError(f"{what}:\n{_tidy(proc.stderr or proc.stdout)}")
    return proc.stdout


def _tidy(said: str) -> str:
    """The compiler's errors, without its lines about the emulator's own files (at most 25)."""
    lines = [line for line in said.splitlines() if str(HERE) not in line or "error" in line]
    lines = [line.replace(str(INCLUDE) + "/", "") for line in lines]
    return "\n".join(lines[:25]) + ("\n..." if len(lines) > 25 else "")


def _folder() -> Path:
    from phase24.bridge.cache import cache_dir

    folder = cache_dir().parent / "emulated"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@functools.lru_cache(maxsize=1)
def _runtime(cxx: str) -> tuple[Path, ...]:
    """The runtime's objects, built once per compiler and per version of its sources."""
    key = hashlib.sha256(cxx.encode())
    for path in RUNTIME + sorted((HERE / "runtime").glob("*.h")):
        key.update(path.name.encode() + path.read_bytes())
    objects = []
    for path in RUNTIME:
        obj = _folder() / f"runtime-{path.stem}-{key.hexdigest()[:16]}.o"
        if not obj.exists():
            tmp = obj.with_suffix(f".{os.getpid()}.tmp")
            _run([cxx, *COMMON, "-O2", "-c", str(path), "-o", str(tmp)],
                 f"the emulator's runtime ({path.name}) does not compile")
            os.replace(tmp, obj)
        objects.append(obj)
    return tuple(objects)


def build(path: str | Path, flags: tuple[str, ...] = ()) -> Library:
    """The emulated library of ``path``; ``flags`` are nvcc-style ``-I`` folders (the lab's
    headers). CompileError (and source.Refused, one of its kind) when it cannot be made."""
    path = Path(path).resolve()
    cxx = compiler()
    if cxx is None:
        raise CompileError(f"no host C++ compiler: the emulator needs {INSTALL}")
    includes = [f for f in flags if f.startswith("-I")]

    def preprocessed(arch: int) -> str:
        hopper = ("-D__CUDA_ARCH_FEAT_SM90_ALL",) if arch == 900 else ()
        return _run([cxx, "-E", "-x", "c++", "-std=c++17", "-D__CUDACC__",
                     f"-D__CUDA_ARCH__={arch}", *hopper, f"-I{INCLUDE}", f"-I{path.parent}", *includes,
                     "-include", "emu.h", str(path)], f"{path.name} does not compile")

    try:
        try:
            text = preprocessed(800)
        except CompileError as err:  # a file that stops with #error below sm_90: what it uses
            if "#error" in str(err):
                source.kernelise(preprocessed(900), str(INCLUDE))
            raise
        rewritten = source.kernelise(text, str(INCLUDE))
    except source.Refused as err:
        raise CompileError(f"{path.name}: {err}") from None
    objects = _runtime(cxx)
    key = hashlib.sha256(rewritten.text.encode())
    key.update(" ".join([cxx, *SANITIZE, *(o.name for o in objects)]).encode())
    stem = f"{path.stem}-{key.hexdigest()[:20]}"
    library = _folder() / f"{stem}.so"
    if not library.exists():
        unit = _folder() / f"{stem}.ii"
        unit.write_text(rewritten.text + source.glue(rewritten.kernels))
        tmp = library.with_suffix(f".{os.getpid()}.tmp")
        _run([cxx, *COMMON, "-O0", *SANITIZE, "-x", "c++-cpp-output", "-c", str(unit), "-o",
              f"{tmp}.o"], f"{path.name} does not compile")
        _run([cxx, "-shared", "-Wl,-Bsymbolic", "-o", str(tmp), f"{tmp}.o", *map(str, objects),
              "-ldl"], f"{path.name} does not link")
        os.unlink(f"{tmp}.o")
        os.replace(tmp, library)
    return Library(library, path.name, rewritten)
