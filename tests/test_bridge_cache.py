"""The cache of built kernels, without a GPU: threads and processes on a cold cache, damaged
entries, a key that follows nvcc's environment, the bytes nvcc compiled and every header it read,
a cache that cannot be written or a full disk, parallel builds, and which build each GPU
generation runs."""

import errno
import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from nvcc_helpers import cold_cache, needs_nvcc, tiny_kernel  # noqa: F401 (a fixture)

from phase24.bridge import cache
from phase24.bridge.nvcc import (ARCHS, PORTABLE, NvccError, UnsupportedGpuError, compile_cu,
                                 target_for)
from phase24.bridge.prebuild import prebuild

ROOT = Path(__file__).resolve().parents[1]


def assert_whole(build):
    """The image is a cubin and matches its record's size and hash."""
    image = build.image.read_bytes()
    record = json.loads(build.image.with_suffix(".json").read_text())
    assert image[:4] == b"\x7fELF", f"{build.image.name} is not a cubin"
    assert len(image) == record["size"] and cache.sha256_of(build.image) == record["sha256"]


def in_threads(n, fn):
    """Run fn in n threads released together; return (results, errors)."""
    barrier, results, errors = threading.Barrier(n), [], []

    def work():
        barrier.wait()
        try:
            results.append(fn())
        except Exception as err:
            errors.append(err)

    threads = [threading.Thread(target=work) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors


@needs_nvcc
def test_eight_threads_on_a_cold_cache_build_once(cold_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("NVCC_TEST_DELAY", "0.5")  # so that every thread arrives mid-build
    src = tiny_kernel(tmp_path)
    results, errors = in_threads(8, lambda: compile_cu(src, "sm_80"))
    assert not errors, errors
    assert len({b.image for b in results}) == 1
    for b in results:
        assert_whole(b)
        assert b.kernels["k"].registers > 0
    assert cold_cache.builds == 1  # the entry's lock: the others waited and took its build


@needs_nvcc
def test_eight_threads_without_file_locks(cold_cache, tmp_path, monkeypatch):
    """A file system without flock: every builder writes its own temporary file, so all of
    them still get a whole entry."""
    def no_locks(*args):
        raise OSError(37, "No locks available")

    monkeypatch.setattr(cache.fcntl, "flock", no_locks)
    monkeypatch.setenv("NVCC_TEST_DELAY", "0.5")
    src = tiny_kernel(tmp_path)
    results, errors = in_threads(8, lambda: compile_cu(src, "sm_80"))
    assert not errors, errors
    for b in results:
        assert_whole(b)
    assert cold_cache.builds > 1  # they did build side by side
    assert not list(b.image.parent.glob("*.tmp")), "temporary files left behind"


@needs_nvcc
def test_two_processes_on_a_cold_cache_build_once(cold_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("NVCC_TEST_DELAY", "1")  # longer than a process's start
    src = tiny_kernel(tmp_path)
    code = ("import sys; from phase24.bridge.nvcc import compile_cu; "
            "print(compile_cu(sys.argv[1], 'sm_80').image)")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(src)], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    images = {out.strip() for out, _ in outs}
    assert len(images) == 1
    assert_whole(compile_cu(src, "sm_80"))
    assert cold_cache.builds == 1  # the lock holds across processes


DAMAGE = {
    "empty": lambda image, record: image.write_bytes(b""),
    "truncated": lambda image, record: image.write_bytes(image.read_bytes()[:100]),
    "not a cubin": lambda image, record: image.write_bytes(b"\0" * image.stat().st_size),
    "overwritten": lambda image, record: image.write_bytes(
        image.read_bytes()[:-8] + b"\xff" * 8),
    "record lost": lambda image, record: record.unlink(),
    "record unreadable": lambda image, record: record.write_text("{"),
    "record not an object": lambda image, record: record.write_text("[]"),
    "record without its log": lambda image, record: record.write_text(json.dumps(
        {k: v for k, v in json.loads(record.read_text()).items() if k != "log"})),
    "record without the files read": lambda image, record: record.write_text(json.dumps(
        {k: v for k, v in json.loads(record.read_text()).items() if k != "deps"})),
}


@needs_nvcc
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_entry_is_rebuilt(cold_cache, tmp_path, damage, capsys):
    src = tiny_kernel(tmp_path)
    first = compile_cu(src, "sm_80")
    assert compile_cu(src, "sm_80") == first  # a hit, which this process remembers
    DAMAGE[damage](first.image, first.image.with_suffix(".json"))
    if damage.startswith("record"):
        cache.clear_memory()  # as the next process finds it
    again = compile_cu(src, "sm_80")
    assert again.image == first.image and cold_cache.builds == 2
    assert_whole(again)
    assert again.kernels == first.kernels
    assert "rebuilding" in capsys.readouterr().err
    compile_cu(src, "sm_80")
    assert cold_cache.builds == 2  # whole again: no more builds


@needs_nvcc
@pytest.mark.parametrize("var,value", [("NVCC_APPEND_FLAGS", "-G"), ("NVCC_PREPEND_FLAGS", "-G"),
                                       ("NVCC_CCBIN", "gcc"), ("CPATH", "/nonexistent"),
                                       ("C_INCLUDE_PATH", "/nonexistent"),
                                       ("CPLUS_INCLUDE_PATH", "/nonexistent")])
def test_the_key_follows_nvccs_environment(cold_cache, tmp_path, monkeypatch, var, value):
    src = tiny_kernel(tmp_path)
    plain = compile_cu(src, "sm_80")
    monkeypatch.setenv(var, value)
    other = compile_cu(src, "sm_80")
    assert other.image != plain.image and cold_cache.builds == 2
    if value == "-G":  # a debug build is another kernel: never serve it to a normal run
        assert other.kernels["k"].registers != plain.kernels["k"].registers
    monkeypatch.delenv(var)
    assert compile_cu(src, "sm_80").image == plain.image and cold_cache.builds == 2


@needs_nvcc
def test_the_key_follows_every_flag(cold_cache, tmp_path):
    src = tiny_kernel(tmp_path)
    images = {compile_cu(src, "sm_80").image, compile_cu(src, "sm_80", ("-DX=1",)).image,
              compile_cu(src, "sm_89").image, compile_cu(src, PORTABLE).image}
    assert len(images) == 4 and cold_cache.builds == 4


def _write_aged(path: Path, text: str) -> None:
    """Write a file dated a minute back: written just before a build, it could share the file
    system's clock tick with the build's start, which makes the entry unusable (by design)."""
    path.write_text(text)
    old = path.stat().st_mtime - 60
    os.utime(path, (old, old))


@needs_nvcc
def test_nvcc_compiles_the_bytes_the_key_hashed(cold_cache, tmp_path, monkeypatch):
    """A file saved while nvcc builds it: the entry of the text read first holds that text's
    build (the key was made from text read before nvcc ran, and nvcc read the file again: the
    old text's entry held the new text's kernels)."""
    src = tiny_kernel(tmp_path, "k")
    text = src.read_bytes()
    saved = tmp_path / "saved.cu"
    saved.write_text('extern "C" __global__ void other(float* x) { x[0] = 2.0f; }\n')
    monkeypatch.setenv("NVCC_TEST_SAVE", f"{saved}:{src}")
    first = compile_cu(src, "sm_80")
    monkeypatch.delenv("NVCC_TEST_SAVE")
    assert set(first.kernels) == {"k"}
    second = compile_cu(src, "sm_80")  # the file now holds the saved text: its own entry
    assert set(second.kernels) == {"other"} and second.image != first.image
    assert cold_cache.builds == 2
    src.write_bytes(text)  # the first text again
    assert compile_cu(src, "sm_80") == first and cold_cache.builds == 2


def _including(tmp_path: Path, way: str, monkeypatch) -> tuple[Path, Path, tuple]:
    """A kernel whose value comes from a header reached in ``way``: (source, header, flags)."""
    inc = tmp_path / "inc"
    inc.mkdir()
    line, flags, folder = '#include <value.cuh>', (), inc
    if way == "quoted, beside the source":
        line, folder = '#include "value.cuh"', tmp_path
    elif way == "<...> through an -I flag":
        flags = (f"-I{inc}",)
    elif way == "<...> through CPATH":
        monkeypatch.setenv("CPATH", str(inc))
    elif way == "<...> through -I in NVCC_APPEND_FLAGS":
        monkeypatch.setenv("NVCC_APPEND_FLAGS", f"-I{inc}")
    elif way == "included by a header":
        line = '#include "outer.cuh"'
        _write_aged(tmp_path / "outer.cuh", '#include "inc/value.cuh"\n')
    header = folder / "value.cuh"
    src = tmp_path / "k.cu"
    src.write_text(f'{line}\nextern "C" __global__ void k(float* x) {{ x[threadIdx.x] = VALUE; }}\n')
    return src, header, flags


WAYS = ["quoted, beside the source", "<...> through an -I flag", "<...> through CPATH",
        "<...> through -I in NVCC_APPEND_FLAGS", "included by a header"]


@needs_nvcc
@pytest.mark.parametrize("way", WAYS)
def test_a_header_edited_since_the_build_is_rebuilt(cold_cache, tmp_path, monkeypatch, way):
    src, header, flags = _including(tmp_path, way, monkeypatch)
    _write_aged(header, "#define VALUE 1.0f\n")
    first = compile_cu(src, "sm_80", flags)
    one = first.image.read_bytes()
    _write_aged(header, "#define VALUE 2.0f\n")
    second = compile_cu(src, "sm_80", flags)
    assert cold_cache.builds == 2 and second.image.read_bytes() != one
    assert compile_cu(src, "sm_80", flags) == second and cold_cache.builds == 2  # a hit again
    _write_aged(header, "#define VALUE 1.0f\n")
    assert compile_cu(src, "sm_80", flags).image.read_bytes() == one


@needs_nvcc
def test_a_header_saved_during_the_build_is_not_trusted(cold_cache, tmp_path, monkeypatch):
    """nvcc read the header's old text, then the header was saved: the entry must not be
    reused for the new text."""
    src, header, flags = _including(tmp_path, "quoted, beside the source", monkeypatch)
    _write_aged(header, "#define VALUE 1.0f\n")
    (tmp_path / "new.cuh").write_text("#define VALUE 2.0f\n")
    monkeypatch.setenv("NVCC_TEST_SAVE_AFTER", f"{tmp_path / 'new.cuh'}:{header}")
    one = compile_cu(src, "sm_80").image.read_bytes()
    monkeypatch.delenv("NVCC_TEST_SAVE_AFTER")
    assert compile_cu(src, "sm_80").image.read_bytes() != one and cold_cache.builds == 2


@needs_nvcc
def test_a_full_disk_is_one_line(cold_cache, tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    src = tiny_kernel(tmp_path)
    monkeypatch.setattr(cache.Entry, "commit", full)
    with pytest.raises(NvccError) as err:
        compile_cu(src, "sm_80")
    said = str(err.value)
    assert said.startswith("no space left on the disk") and "PHASE24_CACHE" in said
    assert "\n" not in said
    monkeypatch.undo()
    monkeypatch.setenv("PHASE24_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NVCC", str(cold_cache.path))
    folder = tmp_path / "cache" / "cubins"
    assert not [p for p in folder.iterdir() if p.name.startswith(".")], "work left behind"
    monkeypatch.setenv("NVCC_TEST_FAIL", "nvcc fatal: Could not write: No space left on device")
    with pytest.raises(NvccError, match="^no space left on the disk"):
        compile_cu(src, "sm_89")


@needs_nvcc
@pytest.mark.parametrize("why", ["its parent is a file", "it is read-only"])
def test_an_unwritable_cache_falls_back(cold_cache, tmp_path, monkeypatch, capsys, why):
    if why == "it is read-only":
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only folders; 'its parent is a file' covers root")
        wanted = tmp_path / "locked"
        wanted.mkdir(mode=0o500)
    else:
        (tmp_path / "file").write_text("")
        wanted = tmp_path / "file" / "cache"
    monkeypatch.setenv("PHASE24_CACHE", str(wanted))
    monkeypatch.setattr(cache.tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    src = tiny_kernel(tmp_path)
    build = compile_cu(src, "sm_80")
    assert build.image.parent == tmp_path / "tmp" / f"phase24-{os.getuid()}" / "cubins"
    assert_whole(build)
    compile_cu(src, "sm_89")
    notices = [line for line in capsys.readouterr().err.splitlines() if str(wanted) in line]
    assert len(notices) == 1, notices  # one line, once


def test_the_fallback_refuses_a_folder_others_can_write(tmp_path, monkeypatch):
    monkeypatch.setattr(cache.tempfile, "tempdir", str(tmp_path))
    shared = tmp_path / f"phase24-{os.getuid()}"
    shared.mkdir()
    shared.chmod(0o777)
    private = cache._private_temp_dir()
    assert private != shared and private.parent == tmp_path
    assert not private.stat().st_mode & 0o077


@needs_nvcc
def test_prebuild_runs_nvcc_in_parallel_with_progress(tmp_path, monkeypatch):
    from nvcc_helpers import CountingNvcc

    monkeypatch.setenv("PHASE24_CACHE", str(tmp_path / "cache"))
    nvcc = CountingNvcc(tmp_path)
    monkeypatch.setenv("NVCC", str(nvcc.path))
    monkeypatch.setenv("NVCC_TEST_DELAY", "1")
    sources = [tiny_kernel(tmp_path, f"k{i}") for i in range(4)]
    broken = tmp_path / "broken.cu"
    broken.write_text("not CUDA\n")
    out = io.StringIO()
    results = prebuild([(s, "sm_80") for s in sources] + [(broken, "sm_80")], workers=3, out=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("phase24: building 5 kernel file(s) (0 cached), 3 at a time")
    assert sorted(line.split()[1] for line in lines[1:]) == [f"{i}/5" for i in range(1, 6)]
    assert any("broken.cu (sm_80)" in line and "FAILED (NvccError)" in line for line in lines)
    assert isinstance(results[(broken.resolve(), "sm_80")], NvccError)
    for s in sources:
        assert_whole(results[(s.resolve(), "sm_80")])
    assert nvcc.most_at_once == 3  # as many nvcc at once as workers, and no more
    out = io.StringIO()
    prebuild([(s, "sm_80") for s in sources], out=out)
    assert out.getvalue() == "" and nvcc.builds == 5  # all cached: nothing to say or build
    cache.clear_memory()


@pytest.mark.parametrize("capability,target", [
    ((8, 0), "sm_80"), ((8, 6), "sm_86"), ((8, 9), "sm_89"), ((9, 0), "sm_90a"),
    ((8, 7), PORTABLE), ((10, 0), PORTABLE), ((12, 0), PORTABLE)])
def test_each_gpu_runs_its_cubin_or_the_portable_ptx(capability, target, monkeypatch):
    monkeypatch.delenv("PHASE24_PORTABLE", raising=False)
    assert target_for(capability) == target
    monkeypatch.setenv("PHASE24_PORTABLE", "1")
    assert target_for(capability) == PORTABLE


@pytest.mark.parametrize("capability", [(7, 5), (7, 0), (6, 1)])
def test_a_gpu_older_than_ampere_is_named_with_what_runs_there(capability):
    with pytest.raises(UnsupportedGpuError) as err:
        target_for(capability, "Tesla T4 (cuda:1)")
    text = str(err.value)
    assert "Tesla T4 (cuda:1)" in text and f"{capability[0]}.{capability[1]}" in text
    assert "`torch`" in text and "Triton" in text


def test_an_unknown_target_is_refused(tmp_path):
    with pytest.raises(NvccError, match="sm_75"):
        compile_cu(tiny_kernel(tmp_path), "sm_75")
    assert "sm_90a" in ARCHS
