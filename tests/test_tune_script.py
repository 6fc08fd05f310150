"""scripts/tune.py's bookkeeping on a CPU, with a fake operation and ladder (the timer, the check
and the provenance stubbed): which shapes it times, which it copies from --rest-from, and that
--only keeps the other rungs' timings of a re-timed shape, so the best of both is the table's."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
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


def test_a_table_file_keeps_one_table_per_gpu(tmp_path):
    """core/tuned: writing one GPU's table leaves the other GPUs' as they were; each GPU reads
    its own, a GPU without one reads nothing (its untuned choices)."""
    from phase24.core import tuned

    path, key, value = tmp_path / "t.json", (lambda e: e["N"]), (lambda e: e["kind"])
    tuned.write(path, "NVIDIA H200", "run 1", [{"N": 128, "kind": "v4"}])
    tuned.write(path, "NVIDIA H100 80GB HBM3", "run 2", [{"N": 128, "kind": "v6"}])
    assert tuned.gpus(path) == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    assert tuned.load(path, "NVIDIA H200", key, value) == {128: "v4"}
    assert tuned.load(path, "NVIDIA H100 80GB HBM3", key, value) == {128: "v6"}
    assert tuned.load(path, "NVIDIA A100-SXM4-80GB", key, value) == {}
    tuned.write(path, "NVIDIA H100 80GB HBM3", "run 3", [{"N": 256, "kind": "v2"}])
    assert tuned.load(path, "NVIDIA H100 80GB HBM3", key, value) == {256: "v2"}
    assert tuned.load(path, "NVIDIA H200", key, value) == {128: "v4"}


def test_every_committed_table_is_per_gpu_and_names_its_gpus():
    from phase24.core import tuned
    from phase24.gemm.cuda import launchers as gemm_cuda
    from phase24.gemm.triton import common as gemm_triton
    from phase24.softmax.cuda import launchers as softmax_cuda
    from phase24.softmax.triton import best as softmax_triton

    for path in (gemm_cuda.TUNED_FILE, gemm_triton.TABLE, softmax_cuda.TUNED_FILE,
                 softmax_triton.TABLE):
        assert "NVIDIA H200" in tuned.gpus(path), path


def test_tune_says_in_one_line_that_it_needs_a_gpu_and_skips():
    proc = subprocess.run([sys.executable, "-m", "phase24", "tune", "gemm"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr  # the pages' GPU commands
    assert proc.stdout.startswith("No GPU here: tuning times gemm's rungs") and \
        proc.stdout.count("\n") == 1, proc.stdout


def test_tune_times_each_ladder_then_puts_its_table_beside_the_other_gpus(tmp_path,
                                                                         monkeypatch, capsys):
    """`tune OP` (harness/tune.py) with a stand-in GPU and a stand-in for the script: each ladder
    is timed under out/tune/, then its run goes into the ladder's own table; a ladder that fails
    leaves its table and makes the status 1."""
    import argparse

    import torch

    from phase24.harness import tune

    calls = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(tune.subprocess, "run", lambda argv, cwd: calls.append(argv[2:]) or
                        argparse.Namespace(returncode=int("triton" in argv and len(calls) == 3)))
    rc = tune.run(argparse.Namespace(op="softmax", ladder=None, out=str(tmp_path)))
    timings = tmp_path / "tune"
    assert calls[:2] == [["softmax", "cuda", str(timings / "softmax-cuda.json")],
                         ["softmax", "cuda", "--from", str(timings / "softmax-cuda.json"),
                          str(tune.table("softmax", "cuda"))]]
    assert calls[2] == ["softmax", "triton", str(timings / "softmax-triton.json")]
    assert len(calls) == 3 and rc == 1  # triton's timing failed: its table is not touched
    said = capsys.readouterr().out
    assert "NVIDIA H100 80GB HBM3's table written" in said and "not tuned: triton" in said, said
