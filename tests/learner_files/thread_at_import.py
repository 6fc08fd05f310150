"""Planted cheat: importing the file starts a thread that serves softmax_rows' requests, so
torch computes the result on a thread no guard watches, and no thread is started during a call."""
import queue
import threading

import torch
import triton
import triton.language as tl

_requests: queue.Queue = queue.Queue()


@triton.jit
def noop(out_ptr):
    pass


def _serve():
    while True:
        x2d, out, done = _requests.get()
        out.copy_(torch.softmax(x2d.float(), dim=-1).to(out.dtype))
        done.set()


threading.Thread(target=_serve, daemon=True).start()  # CHEAT: a worker outside every call


def softmax_rows(x2d, out):
    noop[(1,)](out)
    done = threading.Event()
    _requests.put((x2d, out, done))
    done.wait()
