"""A mistake in a `minigpt` command is one line on stderr that names it, and exit status 2:
never a traceback (a missing or foreign checkpoint, a GPU asked for where there is none, a
device or backend that does not exist, a size the model cannot have)."""

import subprocess
import sys

import numpy as np
import pytest
import torch

from phase24.cli import main

GPU = torch.cuda.is_available()


def minigpt(capsys, *argv) -> tuple[int, list[str]]:
    rc = main(["minigpt", *argv])
    cap = capsys.readouterr()
    return rc, cap.err.strip().splitlines()


@pytest.mark.parametrize("argv,said", [
    (["sample"], "minigpt sample: --ckpt FILE is required: a checkpoint that `minigpt train` wrote"),
    (["sample", "--ckpt", "{tmp}/none.npz"], "--ckpt {tmp}/none.npz: no such file "
                                             "(`minigpt train --out FILE` writes one)"),
    (["train", "--init", "{tmp}/none.npz"], "--init {tmp}/none.npz: no such file"),
    (["train", "--corpus", "{tmp}/none.txt"], "--corpus {tmp}/none.txt: no such file"),
    (["sample", "--ckpt", "{tmp}/text.npz"], "{tmp}/text.npz: not a MiniGPT checkpoint "
                                             "(not an .npz archive)"),
    (["sample", "--ckpt", "{tmp}/other.npz"], "{tmp}/other.npz: not a MiniGPT checkpoint"),
    (["train", "--impl", "numpy", "--device", "cuda"], "--device cuda: the NumPy model runs on "
                                                       "the CPU only"),
    (["train", "--impl", "torch", "--device", "gpu"], "--device gpu: not a device (cpu, cuda or "
                                                      "cuda:N)"),
    (["train", "--n-head", "5"], "n_embd=128 is not a multiple of n_head=5"),
    (["train", "--steps", "-1"], "--steps -1: must be >= 0"),
    (["train", "--batch-size", "0"], "--batch-size 0: must be >= 1"),
    (["speed", "--backends", "torch-gpu"], "--backends: torch-gpu is not one of numpy-cpu, "
                                           "torch-cpu, torch-cuda"),
])
def test_a_mistake_is_one_line(capsys, tmp_path, argv, said):
    (tmp_path / "text.npz").write_text("not an archive\n")
    np.savez(tmp_path / "other.npz", a=np.zeros(3))
    rc, lines = minigpt(capsys, *[a.format(tmp=tmp_path) for a in argv])
    assert rc == 2 and len(lines) == 1 and said.format(tmp=tmp_path) in lines[0], lines


@pytest.mark.skipif(GPU, reason="this machine has a GPU: --device cuda runs here")
@pytest.mark.parametrize("cmd", ["train --impl torch --device cuda --preset tiny --steps 1",
                                 "sample --impl torch --device cuda --ckpt {ckpt}"])
def test_a_gpu_asked_for_on_a_cpu_machine_is_one_line(tmp_path, cmd):
    """As lab 03 shows the command: the process ends with one line, not torch's traceback."""
    ckpt = tmp_path / "c.npz"
    assert main(["minigpt", "train", "--preset", "tiny", "--steps", "0", "--out", str(ckpt),
                 "--no-progress"]) == 0
    proc = subprocess.run([sys.executable, "-m", "phase24", "minigpt",
                           *cmd.format(ckpt=ckpt).split()], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--device cuda: this machine has no CUDA GPU that torch can use" \
        in lines[0] and lines[0].endswith("run with --device cpu"), proc.stderr
