"""Triton's interpreter where there is no GPU, with nothing to set by hand, and one launch at a
time in it.

Triton chooses between compiling and interpreting when it is first imported, from the variable
TRITON_INTERPRET. A process that has no CUDA GPU and has not set the variable gets
TRITON_INTERPRET=1 when it imports this module, which every Triton ladder of the lab imports
before triton. ``INTERPRETED`` says which was chosen.

Triton's interpreter is not thread-safe: it keeps the program id and its patches of
triton.language in globals for the length of a launch, so two threads interpreting at once fail
(InterpreterError), write wrong values or corrupt the heap. Every interpreted launch of the lab
runs inside ``with interpreted():``.
"""

import os
import threading

import torch

if "TRITON_INTERPRET" not in os.environ and not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"

import triton  # noqa: E402


@triton.jit
def _probe():
    pass


INTERPRETED = type(_probe).__name__ == "InterpretedFunction"
_LOCK = threading.RLock()


def interpreted():
    """``with interpreted():`` runs the block with no other thread in Triton's interpreter."""
    return _LOCK


def install_interpreter_numpy_fix() -> None:
    """Let Triton 3.6's interpreter take runtime ints as loop bounds under NumPy >= 2.4.

    The interpreter holds every scalar as a 1-element array and converts it with ``int(array)``,
    which NumPy 2.4 refuses ("only 0-dimensional arrays can be converted to Python scalars"), so
    ``for i in range(n)`` with a kernel argument ``n`` fails there. This wraps the interpreter's
    patching of ``tl.tensor`` so that ``__index__`` reads the single element instead. Idempotent.
    """
    import triton.runtime.interpreter as interp

    if getattr(interp._patch_lang_tensor, "_phase24_fix", False):
        return
    original = interp._patch_lang_tensor

    def patched(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    patched._phase24_fix = True
    interp._patch_lang_tensor = patched


if INTERPRETED:
    install_interpreter_numpy_fix()
