"""Nsight Compute's summaries: ncu picks each value's unit (ms or us, GB/s or TB/s, byte/block or
Kbyte/block), and the summary reads it into one unit per figure. Runs anywhere (no ncu: its CSV
is stood in for)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phase24.harness import profile

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("key,unit,scale", [
    ("duration_us", "ms", 1e3), ("duration_us", "us", 1.0), ("duration_us", "ns", 1e-3),
    ("dram_gbps", "Tbyte/s", 1e3), ("dram_gbps", "Gbyte/s", 1.0),
    ("shared_bytes_per_block", "Kbyte/block", 1e3), ("shared_bytes_per_block", "byte/block", 1.0),
])
def test_each_unit_ncu_picks_is_read_into_the_summarys_own(key, unit, scale):
    assert profile.unit_scale(key, unit) == scale


def test_a_summary_says_static_shared_memory_in_bytes(monkeypatch, tmp_path):
    names = ["Kernel Name", "gpu__time_duration.sum", "launch__shared_mem_per_block_static"]
    csv = "\n".join([",".join(f'"{n}"' for n in names), '"","ms","Kbyte/block"',
                     '"gemm_v2_t32_f32","16.49","8.19"'])
    monkeypatch.setattr(profile, "_ncu_import",
                        lambda rep, *args: csv if "raw" in args else "")
    s = profile.summarise(tmp_path / "x.ncu-rep")
    assert s["duration_us"] == pytest.approx(16490)
    assert s["shared_bytes_per_block"] == pytest.approx(8190)


def test_every_recorded_summary_is_in_the_summarys_units():
    """A committed summary whose ncu said Kbyte holds bytes, not the kilobytes as read."""
    summaries = sorted(ROOT.glob("results/*/**/profiles/*.json"))
    assert summaries
    for path in summaries:
        s = json.loads(path.read_text())
        read = s.get("units_as_read", {}).get("shared_bytes_per_block", "")
        if "[Kbyte" in read and s["shared_bytes_per_block"]:
            assert s["shared_bytes_per_block"] >= 1000, path
            assert f"{s['shared_bytes_per_block']:.0f} B |" in path.with_suffix(".md").read_text()


DETAILS = """\
  gemm_f32 (4096, 1, 1)x(512, 1, 1), Context 1, Stream 7, Device 0, CC 9.0
    Section: GPU Speed Of Light Throughput
    ----------------------- ----------- ------------
    Metric Name             Metric Unit Metric Value
    ----------------------- ----------- ------------
    Duration                         ms         7.90
    ----------------------- ----------- ------------

    INF   This workload is utilizing greater than 80.0% of the available compute or memory
          performance of the device. To further improve performance, work will likely need to be
          shifted from the most utilized to another unit.

    Section: Memory Workload Analysis
    OPT   Est. Speedup: 71.44%
          The memory access pattern for shared loads might not be optimal and causes on average a
          4.0 - way bank conflict across all 268435456 shared load requests.
    OPT   Est. Local Speedup: 11.46%
          One or more warps are waiting on a barrier.
    Memory Throughput                 %        88.50
"""


def test_each_rule_message_is_whole():
    """A rule's message runs over several lines; the summary kept only its first ("Est. Speedup:
    71.44%" and not what would speed up)."""
    assert profile.guidance(DETAILS) == [
        "INF This workload is utilizing greater than 80.0% of the available compute or memory "
        "performance of the device. To further improve performance, work will likely need to be "
        "shifted from the most utilized to another unit.",
        "OPT Est. Speedup: 71.44% The memory access pattern for shared loads might not be optimal "
        "and causes on average a 4.0 - way bank conflict across all 268435456 shared load "
        "requests.",
        "OPT Est. Local Speedup: 11.46% One or more warps are waiting on a barrier."]
