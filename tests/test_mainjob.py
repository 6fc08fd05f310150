"""The main job's order on a GPU: the MiniGPT report runs in a process of its own beside the
checks, and is waited for (its output shown whole) before the first benchmark."""

from types import SimpleNamespace

import pytest

from phase24.harness import mainjob


class RecordingParser:
    """Stands for the CLI's parser: each step notes its name in `order` and passes."""

    def __init__(self, order: list[str]):
        self.order = order

    def parse_args(self, argv):
        name = " ".join(argv)
        return SimpleNamespace(fn=lambda _: self.order.append(name) or 0)


@pytest.fixture
def gpu_steps(monkeypatch):
    """A GPU's steps, with `doctor --no-ncu` (quick, runs anywhere) as the step run beside."""
    def use(beside_argv):
        monkeypatch.setattr(mainjob, "BESIDE", {beside_argv[0]})
        monkeypatch.setattr(mainjob, "_gpu_name", lambda: "a test GPU")
        monkeypatch.setattr(mainjob, "steps", lambda gpu: [
            ("build", ["build"]), ("beside", beside_argv), ("check a", ["check", "a"]),
            ("check b", ["check", "b"]), ("bench a", ["bench", "a"]), ("bench b", ["bench", "b"])])
    return use


def test_the_step_beside_runs_during_the_checks_and_ends_before_the_benchmarks(gpu_steps, capsys):
    gpu_steps(["doctor", "--no-ncu"])
    order = []
    assert mainjob.run(RecordingParser(order), True) == 0
    assert order == ["build", "check a", "check b", "bench a", "bench b"]  # beside: not in-process
    text = capsys.readouterr().out
    started, report = text.index("=== beside: python -m phase24 doctor"), text.index("│ python ")
    assert text.index("=== check a") > started
    assert text.index("=== check b") < report < text.index("=== beside: passed") < text.index("=== bench a")
    summary = text[text.index("=== summary"):]
    assert "beside (beside the checks)" in summary and "6 of 6 steps passed" in summary


def test_a_step_beside_that_fails_fails_the_main_job(gpu_steps, capsys):
    gpu_steps(["results", "nosuch"])
    assert mainjob.run(RecordingParser([]), True) == 1
    text = capsys.readouterr().out
    assert "unknown operation 'nosuch'" in text and "=== beside: FAILED (exit 1)" in text
    assert "5 of 6 steps passed, 1 failed" in " ".join(text.split())


def test_on_a_gpu_minigpt_comes_before_the_checks_and_every_check_before_every_bench(monkeypatch):
    monkeypatch.setattr(mainjob, "_build_for_this_gpu", lambda: [("build", ["build", "--arch", "x"])])
    verbs = [argv[0] for _, argv in mainjob.steps_with_build(True)]
    assert verbs.index("minigpt") < verbs.index("check")
    assert max(i for i, v in enumerate(verbs) if v == "check") < verbs.index("bench")
    assert "minigpt" in mainjob.BESIDE
