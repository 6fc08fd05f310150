"""Where built kernels are kept, and how an entry is written, checked and shared.

An entry is an image (a cubin or a PTX file) and a JSON record beside it: the image's size and
SHA-256, and nvcc's log (ptxas's resource report). A builder writes into a temporary file of
its own in the cache folder and moves it in place with ``os.replace``, image first, record
last, so a reader sees a whole file or none. An entry whose image does not match its record
(empty, truncated, overwritten, not a cubin) is not used: its caller rebuilds it. A lock file
per entry (``fcntl.flock``, which also separates threads) keeps two builders of one entry
apart, across processes.

The cache lives in ``$PHASE24_CACHE/cubins`` (default ``~/.cache/phase24/cubins``); where that
cannot be written, in a private folder of the system's temporary directory, said once on stderr.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import sys
import tempfile
import threading
from pathlib import Path

# What an image must start with (a PTX file: nvcc's comment header, then `.version`).
MAGIC = {".cubin": b"\x7fELF", ".ptx": b"//"}

_roots: dict[Path, Path] = {}  # the folder asked for -> the folder used (after any fallback)
_roots_lock = threading.Lock()
_checked: dict[Path, tuple] = {}  # image -> (its stat when it last matched its record, record)


def cache_dir() -> Path:
    """The folder of cached builds, created if needed: the configured one if it can be written,
    else a private fallback (with a one-line notice the first time)."""
    root = Path(os.environ.get("PHASE24_CACHE") or Path.home() / ".cache" / "phase24")
    wanted = root / "cubins"
    used = _roots.get(wanted)
    if used is None:
        with _roots_lock:
            used = _roots.get(wanted) or _choose(wanted)
            _roots[wanted] = used
    return used


def _choose(wanted: Path) -> Path:
    problem = _unwritable(wanted)
    if problem is None:
        return wanted
    fallback = _private_temp_dir() / "cubins"
    second = _unwritable(fallback)
    if second is not None:
        raise OSError(f"no writable cache for built kernels: {wanted} ({problem}), "
                      f"{fallback} ({second}); set PHASE24_CACHE to a writable folder")
    print(f"phase24: cannot write the kernel cache {wanted} ({problem}); using {fallback} "
          "(set PHASE24_CACHE to choose another)", file=sys.stderr)
    return fallback


def _unwritable(folder: Path) -> str | None:
    """Why files cannot be created in `folder` (made if missing), or None if they can."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        return f"{type(err).__name__}: {err.strerror or err}"
    return None


def _private_temp_dir() -> Path:
    """phase24-<uid> in the temporary directory, only if this user owns it and no one else may
    write to it; else a fresh one."""
    path = Path(tempfile.gettempdir()) / f"phase24-{os.getuid()}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        st = path.lstat()
        if path.is_dir() and not path.is_symlink() and st.st_uid == os.getuid() \
                and not st.st_mode & 0o022:
            return path
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix="phase24-"))


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclasses.dataclass(frozen=True)
class Entry:
    """One cached build: ``<key><suffix>`` (the image) and ``<key>.json`` (its record)."""

    folder: Path
    key: str
    suffix: str  # ".cubin" or ".ptx"

    @property
    def image(self) -> Path:
        return self.folder / f"{self.key}{self.suffix}"

    @property
    def record_path(self) -> Path:
        return self.folder / f"{self.key}.json"

    def load(self) -> tuple[dict | None, str | None]:
        """(record, None) if the entry is whole; (None, why) if not, why being None when there
        is simply no entry yet."""
        try:
            st = self.image.stat()
        except FileNotFoundError:
            return None, None
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        seen = _checked.get(self.image)
        if seen and seen[0] == stamp:
            return seen[1], None
        try:
            record = json.loads(self.record_path.read_text())
        except FileNotFoundError:
            return None, "it has no record"
        except (OSError, ValueError) as err:
            return None, f"its record cannot be read ({err})"
        if not isinstance(record, dict):
            return None, "its record is not a JSON object"
        why = self.mismatch(self.image, record)
        if why:
            return None, why
        _checked[self.image] = (stamp, record)
        return record, None

    def mismatch(self, image: Path, record: dict) -> str | None:
        """Why `image` is not the image `record` describes, or None if it is."""
        size = image.stat().st_size
        why = self._not_an_image(image, size)
        if why is None and size != record.get("size"):
            why = f"its image has {size} bytes, not the {record.get('size')} recorded"
        if why is None and sha256_of(image) != record.get("sha256"):
            why = "its image does not match the recorded SHA-256"
        return why

    def _not_an_image(self, image: Path, size: int) -> str | None:
        if size == 0:
            return "its image is empty"
        with open(image, "rb") as f:
            head = f.read(len(MAGIC[self.suffix]))
        return None if head == MAGIC[self.suffix] else \
            f"its image does not start like a {self.suffix} file"

    @contextlib.contextmanager
    def locked(self):
        """Hold this entry's lock (blocking) while building it."""
        with open(self.folder / f"{self.key}.lock", "a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX)
            except OSError:  # a file system without locks: unique temporary files still keep
                pass         # every entry whole, at the cost of building it more than once
            yield

    def temporary(self) -> Path:
        """A new empty file in the cache folder, for one build (unique per thread and process)."""
        fd, path = tempfile.mkstemp(dir=self.folder, prefix=f".{self.key}.", suffix=".tmp")
        os.close(fd)
        return Path(path)

    def commit(self, built: Path, record: dict) -> dict:
        """Move the image `built` in place with its record (size and SHA-256 added); return the
        record. Raises ValueError if `built` is not a whole image."""
        size = built.stat().st_size
        why = self._not_an_image(built, size)
        if why:
            raise ValueError(why)
        record = dict(record, size=size, sha256=sha256_of(built))
        text = self.temporary()
        try:
            text.write_text(json.dumps(record))
            for path in (built, text):  # readable by all, as files written with a usual umask
                path.chmod(0o644)
            os.replace(built, self.image)
            os.replace(text, self.record_path)
        finally:
            text.unlink(missing_ok=True)
        return record


def clear_memory() -> None:
    """Forget the folders chosen and the entries checked in this process (not the files)."""
    _roots.clear()
    _checked.clear()
