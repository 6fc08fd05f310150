"""CUDA C on a CPU: a learner's kernel (or one of the lab's SIMT rungs) compiled by the host C++
compiler against headers of its own, each CUDA thread a coroutine, every load and store checked.

    from phase24.emulator import build
    lib = build(Path("labs/starters/my_softmax.cu"))     # a CompileError says why not
    lib.kernel("softmax_f32").launch(grid, block, x, y, np.int64(m), np.int32(n), np.int64(n))

``launch`` takes CPU tensors where the kernel takes pointers, like bridge's Kernel on a GPU. It
runs every block twice (threads in order, then reversed, from the same bytes) and raises
EmulatorFault, one line, on the first race, out-of-bounds access, read of unwritten shared
memory, barrier not every thread reaches, bad warp mask, or result that depends on the order;
``counts=True`` returns what the launch did to memory (counts.py prints it). What the emulator
cannot run (Tensor Cores, TMA, clusters, inline PTX it does not know) build() refuses in one
line: those need a GPU.
"""

from phase24.emulator.build import CompileError, build, compiler
from phase24.emulator.kernel import EmulatorFault, Kernel, Library

__all__ = ["CompileError", "EmulatorFault", "Kernel", "Library", "build", "compiler",
           "load_kernel"]


def load_kernel(source, name: str, flags: tuple[str, ...] = ()) -> Kernel:
    """One kernel of a .cu file, emulated: bridge.load_kernel's counterpart on a CPU."""
    return build(source, flags).kernel(name)
