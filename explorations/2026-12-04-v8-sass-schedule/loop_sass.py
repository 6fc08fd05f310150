"""Each bfloat16 v8 kernel's main loop in a cubin, read from its SASS (no GPU): the loop is the
backward branch whose body holds the most HMMA; for it, the instructions, the sum of their static
stall counts (bits 41-44 of each instruction's second word: the cycles the warp waits before
issuing its next instruction), and the HMMA, LDSM and LDGSTS among them.

    python3 loop_sass.py CUBIN CUOBJDUMP
"""
import re
import subprocess
import sys


def sass(cuobjdump: str, cubin: str, name: str = "") -> list[str]:
    args = [cuobjdump, "-sass", *(["-fun", name] if name else []), cubin]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout.splitlines()


def instructions(lines: list[str]) -> list[tuple[int, int, str]]:
    """(address, stall count, text) of each instruction."""
    out = []
    for i, line in enumerate(lines):
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);\s+/\* (0x[0-9a-f]+) \*/", line)
        if m:
            high = int(re.search(r"/\* (0x[0-9a-f]+) \*/", lines[i + 1])[1], 16)
            out.append((int(m[1], 16), (high >> 41) & 0xF, m[2]))
    return out


def main(cubin: str, cuobjdump: str) -> None:
    names = re.findall(r"Function : (\S+)", "\n".join(sass(cuobjdump, cubin)))
    for name in (n for n in names if n.endswith("_bf16")):
        code = instructions(sass(cuobjdump, cubin, name))
        loops = []
        for addr, _, text in code:
            m = re.search(r"BRA (?:\S+, )?0x([0-9a-f]+)", text)
            if m and int(m[1], 16) < addr:
                body = [x for x in code if int(m[1], 16) <= x[0] <= addr]
                loops.append((sum("HMMA" in x[2] for x in body), body))
        hmma, body = max(loops, key=lambda loop: loop[0])
        count = lambda op: sum(op in x[2] for x in body)  # noqa: E731
        stalls = sum(x[1] for x in body)
        print(f"{name}: {len(body)} instructions, {stalls} stall cycles, {hmma} HMMA, "
              f"{count('LDSM')} LDSM, {count('LDGSTS')} LDGSTS; per HMMA {len(body) / hmma:.2f} "
              f"instructions, {stalls / hmma:.2f} cycles")


if __name__ == "__main__":
    main(*sys.argv[1:3])
