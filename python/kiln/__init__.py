"""kiln from Python: the C API (libkiln_c.so) through ctypes, on any tensor with __dlpack__.

    import numpy, kiln
    x = numpy.random.default_rng(0).standard_normal((4, 1000), dtype=numpy.float32)
    y = kiln.run("softmax", x, device="cpu")

kiln.Kernel.from_ir(text) compiles tile-IR text into a kernel that launches
on NumPy arrays (or torch tensors on "cuda") and scalars.
"""

from ._kernel import Device, Kernel, run
from ._library import KilnError

__all__ = ["Device", "Kernel", "KilnError", "run"]
