"""`doctor` says which launch the Triton rungs take on the installed Triton: the lab's direct
launch knows only the versions whose launcher it was written against; any other gets Triton's own
``kernel[grid]`` (slower per call, the same results), and doctor says so."""

from __future__ import annotations

from phase24 import doctor
from phase24.softmax.triton import common


def test_doctor_names_the_direct_launch_on_a_known_triton(monkeypatch):
    monkeypatch.setattr(common, "REPLAY_KNOWN", True)
    row = dict(doctor.report(check_ncu=False))["Triton launches (softmax)"]
    assert "direct: Triton " in row and "launcher" in row, row


def test_doctor_says_an_unknown_triton_launches_through_its_own_api(monkeypatch):
    monkeypatch.setattr(common, "REPLAY_KNOWN", False)
    monkeypatch.setattr("triton.__version__", "3.9.0")
    row = dict(doctor.report(check_ncu=False))["Triton launches (softmax)"]
    assert "Triton's own kernel[grid] on every call" in row and "not 3.9.0" in row, row
    assert "3.6.x" in row, row


def test_doctor_says_which_ladders_have_a_table_for_this_gpu(monkeypatch):
    """A GPU the committed tables were not measured on gets the untuned choices, and the
    command that tunes them; the H200 has all four."""
    import torch

    from phase24 import doctor

    assert doctor._tuned(False) == "measured on NVIDIA H200"
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "NVIDIA H200")
    assert doctor._tuned(True) == "all four for NVIDIA H200"
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "NVIDIA A10")
    said = doctor._tuned(True)
    assert said.startswith("none for NVIDIA A10 in gemm cuda, gemm triton, softmax cuda"), said
    assert "`python -m phase24 tune gemm` and `python -m phase24 tune softmax`" in said, said
