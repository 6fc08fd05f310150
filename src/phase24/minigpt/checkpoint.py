"""Checkpoints: one .npz format that the NumPy and the PyTorch model both read and write.

Keys: every parameter under its state_dict name; AdamW state as `opt.t`, `opt.m.<name>`,
`opt.v.<name>`; JSON strings under `__config__`, `__train__`, `__meta__`. No pickles.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from .config import GPTConfig, TrainConfig


def save(path, cfg: GPTConfig, params: dict, tc: TrainConfig | None = None, opt_state: dict | None = None,
         meta: dict | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {k: np.asarray(v) for k, v in params.items()}
    arrays.update({k: np.asarray(v) for k, v in (opt_state or {}).items()})
    arrays["__config__"] = np.array(cfg.to_json())
    arrays["__train__"] = np.array((tc or TrainConfig()).to_json())
    arrays["__meta__"] = np.array(json.dumps(meta or {}))
    with open(path, "wb") as f:  # a file object keeps the name exactly as given
        np.savez(f, **arrays)
    return path


class CheckpointError(ValueError):
    """The file is missing or is not a checkpoint of this format; the message is one line."""


def load(path):
    """Returns (cfg, params, train config, optimizer state or {}, meta)."""
    if not Path(path).is_file():
        raise CheckpointError(f"{path}: no such file")
    if not zipfile.is_zipfile(path):
        raise CheckpointError(f"{path}: not a MiniGPT checkpoint (not an .npz archive)")
    try:
        with np.load(path, allow_pickle=False) as z:
            cfg = GPTConfig.from_json(str(z["__config__"]))
            tc = TrainConfig.from_json(str(z["__train__"]))
            meta = json.loads(str(z["__meta__"]))
            params, opt = {}, {}
            for k in z.files:
                if k.startswith("__"):
                    continue
                (opt if k.startswith("opt.") else params)[k] = z[k]
    except Exception as err:  # a file of another kind: say so in one line, whatever numpy raised
        why = str(err).splitlines()[0][:100] if str(err) else type(err).__name__
        raise CheckpointError(f"{path}: not a MiniGPT checkpoint ({why})") from None
    return cfg, params, tc, opt, meta
