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


def install_interpreter_tf32() -> None:
    """Make the interpreter's ``tl.dot`` of float32 operands in TF32 (Triton's default for
    float32 on a GPU) round them to TF32 first, as the tensor cores do: 10 bits of mantissa,
    to nearest. Without it the interpreter multiplies in full float32, and a kernel that would
    fail the float32 bound on a GPU (gemm/spec.py) passes on a CPU. Idempotent."""
    import numpy as np
    import triton.runtime.interpreter as interp

    builder = interp.InterpreterBuilder
    if getattr(builder.create_dot, "_phase24_tf32", False):
        return
    original = builder.create_dot

    def to_tf32(data):
        bits = (data.view(np.uint32) + np.uint32(0x1000)) & np.uint32(0xFFFFE000)
        return np.where(np.isnan(data), data, bits.view(np.float32))

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        if "TF32" in str(input_precision) and "x3" not in str(input_precision) and \
                a.data.dtype == np.float32 and b.data.dtype == np.float32:
            a = interp.TensorHandle(to_tf32(a.data), a.dtype)
            b = interp.TensorHandle(to_tf32(b.data), b.dtype)
        return original(self, a, b, d, input_precision, max_num_imprecise_acc)

    create_dot._phase24_tf32 = True
    builder.create_dot = create_dot


def install_interpreter_bool_masks() -> None:
    """Let the interpreter take a mask made with ``&`` or ``|`` (Triton 3.9's interpreter holds
    those as int32, then refuses them as masks: "mask has unsupported dtype"): each load's and
    store's mask is read as booleans, as the compiler reads an i1. Idempotent."""
    import numpy as np
    import triton.runtime.interpreter as interp

    builder = interp.InterpreterBuilder
    if getattr(builder.create_masked_load, "_phase24_bool", False):
        return
    load, store = builder.create_masked_load, builder.create_masked_store

    def as_bool(mask):
        if not isinstance(mask.data, np.ndarray) or mask.data.dtype == np.bool_:
            return mask
        return interp.TensorHandle(mask.data.astype(np.bool_), mask.dtype)

    def create_masked_load(self, ptrs, mask, other, *args, **kwargs):
        return load(self, ptrs, as_bool(mask), other, *args, **kwargs)

    def create_masked_store(self, ptrs, value, mask, *args, **kwargs):
        return store(self, ptrs, value, as_bool(mask), *args, **kwargs)

    create_masked_load._phase24_bool = True
    builder.create_masked_load = create_masked_load
    builder.create_masked_store = create_masked_store


if INTERPRETED:
    install_interpreter_numpy_fix()
    install_interpreter_tf32()
    install_interpreter_bool_masks()
