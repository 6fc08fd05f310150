"""What the tests of the bridge's builds share: the nvcc mark, and an nvcc that counts builds."""

import shutil
from pathlib import Path

import pytest

from phase24.bridge import cache

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (CUDA toolkit)")


class CountingNvcc:
    """A wrapper script around the real nvcc that logs when each build (an nvcc call with -o)
    starts and ends, and first waits $NVCC_TEST_DELAY seconds (default 0), so that concurrent
    builders overlap. A build can also be disturbed: $NVCC_TEST_SAVE=FROM:TO copies FROM over TO
    as the build starts, before nvcc reads anything (a file saved during a build), and
    $NVCC_TEST_SAVE_AFTER=FROM:TO once nvcc has read everything; $NVCC_TEST_FAIL=TEXT makes the
    build fail, saying TEXT on stderr."""

    def __init__(self, folder: Path):
        self.log = folder / "nvcc-builds.log"
        self.path = folder / "nvcc"
        real = Path(shutil.which("nvcc")).resolve()
        self.path.write_text(
            "#!/bin/sh\n"
            'case " $* " in *" -o "*)\n'
            f'  echo "start $(date +%s.%N)" >> "{self.log}"; sleep "${{NVCC_TEST_DELAY:-0}}"\n'
            '  [ -n "$NVCC_TEST_SAVE" ] && cp "${NVCC_TEST_SAVE%%:*}" "${NVCC_TEST_SAVE#*:}"\n'
            '  if [ -n "$NVCC_TEST_FAIL" ]; then echo "$NVCC_TEST_FAIL" >&2; rc=1; else\n'
            f'  "{real}" "$@"; rc=$?; fi\n'
            '  [ -n "$NVCC_TEST_SAVE_AFTER" ] && cp "${NVCC_TEST_SAVE_AFTER%%:*}" '
            '"${NVCC_TEST_SAVE_AFTER#*:}"\n'
            f'  echo "end $(date +%s.%N)" >> "{self.log}"; exit $rc;;\n'
            "esac\n"
            f'exec "{real}" "$@"\n')
        self.path.chmod(0o755)

    def _events(self) -> list[tuple[float, str]]:
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return sorted((float(t), what) for what, t in (line.split() for line in lines))

    @property
    def builds(self) -> int:
        return sum(what == "start" for _, what in self._events())

    @property
    def most_at_once(self) -> int:
        """The largest number of builds that were running at the same time."""
        running = most = 0
        for _, what in self._events():
            running += 1 if what == "start" else -1
            most = max(most, running)
        return most


@pytest.fixture
def cold_cache(tmp_path, monkeypatch):
    """An empty PHASE24_CACHE and a counting nvcc, forgotten afterwards."""
    monkeypatch.setenv("PHASE24_CACHE", str(tmp_path / "cache"))
    nvcc = CountingNvcc(tmp_path)
    monkeypatch.setenv("NVCC", str(nvcc.path))
    for var in ("NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS", "NVCC_CCBIN", "CPATH", "C_INCLUDE_PATH",
                "CPLUS_INCLUDE_PATH", "NVCC_TEST_SAVE", "NVCC_TEST_SAVE_AFTER", "NVCC_TEST_FAIL"):
        monkeypatch.delenv(var, raising=False)
    yield nvcc
    cache.clear_memory()


def tiny_kernel(folder: Path, name: str = "k", value: float = 1.0) -> Path:
    src = folder / f"{name}.cu"
    src.write_text(f'extern "C" __global__ void {name}(float* x) {{ x[threadIdx.x] = {value}f; }}\n')
    return src
