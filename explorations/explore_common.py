"""What the exploration scripts share: the long-row shapes, and one shape's check-then-time loop.

A candidate is checked first with the lab's own checker (harness.check.compare against the
float64 reference, on the whole output); a wrong or failing one is reported, not timed. Times are
the bench's (harness time_us), in percent of the copy bandwidth measured in the same run.
GPU only; the scripts import this module from their own folder.
"""
import torch

from phase24.harness.bench import time_us
from phase24.harness.check import compare
from phase24.softmax import softmax_reference

# The bulk long-row shapes of the standard sweep and two few-row ones, as "dtype:MxN".
LONG = ["float32:4096x65536", "float32:2048x131072", "float32:1024x262144",
        "bfloat16:8192x32768", "bfloat16:4096x65536", "bfloat16:2048x131072",
        "bfloat16:1024x262144", "float32:64x262144", "bfloat16:64x262144",
        "float32:8x131072", "bfloat16:8x131072"]


class Shape:
    """One "dtype:MxN" spec: a random input (times 3), its float64 reference, and ``row``, the
    runs recorded so far (a dict ready for the script's JSON)."""

    def __init__(self, spec: str, copy_gbps: float, width: int = 60):
        self.dt, mn = spec.split(":")
        self.m, self.n = map(int, mn.split("x"))
        self.dtype = getattr(torch, self.dt)
        self.x = torch.randn(self.m, self.n, device="cuda", dtype=self.dtype) * 3
        self.ref = softmax_reference(self.x)
        self.nbytes = 2 * self.x.numel() * self.x.element_size()
        self.copy = copy_gbps
        self.width = width
        self.row = {"dtype": self.dt, "M": self.m, "N": self.n, "runs": []}
        print(spec, flush=True)

    def record(self, label: str, fn, note=None, out: torch.Tensor | None = None) -> None:
        """Check ``fn()`` against the reference, then time it. ``fn`` returns the output, or
        writes ``out`` (filled with NaN before the checked call) and returns None; ``note()``,
        if given, adds a few words to the printed line and the record."""
        try:
            if out is not None:
                out.fill_(float("nan"))
            y = fn()
            torch.cuda.synchronize()
            bad = compare(out if y is None else y, self.ref, self.dtype)[3]
        except Exception as exc:  # report, go on
            bad = f"{type(exc).__name__}: {str(exc)[:300]}"
        if bad:
            print(f"  {label:{self.width}s} WRONG/FAILED: {bad}", flush=True)
            self.row["runs"].append({"label": label, "wrong": bad})
            return
        us = time_us(fn, warmup_ms=10, rep_ms=40)
        pct = 100 * self.nbytes / us / 1e3 / self.copy
        run = {"label": label, "us": us, "pct_copy": pct}
        text = ""
        if note is not None:
            run["note"] = text = note()
        print(f"  {label:{self.width}s} {us:9.2f} us {pct:5.1f}% {text}", flush=True)
        self.row["runs"].append(run)


def launch_info(x: torch.Tensor, plan, sms: int) -> str:
    """For a plan `triton` has launched on x: the kernel that ran, its grid, and whether a
    program gave up waiting (the abort flag of the lagged and ring kernels' workspace)."""
    from phase24.softmax import triton_impls as T

    for key, launcher in T._LAUNCHERS.items():
        if key[3] == x.shape and key[-1] == plan:
            for steps, ws in launcher.bound.values():
                grid = steps[0].grid[0]
                gave_up = ws is not None and int(ws[0].item()) != 0
                return (f"{steps[0].fn.__name__}, grid {grid} ({grid / sms:.1f}/SM)"
                        + (" GAVE UP" if gave_up else ""))
    return ""


def start(argv: list[str]) -> tuple:
    """How the plan explorations begin: (the OUT.json path, the --only substring, the copy
    bandwidth measured now, the number of SMs, the result dict they fill); prints the first two
    figures."""
    from phase24.harness.bench import copy_gbps

    only = argv[argv.index("--only") + 1] if "--only" in argv else ""
    copy = copy_gbps()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"copy {copy:.0f} GB/s, {sms} SMs", flush=True)
    return argv[1], only, copy, sms, {"copy_gbps": copy, "gpu": torch.cuda.get_device_name(),
                                      "shapes": []}


def record_plans(shape: Shape, plans: list, sms: int) -> None:
    """Each of `triton`'s plans, forced, on the shape's input: checked, then timed, with the
    kernel that ran and its grid."""
    from phase24.softmax import triton_impls as T

    x = shape.x
    for plan in plans:
        shape.record(plan.describe(shape.n), lambda plan=plan: T.triton_softmax(x, plan=plan),
                     lambda plan=plan: launch_info(x, plan, sms))
