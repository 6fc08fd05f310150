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

# (label, key of the counts, unit, key of the operation's minimum bytes)
ROWS = [("global loads", "global_load", "sectors", "load_bytes"),
        ("global stores", "global_store", "sectors", "store_bytes"),
        ("shared loads", "shared_load", "wavefronts", None),
        ("shared stores", "shared_store", "wavefronts", None)]


def table(counts: dict, ideal: dict, what: str) -> list[str]:
    """The lines to print for ``counts`` (kernel.launch(counts=True)'s dict); ``ideal`` gives
    the operation's "load_bytes", "store_bytes" and "flops", ``what`` the launch in words."""
    lines = [f"counts, not times: {what}",
             f"  {'':<14}{'requests':>10}  {'per request (ideal)':<26}{'bytes':>12}"
             f"{'ideal bytes':>13}"]
    for label, key, unit, least in ROWS:
        requests, units, best, moved = counts[key]
        if not requests:
            continue
        lines.append(f"  {label:<14}{requests:>10}  {units / requests:>5.1f} {unit:<10} "
                     f"({best / requests:.1f}){'':<5}{moved:>12}{ideal[least] if least else '':>13}")
    minimum = ideal["load_bytes"] + ideal["store_bytes"]
    lines.append(f"  distinct bytes of global memory touched: {counts['unique_bytes']} (the "
                 f"operation's minimum: {minimum}); atomics: {counts['atomics']}")
    lines.append(f"  FLOPs of the operation: {ideal['flops']:.3g} ({ideal['flops_words']}; not "
                 f"counted in the kernel), {ideal['flops'] / minimum:.2f} FLOP per byte at the "
                 "minimum")
    return lines
