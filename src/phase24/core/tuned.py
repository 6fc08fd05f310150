"""The one loader of tuned tables: a JSON file a tuning script wrote on one GPU, {"gpu": name,
"best": [entry, ...]}, read into {key(entry): value(entry)} for that GPU only ({} for any other
GPU, or when the file is missing; a damaged file says so in one line and reads as {}), once per
(file, GPU)."""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Callable


def load(path: Path, gpu_name: str, key: Callable[[dict], tuple],
         value: Callable[[dict], object]) -> dict:
    return _load(Path(path), gpu_name, key, value)


@functools.lru_cache(maxsize=None)
def _load(path: Path, gpu_name: str, key, value) -> dict:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or data.get("gpu") != gpu_name:
            return {}
        return {key(e): value(e) for e in data["best"]}
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as err:
        # a damaged table: the untuned choices, said once (this is cached per file and GPU)
        print(f"{path}: damaged tuned table ({type(err).__name__}: {err}); using the untuned "
              "choices", file=sys.stderr)
        return {}


def clear() -> None:
    """Forget every table read (after a tuning script rewrote one)."""
    _load.cache_clear()


def write(path: str | Path, gpu_name: str, source: str, entries: list[dict]) -> None:
    """A tuned table as ``load`` reads it, one entry a line (a tuning script's output)."""
    lines = ",\n".join("  " + json.dumps(e) for e in entries)
    Path(path).write_text(f'{{\n "gpu": {json.dumps(gpu_name)},\n "source": '
                          f'{json.dumps(source)},\n "best": [\n{lines}\n ]\n}}\n')
