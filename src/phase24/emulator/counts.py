"""What one emulated launch did to memory, as a short table beside what an ideal kernel of the
same shape would do. Counts, not times: the emulator knows which addresses each warp-wide
instruction touched, not how long the GPU would take.

* global memory: requests (one per warp-wide load or store instruction) and the 32-byte sectors
  they touch, per request (Nsight Compute's ``l1tex__t_sectors_per_request``). The ideal is the
  fewest sectors that hold the request's bytes: 4 for a warp's 32 consecutive floats.
* shared memory: wavefronts per request, the most distinct 4-byte words any one of the 32
  banks must deliver (1 when the warp's words sit in different banks; more is a bank conflict).
  The ideal is one wavefront per 128 bytes the request moves.
* bytes: what the loads and stores asked for, against the operation's minimum (each input read
  once, each output written once); the distinct bytes touched say how much a perfect cache
  would bring in from memory.
* FLOPs: the operation's, not counted in the kernel (the emulator sees memory, not arithmetic).
"""

from __future__ import annotations

LABELS = {"global_load": "loads of", "global_store": "stores to", "shared_load": "shared loads of",
          "shared_store": "shared stores to"}


def table(counts: dict, ideal: dict, what: str) -> list[str]:
    """The lines to print for ``counts`` (kernel.launch(counts=True)'s dict). ``ideal`` gives
    "bytes", the operation's minimum per pointer parameter by name (each input read once, each
    output written once), and "flops" with "flops_words" saying how they are counted; ``what``
    is the launch in words."""
    lines = [f"counts, not times: {what}",
             f"  {'':<24}{'requests':>9}  {'per request (ideal)':<25}{'bytes':>10}"
             f"{'least bytes':>13}"]
    for space, name, requests, units, best, moved in counts["rows"]:
        unit = "sectors" if space.startswith("global") else "wavefronts"
        least = ideal["bytes"].get(name, "") if space.startswith("global") else ""
        lines.append(f"  {LABELS[space] + ' ' + name:<24}{requests:>9}  {units / requests:>5.1f} "
                     f"{unit:<10} ({best / requests:.1f}){'':<3}{moved:>10}{least:>13}")
    minimum = sum(ideal["bytes"].values())
    lines.append(f"  distinct bytes of global memory touched: {counts['unique_bytes']} (the "
                 f"operation's least: {minimum}); atomics: {counts['atomics']}")
    lines.append(f"  FLOPs of the operation (the emulator counts memory, not arithmetic): "
                 f"{ideal['flops']:.3g}, {ideal['flops_words']}; {ideal['flops'] / minimum:.2f} "
                 "per least byte")
    return lines
