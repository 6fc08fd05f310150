"""Compile CUDA C with nvcc into cached builds, and read ptxas's resource report.

A build is a cubin for one architecture of ``ARCHS``, or PTX for ``PORTABLE``, which the driver
compiles when it loads it, for a GPU that no cubin is built for (a newer one, e.g. Blackwell).
Its cache key hashes nvcc's path and version, the target, every flag, the environment variables
that change what nvcc builds, and the source's path and bytes, read once: nvcc compiles a private
copy of exactly those bytes. Every other file nvcc read (each header, wherever it was found, as
nvcc's own dependency output lists them) is recorded with its SHA-256 beside the build, and a
build whose files differ now is rebuilt. How entries are stored, checked and locked is
``cache.py``'s business.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

from phase24.bridge.cache import Entry, cache_dir, sha256_of

# The chapter's cubins: Ampere (sm_80 A100, sm_86 RTX 30xx), Ada (sm_89), Hopper (sm_90a).
ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90a")
# PTX for Ampere's instruction set: any GPU from Ampere on can compile it at load time.
PORTABLE = "compute_80"
TARGETS = (*ARCHS, PORTABLE)
BASE_FLAGS = ("-O3", "-lineinfo", "-std=c++17", "-Xptxas=-v", "--expt-relaxed-constexpr")
# Environment variables that change what nvcc builds: flags it adds before and after the
# command line's, its host compiler, and the include paths of the host preprocessor it runs.
NVCC_ENV = ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN", "CPATH",
            "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH")


NVCC_SECONDS = 300  # the longest one nvcc run may take (the ladder's largest file: about 40 s)


class NvccError(RuntimeError):
    """nvcc is missing or failed; the message carries its output."""


class UnsupportedGpuError(RuntimeError):
    """The GPU is older than any target the lab builds; the message says what runs there."""


@dataclasses.dataclass(frozen=True)
class KernelResources:
    """What ptxas reported for one kernel."""

    name: str
    registers: int
    shared_bytes: int
    stack_bytes: int
    spill_store_bytes: int
    spill_load_bytes: int

    @property
    def spills(self) -> int:
        return self.spill_store_bytes + self.spill_load_bytes


@dataclasses.dataclass(frozen=True)
class Build:
    source: Path
    arch: str     # a target of TARGETS
    image: Path   # the cubin, or the PTX for PORTABLE
    kernels: dict[str, KernelResources]  # empty for PTX (ptxas runs when the driver loads it)
    log: str


def gencode(target: str) -> str:
    """nvcc's target flag: machine code for exactly this architecture, or PORTABLE's PTX."""
    if target == PORTABLE:
        return f"-gencode=arch={target},code={target}"
    num = target.removeprefix("sm_")
    return f"-gencode=arch=compute_{num},code=sm_{num}"


def target_for(capability: tuple[int, int], name: str = "this GPU") -> str:
    """The build a GPU of this compute capability runs: its own cubin where one is built, else
    the portable PTX (also with PHASE24_PORTABLE=1, to run as a GPU newer than ARCHS would)."""
    major, minor = capability
    if major < 8:
        raise UnsupportedGpuError(
            f"{name} has compute capability {major}.{minor}: the lab's CUDA C kernels need "
            "Ampere (8.0) or newer. On this GPU run the operations' torch implementation "
            "(`torch`) or the Triton ones (`triton`, `triton-*`), where Triton supports the GPU")
    exact = f"sm_{major}{minor}" + ("a" if major == 9 else "")
    if exact in ARCHS and os.environ.get("PHASE24_PORTABLE") != "1":
        return exact
    return PORTABLE


def nvcc_path() -> str:
    for candidate in (os.environ.get("NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).exists():
            return os.path.realpath(candidate)
    raise NvccError("nvcc was not found: install the CUDA toolkit or set NVCC=/path/to/nvcc")


@lru_cache(maxsize=None)
def _nvcc_identity(path: str) -> str:
    """`nvcc --version` of the nvcc at `path` (its release and build)."""
    proc = subprocess.run([path, "--version"], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=NVCC_SECONDS)
    if proc.returncode != 0:
        raise NvccError(f"{path} --version failed:\n{proc.stderr}{proc.stdout}")
    return proc.stdout


def nvcc_version() -> str:
    out = _nvcc_identity(nvcc_path())
    m = re.search(r"release ([\d.]+), V([\d.]+)", out)
    return m.group(2) if m else out.strip().splitlines()[-1]


_ENTRY = re.compile(r"Compiling entry function '(\w+)' for '(\w+)'")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:.*?, (\d+) bytes smem)?")


def parse_ptxas_report(log: str) -> dict[str, KernelResources]:
    """Turn ``ptxas -v`` output into one KernelResources per kernel."""
    kernels: dict[str, KernelResources] = {}
    current: str | None = None
    stack = (0, 0, 0)
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current, stack = m.group(1), (0, 0, 0)
        elif current and (m := _STACK.search(line)):
            stack = tuple(int(g) for g in m.groups())  # type: ignore[assignment]
        elif current and (m := _USED.search(line)):
            kernels[current] = KernelResources(
                name=current, registers=int(m.group(1)), shared_bytes=int(m.group(2) or 0),
                stack_bytes=stack[0], spill_store_bytes=stack[1], spill_load_bytes=stack[2])
            current = None
    return kernels


@contextlib.contextmanager
def _disk_full(folder: Path):
    """Turn a full disk (or quota) met while building into one NvccError line."""
    try:
        yield
    except OSError as err:
        if err.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise NvccError(_no_space(folder)) from None


def _no_space(folder: Path) -> str:
    return (f"no space left on the disk: the kernel cache ({folder}) or nvcc's temporary files "
            f"({tempfile.gettempdir()}) are full; free some space, or set PHASE24_CACHE (or "
            "TMPDIR) to a folder on another disk")


def _line_directive(source: Path) -> bytes:
    """``#line 1 "source"``: nvcc's messages, __FILE__ and -lineinfo name the learner's file,
    not the private copy that nvcc compiles."""
    name = str(source).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "?")
    return f'#line 1 "{name}"\n'.encode()


def _dependencies(depfile: Path, sources: tuple[Path, Path], began: int) -> dict[str, str | None]:
    """Every file nvcc read besides the source (-MD's list, in make's syntax, names both the copy
    it compiled and, through the #line directive, the original: ``sources``), each with its
    SHA-256; None for one that is not a regular file or was modified after the build ``began``
    (the file system's clock): nvcc may have read either text, so the entry is not reused."""
    text = depfile.read_text(errors="replace").replace("\\\n", " ")
    body = re.split(r"\s:\s|:\s", text, maxsplit=1)[-1]
    deps: dict[str, str | None] = {}
    for word in re.findall(r"(?:\\.|[^\s\\])+", body):
        path = os.path.realpath(re.sub(r"\\(.)", r"\1", word).replace("$$", "$"))
        if path in deps or any(path == str(p.resolve()) for p in sources):
            continue
        try:
            st = os.stat(path)
            fresh = stat.S_ISREG(st.st_mode) and st.st_mtime_ns < began
            deps[path] = sha256_of(Path(path)) if fresh else None
        except OSError:
            deps[path] = None
    return deps


def _changed(deps: dict) -> str | None:
    """Which file a build read is no longer what it read then (None when all are)."""
    for path, digest in deps.items():
        try:
            regular = stat.S_ISREG(os.stat(path).st_mode)  # a FIFO is never read: it may block
        except OSError:
            return f"{path} is gone"
        if digest is None or not regular or sha256_of(Path(path)) != digest:
            return f"{path} changed"
    return None


@dataclasses.dataclass(frozen=True)
class _Job:
    """One source built for one target with one set of flags, and its cache entry. ``text`` is
    the source's bytes as read once: hashed into the key, and what nvcc compiles (a private copy
    of them), so that a file saved during a build cannot leave one text's entry holding another's
    build. The headers nvcc read are recorded with the build and checked when it is reused."""

    source: Path
    text: bytes
    arch: str
    command: tuple[str, ...]  # nvcc and its flags, without the output and the source
    entry: Entry

    @classmethod
    def of(cls, source: str | Path, arch: str, extra_flags: tuple[str, ...]) -> _Job:
        source = Path(source).resolve()
        if arch not in TARGETS:
            raise NvccError(f"unknown target {arch!r}; expected one of {TARGETS}")
        try:
            text = source.read_bytes()
        except OSError as err:
            raise NvccError(f"cannot read {source}: {err.strerror or err}") from None
        mode = "-ptx" if arch == PORTABLE else "-cubin"
        # -I of the source's own folder: its quoted includes resolve as if nvcc read it there
        command = (nvcc_path(), mode, *BASE_FLAGS, gencode(arch), f"-I{source.parent}",
                   *extra_flags)
        h = hashlib.sha256()
        for part in (_nvcc_identity(command[0]), *command,
                     *(f"{v}={os.environ.get(v, '')}" for v in NVCC_ENV), str(source)):
            h.update(part.encode())
            h.update(b"\0")
        h.update(text)
        key = f"{source.stem}-{arch}-{h.hexdigest()[:16]}"
        return cls(source, text, arch, command, Entry(cache_dir(), key, f".{mode[1:]}"))

    def cached(self, quiet: bool = False) -> Build | None:
        record, why = self.entry.load()
        if record is not None and not (isinstance(record.get("log"), str)
                                       and isinstance(record.get("deps"), dict)):
            record, why = None, "its record lacks the build's log or the files it read"
        if record is None:
            if why and not quiet:
                print(f"phase24: rebuilding {self.entry.image.name}: {why}", file=sys.stderr)
            return None
        if _changed(record["deps"]):  # a header was edited: an ordinary rebuild, said nowhere
            return None
        return self._build_of(record)

    def _build_of(self, record: dict) -> Build:
        log = record["log"]
        return Build(self.source, self.arch, self.entry.image, parse_ptxas_report(log), log)

    def build(self) -> Build:
        work = Path(tempfile.mkdtemp(dir=self.entry.folder, prefix=f".{self.entry.key}."))
        try:
            copy, out, depfile = (work / self.source.name, work / f"out{self.entry.suffix}",
                                  work / "deps.d")
            copy.write_bytes(_line_directive(self.source) + self.text)
            out.touch()
            began = out.stat().st_mtime_ns  # the file system's clock, as the headers' mtimes
            try:  # no stdin (an #include of /dev/stdin would wait on it) and a time limit
                proc = subprocess.run([*self.command, "-MD", "-MF", str(depfile), "-o", str(out),
                                       str(copy)], capture_output=True, text=True,
                                      stdin=subprocess.DEVNULL, timeout=NVCC_SECONDS,
                                      errors="replace")
            except subprocess.TimeoutExpired:
                raise NvccError(f"nvcc took longer than {NVCC_SECONDS} s on {self.source.name} "
                                f"for {self.arch}, and was stopped") from None
            said = (proc.stderr + proc.stdout).replace(str(copy), str(self.source))
            if proc.returncode != 0:
                if "No space left on device" in said:
                    raise NvccError(_no_space(self.entry.folder))
                raise NvccError(f"nvcc failed on {self.source.name} for {self.arch}:\n{said}")
            about = {"source": str(self.source), "command": self.command,
                     "env": {v: os.environ[v] for v in NVCC_ENV if os.environ.get(v)},
                     "log": said, "deps": _dependencies(depfile, (copy, self.source), began)}
            try:
                record = self.entry.commit(out, about)
            except ValueError as err:
                raise NvccError(f"nvcc wrote a damaged build of {self.source.name} for "
                                f"{self.arch}: {err}") from None
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return self._build_of(record)


def cached_build(source: str | Path, arch: str, extra_flags: tuple[str, ...] = ()) -> Build | None:
    """The cached build of ``source`` for ``arch`` if there is a whole one, else None."""
    return _Job.of(source, arch, extra_flags).cached(quiet=True)


def compile_cu(source: str | Path, arch: str, extra_flags: tuple[str, ...] = ()) -> Build:
    """Build ``source`` for ``arch`` (a target of TARGETS, e.g. 'sm_90a'), or take the cached
    build. A damaged entry is rebuilt once; concurrent callers build it once between them."""
    job = _Job.of(source, arch, extra_flags)
    build = job.cached()
    if build is None:
        with _disk_full(job.entry.folder), job.entry.locked():
            build = job.cached(quiet=True) or job.build()
    return build
