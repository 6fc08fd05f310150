"""scripts/tune.py's bookkeeping on a CPU, with a fake operation and ladder (the timer, the check
and the provenance stubbed): which shapes it times, which it copies from --rest-from, and that
--only keeps the other rungs' timings of a re-timed shape, so the best of both is the table's."""

from __future__ import annotations

import importlib.util
import json
import types
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]


def tune_module():
    spec = importlib.util.spec_from_file_location("tune_script", ROOT / "scripts" / "tune.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SHAPES = [(64, 64, 64), (1, 64, 64)]


def fake_op():
    return types.SimpleNamespace(
        implementations=lambda: {"cublas": lambda a, b: a @ b}, shape_fields=("M", "N", "K"),
        bench_dtypes=("float32", "bfloat16"), shapes=lambda: SHAPES, few_shapes=[(1, 64, 64)],
        make_inputs=lambda shape, dtype: (torch.ones(shape[0], shape[2]),
                                          torch.ones(shape[2], shape[1])),
        bytes_moved=lambda shape, dtype: 1000)


def fake_ladder(timed: list):
    def candidates(a, b, only=None):
        def fn(kind):
            return lambda x, y, out: timed.append((kind, tuple(a.shape)))
        return [({"kind": k, "config": [1]}, fn(k)) for k in ("v8", "v9")
                if only is None or k in only]
    return types.SimpleNamespace(candidates=candidates)


def old_run(tmp_path) -> str:
    shape = lambda dt, m, best, all_: {"dtype": dt, "M": m, "N": 64, "K": 64, "best": best,
                                       "all": all_}
    v7 = {"kind": "v7", "config": [2], "us": 5.0}
    v9_old = {"kind": "v9", "config": [1], "us": 50.0}
    run = {"commit": "abc1234", "shapes": [shape("float32", 64, v7, [v7, v9_old]),
                                           shape("bfloat16", 64, v7, [v7])]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(run))
    return str(path)


def stubbed(monkeypatch):
    import phase24.core.provenance as provenance
    import phase24.core.timing as timing
    import phase24.harness.bench as bench

    monkeypatch.setattr(timing, "copy_gbps", lambda: 4000.0)
    monkeypatch.setattr(timing, "flushed_us", lambda fn, **kw: 20.0)  # every call: 20 us
    monkeypatch.setattr(bench, "verify", lambda op, out, inputs: None)
    monkeypatch.setattr(provenance, "stamp", lambda: {"gpu": "fake", "commit": "test"})


def test_only_with_rest_from_keeps_the_other_rungs_and_copies_the_shapes_not_timed(
        monkeypatch, tmp_path):
    tune = tune_module()
    stubbed(monkeypatch)
    timed = []
    run = tune.tune(fake_op(), fake_ladder(timed), str(tmp_path / "new.json"), 0,
                    old_run(tmp_path), ["v9"], False, ["float32"])
    # only v9, only float32, every float32 shape
    assert timed == [("v9", (64, 64)), ("v9", (1, 64))]
    by = {(e["dtype"], e["M"]): e for e in run["shapes"]}
    assert set(by) == {("float32", 64), ("float32", 1), ("bfloat16", 64)}  # not (bf16, 1)
    new64 = by[("float32", 64)]
    kinds = [(t["kind"], "from" in t) for t in new64["all"]]
    assert kinds == [("v9", False), ("v7", True)]  # old v9 dropped, old v7 kept and marked
    assert new64["best"]["kind"] == "v7"  # 5 us, kept from the older run, beats v9's 20 us
    assert by[("bfloat16", 64)]["from"].startswith(str(tmp_path / "old.json"))
    assert json.loads((tmp_path / "new.json").read_text())["shapes"] == run["shapes"]


def test_a_run_cut_short_keeps_the_old_runs_shapes_it_did_not_reach(monkeypatch, tmp_path):
    """A tuning step stopped by its time limit leaves a file --from can make a whole table of:
    the shapes timed, then --rest-from's entries for every shape not reached."""
    tune = tune_module()
    stubbed(monkeypatch)
    timed = []
    ladder = fake_ladder(timed)
    every = ladder.candidates

    def candidates(a, b, only=None):
        if a.shape[0] == 1:
            raise SystemExit("the step's time limit")  # killed while timing (1, 64, 64)
        return every(a, b, only)
    ladder.candidates = candidates
    out = tmp_path / "new.json"
    try:
        tune.tune(fake_op(), ladder, str(out), 0, old_run(tmp_path), None, False, None)
    except SystemExit:
        pass
    shapes = json.loads(out.read_text())["shapes"]
    assert [(e["dtype"], e["M"], "from" in e) for e in shapes] == \
        [("float32", 64, False), ("bfloat16", 64, True)]
