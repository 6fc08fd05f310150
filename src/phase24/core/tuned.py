"""The one loader of tuned tables. A ladder's table file holds one table per GPU it was measured
on, {"tables": [{"gpu": name, "source": how, "best": [entry, ...]}, ...]}; ``load`` reads the
table of one GPU into {key(entry): value(entry)} ({} for a GPU the file has no table for, which
then gets the ladder's untuned choices, or when the file is missing; a damaged file says so in one
line and reads as {}), once per (file, GPU). ``write`` puts one GPU's table into a file and keeps
the others' (a tuning run on an H100 leaves the H200's table as it was)."""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Callable


def load(path: Path, gpu_name: str, key: Callable[[dict], tuple],
         value: Callable[[dict], object]) -> dict:
    return _load(Path(path), gpu_name, key, value)


def _tables(data) -> list[dict]:
    """The tables of a file's JSON (a file of one GPU's table, as a tuning run writes beside its
    timings, is read as a list of one)."""
    if not isinstance(data, dict):
        raise TypeError("the file holds no JSON object")
    tables = data["tables"] if "tables" in data else [data]
    if not all(isinstance(t, dict) and isinstance(t.get("best"), list) for t in tables):
        raise TypeError("a table without its list of entries")
    return tables


@functools.lru_cache(maxsize=None)
def _load(path: Path, gpu_name: str, key, value) -> dict:
    if not path.exists():
        return {}
    try:
        for table in _tables(json.loads(path.read_text())):
            if table.get("gpu") == gpu_name:
                return {key(e): value(e) for e in table["best"]}
        return {}
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as err:
        # a damaged table: the untuned choices, said once (this is cached per file and GPU)
        print(f"{path}: damaged tuned table ({type(err).__name__}: {err}); using the untuned "
              "choices", file=sys.stderr)
        return {}


def gpus(path: Path) -> list[str]:
    """The GPUs ``path`` holds a table for ([] if it is missing or damaged)."""
    try:
        return [t.get("gpu") for t in _tables(json.loads(Path(path).read_text()))]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def clear() -> None:
    """Forget every table read (after a tuning script rewrote one)."""
    _load.cache_clear()


def write(path: str | Path, gpu_name: str, source: str, entries: list[dict]) -> None:
    """Put ``gpu_name``'s table (``entries``, made by ``source``) into the file ``path``, one
    entry a line, beside the other GPUs' tables it holds (a damaged file's are dropped)."""
    path = Path(path)
    try:
        others = [t for t in _tables(json.loads(path.read_text())) if t.get("gpu") != gpu_name]
    except (OSError, ValueError, KeyError, TypeError):
        others = []
    tables = sorted([*others, {"gpu": gpu_name, "source": source, "best": entries}],
                    key=lambda t: str(t.get("gpu")))
    text = ",\n".join(
        f'  {{"gpu": {json.dumps(t.get("gpu"))}, "source": {json.dumps(t.get("source"))}, '
        '"best": [\n' + ",\n".join("   " + json.dumps(e) for e in t["best"]) + "\n  ]}"
        for t in tables)
    path.write_text('{"tables": [\n' + text + "\n]}\n")
    clear()
