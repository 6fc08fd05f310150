"""Planted cheat: softmax_rows launches a no-op kernel, then leaves the work to a thread that
torch's guard of the calling thread does not see; it writes out a little later."""
import threading
import time

import torch
import triton
import triton.language as tl


@triton.jit
def noop(out_ptr):
    pass


def _later(x2d, out):
    time.sleep(0.05)
    out.copy_(torch.softmax(x2d.float(), dim=-1).to(out.dtype))


def softmax_rows(x2d, out):
    noop[(1,)](out)
    threading.Thread(target=_later, args=(x2d, out)).start()  # CHEAT: work left on a thread
