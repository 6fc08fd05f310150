"""The worker's side of `check OP --file F` (harness/decide.py is the grader's): tensors as files,
and the loop that answers the grader's requests, one call of the learner's file each."""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch

from phase24.core.dtypes import DTYPES, NAME
from phase24.core.outputs import storage_bytes


def cuda_lost() -> bool:
    """Whether this process's CUDA context is lost (a fault left it unusable)."""
    try:
        torch.cuda.synchronize()
        return False
    except Exception:
        return True


def write_tensor(x: torch.Tensor, path: Path) -> dict:
    """x's whole storage as bytes in ``path``; what read_tensor needs to rebuild x (a view too)."""
    storage_bytes(x).cpu().numpy().tofile(path)
    return {"path": str(path), "dtype": NAME[x.dtype], "shape": list(x.shape),
            "stride": list(x.stride()), "offset": x.storage_offset(),
            "nbytes": x.untyped_storage().nbytes()}


def read_tensor(meta: dict, device: str = "cpu") -> torch.Tensor:
    """The tensor write_tensor wrote, on ``device``, a copy of the file's bytes."""
    raw = torch.from_file(meta["path"], shared=False, size=meta["nbytes"], dtype=torch.uint8)
    flat = raw.to(device, copy=True).view(DTYPES[meta["dtype"]])
    return flat.as_strided(meta["shape"], meta["stride"], meta["offset"])


def serve(fn, dtypes: list[str], notes: list, device: str, send, tampered) -> int:
    """Load done: say which dtypes the file covers, then answer requests until stdin ends."""
    from phase24.core.outputs import guarded
    from phase24.harness.check import short_error

    import __main__

    requests = os.fdopen(getattr(__main__, "REQUESTS_FD", 0), "r")
    send(loaded=True, dtypes=dtypes, notes=notes)
    for line in requests:
        ask = json.loads(line)
        try:
            inputs = [read_tensor(m, device) for m in ask["inputs"]]
            buf, out = guarded(ask["shape"], DTYPES[ask["dtype"]], device, ask["poison"])
            fn(*inputs, out=out)
            if device == "cuda":
                torch.cuda.synchronize()
            reply = {"done": ask["id"],
                     "buf": write_tensor(buf, Path(ask["folder"]) / "buf.bin"),
                     "after": [write_tensor(x, Path(ask["folder"]) / f"after{i}.bin")
                               for i, x in enumerate(inputs)]}
        except (Exception, KeyboardInterrupt) as err:  # the file's error: said in one line
            reply = {"error": ask["id"], "why": short_error(err)}
            if device == "cuda" and cuda_lost():
                reply["lost"] = True
        if tampered():  # the file changed the grader's code: the check stops there
            send(fatal=tampered(), fatal_for=ask["id"])
            return 0
        send(**reply)
        if reply.get("lost"):
            os._exit(0)  # no teardown: it would wait on, or fault in, the lost context
    return 0
